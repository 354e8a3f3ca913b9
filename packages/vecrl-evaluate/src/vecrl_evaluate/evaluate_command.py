"""What ``vecrl evaluate`` does once its arguments are parsed (``vecrl_evaluate.cli``): make the env, score
random policies with ``evaluate``, print the rate, save what was asked."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

import vecrl
from vecrl.cli import ProgressBar
from vecrl.command import CommandError, checked_device_option, first_line, make_env_or_fail, warm_up
from vecrl.interrupts import raise_if_ctrl_c_pressed
from vecrl.randomize import params_table, scale
from vecrl_evaluate.command_options import evaluate_options, ray_executor
from vecrl_evaluate.evaluate_workers import checked_num_workers, workers_of
from vecrl_evaluate.evaluation import EvaluationResult, evaluated
from vecrl_evaluate.options import EvaluateOptions, default_num_envs
from vecrl_evaluate.plan import PolicyMismatch, checked_plan
from vecrl_policy.normalization import ObsNorm, checked_obs_norm
from vecrl_policy.observations import flat_observation_length
from vecrl_policy.parser import NetParsingError
from vecrl_policy.policy import Policy


def run(args: argparse.Namespace) -> int:
    """Run ``vecrl evaluate`` with the parsed ``args``; its exit status."""
    device = checked_device_option(args.device)
    obs_norm = None if args.obs_norm is None else _load_obs_norm(args.obs_norm)
    num_envs = args.num_envs or default_num_envs(args.popsize, env_name=args.env)
    env = make_env_or_fail(vecrl.make_vector_env, args.env, num_envs=num_envs, num_episodes=args.episodes)
    try:
        obs_length = flat_observation_length(env.single_observation_space)
        try:
            policy = Policy.for_env(args.policy, env)
        except (NetParsingError, TypeError, ValueError) as error:
            raise CommandError(f"bad --policy: {str(error).splitlines()[0]}") from error
        if obs_norm is not None:
            try:
                checked_obs_norm(obs_norm, obs_length)
            except ValueError as error:
                raise CommandError(f"--obs-norm {args.obs_norm}: {error}") from error
        generator = torch.Generator().manual_seed(args.seed)
        try:
            population = args.sigma * torch.randn(args.popsize, policy.parameter_length, generator=generator)
            population = population if device is None else population.to(device)
        except (RuntimeError, MemoryError) as error:  # torch's allocator says RuntimeError
            size = args.popsize * policy.parameter_length * 4 / 2**30
            raise CommandError(
                f"--popsize {args.popsize}: {args.popsize:,} rows of {policy.parameter_length} parameters need"
                f" {size:,.1f} GiB, which this machine could not allocate; give a smaller --popsize"
            ) from error
        if not torch.isfinite(population).all():  # (evaluate would blame the rows, which the user never gave)
            raise CommandError(
                f"--sigma {args.sigma:g}: random parameters that large overflow float32 (to inf); give a --sigma"
                f" below {torch.finfo(torch.float32).max / 10:.0e}"
            )
        randomize = checked_randomize(args.randomize, env, args.env)
        executor, num_workers = None, args.workers
        if num_workers is not None and num_workers > 1 and args.ray is None:
            try:
                checked_num_workers(num_workers, env)
            except ValueError as error:
                raise CommandError(f"--workers {num_workers}: {str(error).splitlines()[0]}") from error
        try:
            options = EvaluateOptions(**evaluate_options(vars(args)), obs_norm=obs_norm, randomize=randomize)
            checked_plan(policy, env, population, options, start_workers=False)
        except PolicyMismatch as error:
            raise CommandError(f"bad --policy for {args.env}: {first_line(error)}") from error
        except (TypeError, ValueError) as error:
            raise CommandError(f"{args.env}: {first_line(error)}") from error
        if args.ray is not None:
            executor, num_workers = ray_executor(args.ray or None, args.workers), None
        options = replace(options, executor=executor, num_workers=num_workers)
        try:
            warm_up(env, args.env, args.seed)  # the first reset and step may compile (jax): not timed
            if num_workers is not None and num_workers > 1:
                _start_workers(env, min(num_workers, args.popsize))  # not timed either: said apart
            bar = ProgressBar(args.popsize)
            done: list[int | None] = [None]  # the rows done so far (None: the rows have not started)

            def progress(rows: int) -> None:
                if done[0] is None:  # (the first word from the rows: they run, past any compile)
                    print(f"{args.env}: evaluating {args.popsize} rows ...", file=sys.stderr, flush=True)
                done[0] = rows
                bar.update(rows)
                raise_if_ctrl_c_pressed()

            start = time.perf_counter()
            try:
                result = evaluated(policy, env, population, options, progress)
            except ValueError as error:  # (what the rows do: non-finite actions, say)
                raise CommandError(f"{args.env}: {first_line(error)}") from error
            except KeyboardInterrupt:
                raise KeyboardInterrupt(
                    f"after {done[0] or 0} of {args.popsize} rows; nothing was saved"
                ) from None
            finally:
                bar.close()
            elapsed = time.perf_counter() - start
        finally:
            if executor is not None:
                executor.close()
    finally:
        env.close()
    if obs_norm is not None:
        torch.save(obs_norm.state_dict(), args.obs_norm)
    if args.out is not None:
        _write_results(result, args.out)
    returns = result.mean_return
    env_steps = int(result.steps.sum())
    compiled = ""
    if result.compile_seconds > 0:  # (a jax env's first call of a configuration: not part of the rate)
        elapsed = max(elapsed - result.compile_seconds, 1e-9)
        compiled = f"compiled in {result.compile_seconds:.1f} s, then "
    print(
        f"{args.env}: {args.popsize} policies x {args.episodes} episode(s): mean return {returns.mean():.2f},"
        f" std {returns.std(unbiased=False):.2f}, best {returns.max():.2f};"
        f" {compiled}{env_steps:,} env-steps in {elapsed:.2f} s = {env_steps / elapsed:,.0f} env-steps/s"
        f" ({result.path} path)"
    )
    return 0


def checked_randomize(ranges: list[Any] | None, env: Any, env_name: str) -> scale | None:
    """The sampler of ``--randomize`` words (``vecrl.command.scale_range``'s), None for none; a CommandError
    where ``env`` (made from ``env_name``) does not let those parameters vary."""
    if not ranges:
        return None
    sampler = scale(dict(ranges))
    defaults = getattr(env.unwrapped, "default_params", None) or {}
    try:
        params_table(sampler, defaults, [0], 1, env_name)
    except (TypeError, ValueError, NotImplementedError) as error:
        raise CommandError(f"--randomize: {first_line(error)}") from error
    return sampler


def _start_workers(env: Any, num_workers: int) -> None:
    """Start ``evaluate``'s worker processes for ``env`` now, saying how long they took, so that the rate
    printed after the call is that of evaluating."""
    start = time.perf_counter()
    print(
        f"starting {num_workers} workers (this process and {num_workers - 1} more) ...", end=" ", flush=True
    )
    workers_of(env, num_workers).wait_ready()
    print(f"ready in {time.perf_counter() - start:.1f} s", flush=True)


def _load_obs_norm(path: Path) -> ObsNorm:
    """The statistics saved at ``path`` by an earlier ``--obs-norm``, or new ones if there is no file."""
    if not path.exists():
        return ObsNorm()
    try:
        return ObsNorm.from_state_dict(torch.load(path, weights_only=True))
    except Exception as error:
        raise CommandError(
            f"--obs-norm {path}: not observation statistics saved by vecrl evaluate ({str(error).splitlines()[0]});"
            " give another path to start new ones"
        ) from error


def _write_results(result: EvaluationResult, path: Path) -> None:
    """Each row's results as CSV or JSON (by ``path``'s suffix)."""
    columns = {
        "row": list(range(len(result.total_return))),
        "mean_return": result.mean_return.tolist(),
        "total_return": result.total_return.tolist(),
        "episodes": result.episodes.tolist(),
        "steps": result.steps.tolist(),
    }
    rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    try:
        with open(path, "w", newline="") as file:
            if path.suffix.lower() == ".json":
                json.dump(rows, file, indent=1)
            else:
                writer = csv.DictWriter(file, fieldnames=list(columns))
                writer.writeheader()
                writer.writerows(rows)
    except OSError as error:
        raise CommandError(f"--out {path}: {error.strerror}") from error
