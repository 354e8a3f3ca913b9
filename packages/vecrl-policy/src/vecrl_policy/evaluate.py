"""evaluate: score every row of a parameter batch on its own sub-environment, in one vectorized loop."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import torch
from gymnasium.spaces import Discrete, flatdim
from torch import nn

from vecrl.checks import checked_flag, checked_seed
from vecrl.numpy_view import NumpyView
from vecrl_policy.evaluate_workers import checked_num_workers, workers_of
from vecrl_policy.executor import Evaluation, Executor, split_population
from vecrl_policy.fused import fused_episodes, run_fused
from vecrl_policy.normalization import ObsNorm, checked_obs_norm
from vecrl_policy.observations import observation_flattener
from vecrl_policy.policy import Policy
from vecrl_policy.row_loop import RowSettings, row_seeds, run_rows
from vecrl_policy.shaping import Shaping
from vecrl_policy.threads import one_torch_thread


@dataclass(frozen=True)
class EvaluationResult:
    """Per-row results of ``evaluate``: ``total_return`` summed over the row's episodes, the number of
    ``episodes`` it finished, and the env ``steps`` it took.

    Examples:
        >>> result.mean_return  # total_return / episodes  # doctest: +SKIP
    """

    total_return: torch.Tensor
    episodes: torch.Tensor
    steps: torch.Tensor
    #: How the call ran: ``"fused"`` (one compiled jax program, :mod:`vecrl_policy.fused`) or ``"stepped"``.
    path: str = "stepped"

    @property
    def mean_return(self) -> torch.Tensor:
        """Average return per finished episode, per row."""
        return self.total_return / self.episodes.clamp(min=1)


def evaluate(
    policy: Policy,
    env: Any,
    parameters: torch.Tensor,
    *,
    num_episodes: int = 1,
    seed: int | None = None,
    num_workers: int | None = None,
    executor: Executor | None = None,
    obs_norm: ObsNorm | None = None,
    decrease_rewards_by: float | None = None,
    alive_bonus_schedule: tuple[int, float] | tuple[int, int, float] | None = None,
    action_noise_stdev: float | None = None,
    progress: Callable[[int], None] | None = None,
    fused: bool | None = None,
) -> EvaluationResult:
    """Run every row of ``parameters`` for ``num_episodes`` episodes, ``env.num_envs`` rows at a time, in
    one vectorized loop; no loop over rows.

    ``env`` is a vector env made by ``vecrl.make_vector_env`` (``gym::``, ``brax::`` or any backend). The
    first rows start on the sub-envs together; when a row is done, its sub-env takes the next row at once
    (a masked reset), so the loop's cost follows the rows still running (see
    :mod:`vecrl_policy.row_loop`). Row ``r`` is reset with its own seed, drawn from ``seed`` and ``r``
    (:func:`vecrl_policy.row_loop.row_seeds`), whichever sub-env runs it: a row's result depends on
    ``(seed, r)`` alone, not on ``num_envs``, ``num_workers`` or the executor. Recurrent
    state is reset for exactly the rows whose episode ended. When the env was made with
    ``num_episodes=``, its budget stops finished sub-envs from stepping; rewards past a row's last
    episode (NaN under a budget) are never counted. Discrete action spaces take the argmax of the
    policy's output.

    The policy sees each observation flattened as ``gymnasium.spaces.flatten`` does, in the dtype and on
    the device of ``parameters``: float64 observations (MuJoCo) reach a float32 policy as float32, and a
    ``Discrete(n)`` observation (FrozenLake) as a one-hot vector of length n. Size the network's input
    with ``gymnasium.spaces.flatdim(env.single_observation_space)``.

    ``num_workers=K`` evaluates the population in K processes at once: this one and K - 1 worker
    processes that make their own env (from ``env.recipe``, so ``env`` must come from
    ``make_vector_env``, with a ``gym::`` env) and policy once. Each process's free sub-envs take the
    rows not yet started (``vecrl_policy.evaluate_workers``), so a process whose rows run longer takes
    fewer; workers send back only the results, which equal those of ``num_workers=None`` for the same
    ``seed``. Workers are spawned, so a script must guard its entry point with
    ``if __name__ == "__main__":``.

    The neuroevolution options, named and meant as in EvoTorch's ``VecGymNE``:

    - ``obs_norm=stats`` (a :class:`vecrl_policy.ObsNorm` kept across calls): the policy sees each flat
      observation as ``stats`` normalized it when the call began (every row alike), and once the call is
      done, ``stats`` holds every observation a counted row saw (parts run elsewhere send theirs back).
      A policy that carries its own (``policy.obs_norm``) normalizes by itself and is not updated.
    - ``decrease_rewards_by`` and ``alive_bonus_schedule`` change each step's reward before it is summed
      (``total_return`` is the shaped return); ``action_noise_stdev`` adds Gaussian noise to continuous
      actions, drawn from each row's seed (a row gets the same noise wherever it runs). See
      :class:`vecrl_policy.shaping.Shaping`.

    On a jax env (``brax::``, ``playground::``) with a network whose layers have jax twins (every layer of
    the network strings; see :mod:`vecrl_policy.layer_specs`) and float32 parameters, the whole loop runs
    as one compiled jax program (:mod:`vecrl_policy.fused`): the same results within float tolerance, at
    the speed of an EvoJAX-style rollout and without a host round trip per step, compiled once per
    configuration. ``fused=False`` steps the env from Python instead,
    ``fused=True`` insists (a ValueError says why it cannot). ``result.path`` says which ran.

    The loop runs on one torch thread (see :func:`vecrl_policy.threads.one_torch_thread` for why); the
    count is restored when the call returns.

    ``progress``, if given, is called with the number of rows done so far: every few dozen steps in one
    process, once all parts are back with an executor or once the fused program is done.

    Examples:
        >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=64, num_episodes=1)  # doctest: +SKIP
        >>> policy = Policy("Linear(4, 2)")  # doctest: +SKIP
        >>> evaluate(policy, env, torch.randn(256, policy.parameter_length)).mean_return.shape  # doctest: +SKIP
        torch.Size([256])
    """
    if not isinstance(policy, Policy):
        raise TypeError(
            f"evaluate() takes a vecrl_policy.Policy, got {type(policy).__qualname__}; wrap the network in one:"
            " Policy(net), where net is an nn.Module, a callable making one, or a network string."
        )
    if isinstance(num_episodes, bool) or not isinstance(num_episodes, Integral) or num_episodes < 1:
        raise ValueError(f"num_episodes must be a positive int, got {num_episodes!r}.")
    num_envs = getattr(env, "num_envs", None)
    if num_envs is None:
        raise TypeError(
            f"evaluate() needs a vector env (with num_envs), got {type(env).__qualname__}; make one with"
            " vecrl.make_vector_env(name, num_envs=N)."
        )
    if isinstance(env, NumpyView):
        raise TypeError(
            f"evaluate() steps an env that speaks torch, but this one's results are {env.result_type} arrays (made"
            f" with array_type={env.result_type!r}); pass env.env, the torch env it views, or make it without"
            " array_type."
        )
    if not isinstance(parameters, torch.Tensor) or parameters.ndim != 2 or len(parameters) == 0:
        shape = (
            tuple(parameters.shape) if isinstance(parameters, torch.Tensor) else type(parameters).__qualname__
        )
        hint = ""
        if not isinstance(parameters, torch.Tensor):
            hint = " Make it a tensor with torch.as_tensor(parameters)."
        elif parameters.ndim == 1:
            hint = " For a single policy, pass parameters[None]."
        raise ValueError(
            f"evaluate() expects parameters as a 2-D tensor (population, {policy.parameter_length}), one row per"
            f" policy and at least one, got {shape}.{hint}"
        )
    if parameters.shape[1] != policy.parameter_length:
        raise ValueError(
            f"Each parameter row must have the policy's {policy.parameter_length} parameters, got"
            f" {parameters.shape[1]}."
        )
    _check_values(parameters)
    seeds = row_seeds(checked_seed(seed), len(parameters))
    budget = getattr(env.unwrapped, "num_episodes", None)
    if budget is not None and budget < num_episodes:
        raise ValueError(
            f"The env was made with num_episodes={budget}, fewer than the {num_episodes} asked for: make it"
            f" with num_episodes={num_episodes} (or without a budget)."
        )
    discrete = isinstance(env.single_action_space, Discrete)
    flatten = observation_flattener(env.single_observation_space, parameters.dtype, parameters.device)
    shaping = Shaping.checked(
        decrease_rewards_by=decrease_rewards_by,
        alive_bonus_schedule=alive_bonus_schedule,
        action_noise_stdev=action_noise_stdev,
    )
    if discrete and shaping.action_noise_stdev is not None:
        raise ValueError(
            f"action_noise_stdev={action_noise_stdev!r} adds noise to continuous actions, but this env's actions"
            f" are {env.single_action_space} (the argmax of the policy's scores): leave it out."
        )
    obs_length = flatdim(env.single_observation_space)
    obs_norm = checked_obs_norm(obs_norm, obs_length)
    checked_obs_norm(policy.obs_norm, obs_length)
    if obs_norm is not None and policy.obs_norm is not None:
        raise ValueError(
            "The policy carries its own observation normalization (policy.obs_norm) and evaluate() was given"
            " obs_norm= too: observations would be normalized twice. Set policy.obs_norm = None while it"
            " trains, or leave obs_norm out."
        )
    _check_policy_fits_env(policy, env, parameters[:1])
    if fused is not None:
        fused = checked_flag(fused, "fused")
    settings = RowSettings(
        num_episodes,
        discrete,
        flatten,
        shaping,
        None if obs_norm is None else obs_norm.normalizer(parameters.dtype, parameters.device),
    )
    run = functools.partial(run_rows, settings=settings)
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(
            f"executor must be an Executor (with num_parts and run(evaluation, parts)), such as"
            f" vecrl_ray.RayExecutor(num_actors=2); got {executor!r}."
        )
    if num_workers is not None and checked_num_workers(num_workers, env) > 1:
        if executor is not None:
            raise ValueError(
                f"Give evaluate() num_workers={num_workers!r} or executor={executor!r}, not both: the executor"
                " says where the parts of the population run."
            )
        executor = workers_of(env, min(int(num_workers), len(parameters)))  # never a process without rows
    episodes = None
    if fused is not False:
        found = (
            fused_episodes(policy, env, parameters, settings)
            if executor is None
            else "its parts run elsewhere (executor= or num_workers=): leave those out."
        )
        if not isinstance(found, str):
            episodes = found
        elif fused:
            raise ValueError(
                f"evaluate(..., fused=True) cannot run this call as one compiled jax program: {found}"
                " Or leave fused out."
            )
    if episodes is not None:
        results = [run_fused(episodes, policy, env.num_envs, parameters, seeds, settings)]
        if progress is not None:
            progress(len(parameters))
    elif executor is None:
        with one_torch_thread():
            results = [run(policy, env, parameters, seeds, progress=progress)]
    else:
        parts = split_population(env, len(parameters), seeds, executor.num_parts)
        results = executor.run(Evaluation(env, policy, run, parameters), parts)
        if progress is not None:
            progress(len(parameters))
    total_return, episode_counts, steps, *observed = (
        torch.cat(column) for column in zip(*results, strict=True)
    )
    if obs_norm is not None:  # each part's (count, sum, sum of squares), merged once the call is done
        obs_norm.add_partial(*(column.sum(dim=0) for column in observed))
    return EvaluationResult(total_return, episode_counts, steps, "stepped" if episodes is None else "fused")


def _check_values(parameters: torch.Tensor) -> None:
    """A ValueError for parameters without values (the meta device) or with NaN or inf rows: a network
    with them acts without meaning (an argmax of NaN picks action 0), and would get a finite score."""
    if parameters.device.type == "meta":
        raise ValueError(
            "evaluate() got parameters on the meta device, which holds shapes but no values: make the"
            " population on the CPU or a GPU."
        )
    # A row's sum is finite when its values are (torch.isfinite over every value costs 30x more: 1.9 ms
    # against 60 us for 256 rows of 4,610 on one thread); a sum that overflowed is checked value by value.
    suspects = (~torch.isfinite(parameters.sum(dim=1))).nonzero().flatten()
    rows = suspects[~torch.isfinite(parameters[suspects]).all(dim=1)].tolist() if len(suspects) else []
    if rows:
        shown = ", ".join(map(str, rows[:8])) + (f", ... ({len(rows)} rows)" if len(rows) > 8 else "")
        raise ValueError(
            f"Parameter rows {shown} hold NaN or inf: a network with them acts without meaning (an argmax of"
            " NaN picks action 0) yet would get a finite score, so evaluate() refuses them. Replace or drop"
            " those rows (torch.isfinite(parameters).all(dim=1) marks the good ones)."
        )


def _check_policy_fits_env(policy: Policy, env: Any, row: torch.Tensor) -> None:
    """Run the network once on a zero observation: a ValueError says what does not fit, before any step.
    (The loop's first set_parameters clears the state this leaves.)"""
    observation_space, action_space = env.single_observation_space, env.single_action_space
    batch_norms = [m for m in policy.wrapped_module.modules() if isinstance(m, _BATCH_NORMS)]
    if batch_norms:
        raise ValueError(
            f"The policy's network holds {type(batch_norms[0]).__name__}, which normalizes across a batch, but"
            " each parameter row is its own network and sees one observation at a time. Normalize"
            " observations with evaluate(..., obs_norm=vecrl_policy.ObsNorm()), or use LayerNorm."
        )
    obs_length = flatdim(observation_space)
    expected = (int(action_space.n),) if isinstance(action_space, Discrete) else tuple(action_space.shape)
    policy.set_parameters(row)
    try:
        with torch.no_grad():
            output = policy(torch.zeros(1, obs_length, dtype=row.dtype, device=row.device))
    except (RuntimeError, IndexError, ValueError) as error:  # what torch raises for shapes and dims
        raise ValueError(
            f"The policy's network cannot read this env's observations: they reach it as vectors of length"
            f" {obs_length} (flattened from {_short(observation_space)}), and it raised: {str(error).splitlines()[0]}"
            f" Its first layer must take {obs_length} inputs (gymnasium.spaces.flatdim(env.single_observation_space)),"
            " and each layer what the one before it gives."
        ) from error
    if tuple(output.shape[1:]) != expected:
        what = "one score per discrete action" if isinstance(action_space, Discrete) else "one action"
        raise ValueError(
            f"The policy's network gives outputs of shape {tuple(output.shape[1:])} per row, but the env's action"
            f" space {_short(action_space)} needs {what} of shape {expected}. Make its output {math.prod(expected)} wide."
        )


_BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)


def _short(space: Any) -> str:
    """``space`` as a short phrase for an error message (a Box's bounds can fill lines)."""
    text = str(space)
    return text if len(text) <= 60 else f"a {type(space).__name__} of shape {space.shape}"
