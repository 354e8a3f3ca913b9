"""Worker processes against one process, in one run, as ratios, with the load average printed.

  stepping   ProcessVectorEnv(num_workers=2) against vecrl's SyncVectorEnv and gymnasium's AsyncVectorEnv
             (max_concurrency = the cores), env-steps/s with random actions and empty_info, at
             CartPole-v1 x 256 and 16, Hopper-v5 and HalfCheetah-v5 x 16 and 64. AsyncVectorEnv starts
             one process per sub-env, so it is left out above ASYNC_MAX_ENVS sub-envs: 256 CartPole
             processes on 2 cores (load average 240) did not finish starting within minutes
  evaluate   evaluate(policy, env, 256 MLPs, num_workers=2) against evaluate(...) in one process, one
             episode each, after one call that starts the workers (its time is printed apart); both
             ways evaluate the same seeds, and the ratio is that of their summed times (the spread of
             the per-seed ratios printed with it). "longer half last": the last 128 rows act gently
             (parameters x 0.1) and their Hopper episodes run about 4x longer, so that a fixed split
             of the population (the first half here, the second in the worker) would leave this
             process idle most of the call; processes pulling rows as their sub-envs free up do not.
             Measured beside them, "hindsight split": the same rows split in two halves of equal
             env-steps (known from the one-process call), this process running one half and another
             process the other at once, each on an env of the size evaluate gives a process: how fast
             two processes go when no row is handed out and the work is balanced in hindsight

Targets on a quiet 2-core machine: Hopper-v5 x 64 >= 1.6x sync, CartPole-v1 x 256 >= 1.3x, evaluate of
Hopper-v5 >= 1.7x. Where workers cannot win (few cheap sub-envs: CartPole-v1 x 16), num_workers="auto"
keeps the sync env.

    python bench/gym_workers.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import time
from multiprocessing.connection import Connection

import gymnasium as gym
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.evaluate_workers import STARTED_SHARE
from vecrl_evaluate.options import EvaluateOptions, RowSettings
from vecrl_evaluate.randomness import row_seeds
from vecrl_evaluate.row_loop import run_rows
from vecrl_evaluate.threads import one_torch_thread
from vecrl_gym import ProcessVectorEnv, SyncVectorEnv
from vecrl_policy import Policy
from vecrl_policy.observations import observation_flattener

STEPPING = [
    ("CartPole-v1", 256),
    ("CartPole-v1", 16),
    ("Hopper-v5", 16),
    ("Hopper-v5", 64),
    ("HalfCheetah-v5", 16),
    ("HalfCheetah-v5", 64),
]


ASYNC_MAX_ENVS = 64


def stepping_rate(env, num_envs: int, steps: int) -> float:
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = env.action_space.sample()
    env.step(actions)
    start = time.perf_counter()
    for _ in range(steps):
        env.step(actions)
    return steps * num_envs / (time.perf_counter() - start)


def measure_stepping(env_id: str, num_envs: int, repeats: int, steps: int) -> None:
    makers = [lambda: gym.make(env_id)] * num_envs
    envs = {
        "sync": SyncVectorEnv(makers, empty_info=True),
        "workers": ProcessVectorEnv(makers, num_workers=2, empty_info=True),
    }
    if num_envs <= ASYNC_MAX_ENVS:
        envs["gymnasium async"] = gym.vector.AsyncVectorEnv(makers, max_concurrency=os.cpu_count())
    best = {name: 0.0 for name in envs}
    for _ in range(repeats):
        for name, env in envs.items():
            best[name] = max(best[name], stepping_rate(env, num_envs, steps))
    for env in envs.values():
        env.close()
    peer = "gymnasium async n/a (one process per sub-env)"
    if "gymnasium async" in best:
        peer = f"{best['workers'] / best['gymnasium async']:.2f}x gymnasium async ({best['gymnasium async']:,.0f})"
    print(
        f"  {env_id:15s} x {num_envs:3d}: workers {best['workers']:9,.0f} env-steps/s ="
        f" {best['workers'] / best['sync']:.2f}x sync ({best['sync']:,.0f}), {peer}"
    )


POPULATION = 256


def population(env_id: str, longer_half_last: bool) -> tuple[Policy, torch.Tensor]:
    """The policy and the parameter rows evaluated on ``env_id``."""
    env = gym.make(env_id)
    space = env.action_space
    act_length = int(space.n) if isinstance(space, gym.spaces.Discrete) else space.shape[0]
    obs_length = gym.spaces.flatdim(env.observation_space)
    env.close()
    policy = Policy(
        f"Linear({obs_length}, 64) >> Tanh() >> Linear(64, 64) >> Tanh() >> Linear(64, {act_length})"
    )
    rows = torch.randn(POPULATION, policy.parameter_length, generator=torch.Generator().manual_seed(0)) * 0.3
    if longer_half_last:
        rows[POPULATION // 2 :] *= 0.1
    return policy, rows


class HalfRunner:
    """Runs the rows it is given, each with its own reset seed, as evaluate runs them in one of two
    processes: on an env of ``ceil(POPULATION / (2 * STARTED_SHARE))`` sub-envs, one episode each."""

    def __init__(self, env_id: str, longer_half_last: bool) -> None:
        self.policy, self.rows = population(env_id, longer_half_last)
        width = math.ceil(POPULATION / (2 * STARTED_SHARE))
        self.env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=width, num_episodes=1, empty_info=True)
        discrete = isinstance(self.env.single_action_space, gym.spaces.Discrete)
        flatten = observation_flattener(self.env.single_observation_space, torch.float32, "cpu")
        self.settings = RowSettings(EvaluateOptions().for_rows(), discrete, flatten, None)

    def run(self, rows: list[int], seeds: list[int]) -> None:
        with one_torch_thread():  # as evaluate runs in each process
            run_rows(self.policy, self.env, self.rows[rows], seeds, self.settings)


def serve_half(connection: Connection, env_id: str, longer_half_last: bool) -> None:
    """The other process of the hindsight split: runs each half it is sent, answers when done."""
    runner = HalfRunner(env_id, longer_half_last)
    connection.send(None)
    while (half := connection.recv()) is not None:
        runner.run(*half)
        connection.send(None)
    runner.env.close()


def hindsight_halves(steps: list[int]) -> list[list[int]]:
    """The rows in two halves of (nearly) equal env-steps: the longest first, each to the lighter half.

    >>> hindsight_halves([5, 1, 3, 3])
    [[0, 1], [2, 3]]
    """
    halves: list[list[int]] = [[], []]
    loads = [0, 0]
    for row in sorted(range(len(steps)), key=lambda row: -steps[row]):
        lighter = loads.index(min(loads))
        halves[lighter].append(row)
        loads[lighter] += steps[row]
    return [sorted(half) for half in halves]


def measure_evaluate(env_id: str, repeats: int, longer_half_last: bool = False) -> None:
    env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=POPULATION, num_episodes=1, empty_info=True)
    policy, rows = population(env_id, longer_half_last)
    here = HalfRunner(env_id, longer_half_last)
    connection, other_end = multiprocessing.get_context("spawn").Pipe()
    other = multiprocessing.get_context("spawn").Process(
        target=serve_half, args=(other_end, env_id, longer_half_last), daemon=True
    )
    other.start()
    start = time.perf_counter()
    evaluate(policy, env, rows, seed=0, num_workers=2)
    first = time.perf_counter() - start
    connection.recv()  # the other process of the hindsight split is ready
    # Each repeat evaluates another seed, every way: episode lengths (the work) differ from seed to seed, so
    # the ratio is taken per seed (same work), and over the summed times.
    totals = {"one process": 0.0, "workers": 0.0, "hindsight split": 0.0}
    ratios = []
    for repeat in range(repeats):
        times = {}
        for name, workers in (("one process", None), ("workers", 2)):
            start = time.perf_counter()
            result = evaluate(policy, env, rows, seed=repeat, num_workers=workers)
            times[name] = time.perf_counter() - start
            totals[name] += times[name]
        seeds = row_seeds(repeat, POPULATION)
        assert seeds is not None
        mine, theirs = hindsight_halves(result.steps.tolist())
        start = time.perf_counter()
        connection.send((theirs, [seeds[row] for row in theirs]))
        here.run(mine, [seeds[row] for row in mine])
        connection.recv()
        totals["hindsight split"] += time.perf_counter() - start
        ratios.append(times["one process"] / times["workers"])
    connection.send(None)
    other.join()
    here.env.close()
    env.close()
    one = totals["one process"]
    print(
        f"  evaluate 256 x {env_id}{', longer half last' if longer_half_last else ''}: workers {totals['workers'] / repeats:.2f} s ="
        f" {one / totals['workers']:.2f}x one process ({one / repeats:.2f} s), per seed {min(ratios):.2f}x to"
        f" {max(ratios):.2f}x; hindsight split {one / totals['hindsight split']:.2f}x one process;"
        f" first call, starting the workers: {first:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, fewer steps, for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per way (best kept)")
    args = parser.parse_args()
    repeats, steps = (1, 20) if args.quick else (args.repeats, 200)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores; best of {repeats}")
    for env_id, num_envs in STEPPING[:2] if args.quick else STEPPING:
        measure_stepping(env_id, num_envs, repeats, steps)
    for env_id in ("CartPole-v1",) if args.quick else ("CartPole-v1", "Hopper-v5"):
        measure_evaluate(env_id, repeats)
    if not args.quick:
        measure_evaluate("Hopper-v5", repeats, longer_half_last=True)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
