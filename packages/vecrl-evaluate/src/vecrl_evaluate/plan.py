"""What an ``evaluate`` call will do, checked whole before anything runs: its arguments, the settings
every row runs with, the rows' seeds, and where the rows run (this process or an executor's parts) and how
(``"fused"`` or ``"stepped"``). ``VecrlNE`` and the ``vecrl evaluate`` command check their settings with
``checked_plan`` too, so every entry point refuses the same mistakes in the same words."""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete, flatdim
from torch import nn

from vecrl.checks import closed_env_error, listed
from vecrl.compat import FINAL_INFO_KEY, FINAL_OBS_KEY
from vecrl.numpy_view import NumpyView, check_numpy_wrappers
from vecrl.randomize import params_table
from vecrl.worlds import rows_per_world
from vecrl_evaluate.evaluate_workers import checked_num_workers, workers_of
from vecrl_evaluate.executor import Executor
from vecrl_evaluate.fused import fused_episodes, info_shapes
from vecrl_evaluate.measures import not_one_number_error, unknown_key_error
from vecrl_evaluate.options import EvaluateOptions, RowSettings
from vecrl_evaluate.randomness import RowSeeds, random_row_seeds, row_seeds
from vecrl_policy.normalization import ObsNorm, checked_obs_norm
from vecrl_policy.observations import observation_flattener
from vecrl_policy.policy import Policy


@dataclass(frozen=True)
class Plan:
    """One checked ``evaluate`` call: every row of ``parameters`` run with ``settings``, row ``r`` seeded
    with ``seeds[r]`` (None: unseeded) and the env parameters ``params[name][r, episode]`` (None: the env's
    defaults), by ``executor`` (None: in this process) on the ``path`` it takes; ``obs_norm`` gets what the
    rows saw."""

    policy: Policy
    env: Any
    parameters: torch.Tensor
    seeds: RowSeeds | None
    settings: RowSettings
    obs_norm: ObsNorm | None
    executor: Executor | None
    path: str
    params: dict[str, np.ndarray] | None = None


def checked_plan(
    policy: Any, env: Any, parameters: Any, options: EvaluateOptions, *, start_workers: bool = True
) -> Plan:
    """The plan of ``evaluate(policy, env, parameters, ...)`` with ``options`` (checked in themselves when
    made); a TypeError or ValueError saying what to change for the first argument that does not fit the
    others (nothing has run then). The worker processes of ``options.num_workers`` are started last (with
    ``start_workers=False``, not at all: the plan then runs in this process; ``VecrlNE`` checks its
    options so)."""
    if not isinstance(policy, Policy):
        raise TypeError(
            f"evaluate() takes a vecrl_policy.Policy, got {type(policy).__qualname__}; wrap the network in one:"
            " Policy(net), where net is an nn.Module, a callable making one, or a network string."
        )
    num_episodes = options.num_episodes
    num_envs = getattr(env, "num_envs", None)
    if num_envs is None:
        raise TypeError(
            f"evaluate() needs a vector env (with num_envs), got {type(env).__qualname__}; make one with"
            " vecrl.make_vector_env(name, num_envs=N)."
        )
    check_numpy_wrappers(env, "evaluate()")
    if getattr(env.unwrapped, "closed", False):
        raise closed_env_error("evaluate", env)
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
    seats = rows_per_world(env)
    if len(parameters) % seats:
        raise ValueError(
            f"The env's rows are the seats of worlds of {seats} agents ({type(env.unwrapped).__name__}), so the"
            f" population's rows fill whole worlds, {seats} a world, but it has {len(parameters)}: give a multiple"
            f" of {seats} rows (each seat its own policy), or seat the population with"
            " evaluate(..., opponents='self', 'team' or opponents' parameters)."
        )
    _check_values(parameters)
    seeds = _seeds(options.seed, len(parameters), options.common_random_numbers)
    params = None
    if options.randomize is not None:
        defaults = getattr(env.unwrapped, "default_params", None) or {}
        name = getattr(getattr(env, "recipe", None), "env_name", None) or type(env.unwrapped).__name__
        if seeds is None:  # (the parameters of a row are drawn from its seed: it needs one)
            seeds = random_row_seeds(len(parameters))
        params = params_table(options.randomize, defaults, seeds, num_episodes, name)
    budget = getattr(env.unwrapped, "num_episodes", None)
    if budget is not None and budget < num_episodes:
        raise ValueError(
            f"The env was made with num_episodes={budget}, fewer than the {num_episodes} asked for: make it"
            f" with num_episodes={num_episodes} (or without a budget)."
        )
    discrete = isinstance(env.single_action_space, Discrete)
    if not discrete and not isinstance(env.single_action_space, Box):
        raise ValueError(
            f"evaluate() runs policies whose outputs are continuous actions (a Box action space) or one score"
            f" per action (Discrete, the argmax is the action); this env's actions are"
            f" {_short(env.single_action_space)}. Wrap each sub-env so that its actions are a Box or a Discrete"
            " (make_vector_env(..., wrappers=[...]))."
        )
    flatten = observation_flattener(env.single_observation_space, parameters.dtype, parameters.device)
    shaping = options.shaping
    if discrete and shaping.action_noise_stdev is not None:
        raise ValueError(
            f"action_noise_stdev={options.action_noise_stdev!r} adds noise to continuous actions, but this env's actions"
            f" are {env.single_action_space} (the argmax of the policy's scores): leave it out."
        )
    obs_length = flatdim(env.single_observation_space)
    obs_norm = checked_obs_norm(options.obs_norm, obs_length)
    checked_obs_norm(policy.obs_norm, obs_length)
    if obs_norm is not None and policy.obs_norm is not None:
        raise ValueError(
            "The policy carries its own observation normalization (policy.obs_norm) and evaluate() was given"
            " obs_norm= too: observations would be normalized twice. Set policy.obs_norm = None while it"
            " trains, or leave obs_norm out."
        )
    _check_policy_fits_env_once(policy, env, parameters)
    if options.checked_measures is not None:
        options.checked_measures.check_functions(*_probe_step(env, parameters, discrete, obs_length))
        _check_info_keys_once(env, options.checked_measures.keys)
    settings = RowSettings(
        options.for_rows(),
        discrete,
        flatten,
        None if obs_norm is None else obs_norm.normalizer(parameters.dtype, parameters.device),
    )
    executor, num_workers, devices = options.executor, options.num_workers, options.devices
    num_processes = 1 if num_workers is None else checked_num_workers(num_workers, env)
    workers = num_processes > 1
    if devices is not None and (executor is not None or workers):
        raise ValueError(
            "devices= splits this process's compiled program over its jax devices; with an executor or worker"
            " processes each runs its part on its own devices (all of them): leave devices out."
        )
    changed = getattr(env, "changed_since_made", None)
    if changed is not None and (workers or executor is not None):
        raise ValueError(
            f"The env was changed after it was made ({changed}), and worker processes and executors make their"
            " envs again from its recipe, which does not hold that change: their rows would score the env as it"
            " was made. Give the change when making the env (a wrapper, or the env's keyword through"
            " make_vector_env's gym_kwargs=...), or evaluate in this process (leave num_workers and executor out)."
        )
    path = _path(policy, env, parameters, settings, workers)
    if devices is not None and path != "fused":
        why = "fused=False" if options.fused is False else fused_episodes(policy, env, parameters, settings)
        raise ValueError(
            f"devices= splits the rows of the compiled jax program over jax devices, but this call steps the env"
            f" from Python ({why}): leave devices out."
        )
    if workers and start_workers:
        executor = workers_of(env, min(num_processes, len(parameters)))  # never a process without rows
    return Plan(policy, env, parameters, seeds, settings, obs_norm, executor, path, params)


def _probe_step(
    env: Any, parameters: torch.Tensor, discrete: bool, obs_length: int
) -> tuple[torch.Tensor, ...]:
    """A batch of two steps as a measure's function sees them in the stepped loop: flat observations (in the
    parameters' dtype and device), the actions the env is given and the env's rewards (float64)."""
    observation = torch.zeros(2, obs_length, dtype=parameters.dtype, device=parameters.device)
    shape = () if discrete else tuple(env.single_action_space.shape)
    action = torch.zeros(
        2, *shape, dtype=torch.int64 if discrete else parameters.dtype, device=parameters.device
    )
    return observation, action, torch.zeros(2, dtype=torch.float64, device=parameters.device)


#: The info keys each env (unwrapped) was found to report: found once, by a reset and a step, not per call.
_REPORTED: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, ...]]] = weakref.WeakKeyDictionary()


def _check_info_keys_once(env: Any, keys: tuple[str, ...]) -> None:
    """A ValueError naming the keys ``env``'s step reports where one of ``keys`` (a measure's) is not among them
    or holds more than one number per sub-env: a jax env's from its outcome's shapes, another's from one step
    (``evaluate`` resets the env before its rows run)."""
    if not keys:
        return
    reported = _REPORTED.get(env.unwrapped)
    if reported is None:
        episodes = getattr(env.unwrapped, "jax_env", None)
        if episodes is not None:
            reported = info_shapes(episodes, env.num_envs)
        else:
            env.reset()
            *_, info = env.step(_sampled_actions(env))
            finals = info.get(FINAL_INFO_KEY)
            both = {**(finals if isinstance(finals, Mapping) else {}), **info}
            reported = {
                key: (env.num_envs, *np.shape(value)[1:])
                for key, value in both.items()
                if not key.startswith("_") and key not in (FINAL_INFO_KEY, FINAL_OBS_KEY)
            }
        _REPORTED[env.unwrapped] = reported
    for key in keys:
        if key not in reported:
            raise unknown_key_error(key, reported)
        if reported[key] != (env.num_envs,):
            raise not_one_number_error(key, reported[key][1:])


def _sampled_actions(env: Any) -> Any:
    """A batch of actions from the env's action space, as its step takes them."""
    from vecrl.arrays import convert_to_torch

    return convert_to_torch(np.stack([env.single_action_space.sample() for _ in range(env.num_envs)]))


def _seeds(seed: int | None, num_rows: int, common: bool) -> RowSeeds | None:
    """The rows' seeds: each its own (``vecrl_evaluate.randomness.row_seeds``), or with ``common``, row 0's
    for every row (a seed drawn at random for an unseeded call)."""
    if not common:
        return row_seeds(seed, num_rows)
    first = random_row_seeds(1) if seed is None else row_seeds(seed, 1)
    assert first is not None
    return np.repeat(first, num_rows)


def _path(policy: Policy, env: Any, parameters: torch.Tensor, settings: RowSettings, workers: bool) -> str:
    """``"fused"`` where the rows run as compiled jax programs (in this process, or each part on an
    executor's), else ``"stepped"``; a ValueError where ``fused=True`` asks for what cannot be."""
    if settings.options.fused is False:
        return "stepped"
    found = (
        "worker processes hand out rows as their sub-envs free up: leave num_workers out."
        if workers
        else fused_episodes(policy, env, parameters, settings)
    )
    if not isinstance(found, str):
        return "fused"
    if settings.options.fused:
        raise ValueError(
            f"evaluate(..., fused=True) cannot run this call as one compiled jax program: {found} Or leave"
            " fused out."
        )
    return "stepped"


def _check_values(parameters: torch.Tensor) -> None:
    """A ValueError for parameters without values (the meta device) or with NaN or inf rows: a network
    with them acts without meaning (an argmax of NaN picks action 0), and would get a finite score."""
    if parameters.device.type == "meta":
        raise ValueError(
            "evaluate() got parameters on the meta device, which holds shapes but no values: make the"
            " population on the CPU or a GPU."
        )
    # A sum is finite when its values are (torch.isfinite over every value costs 30x more: 1.9 ms against
    # 60 us for 256 rows of 4,610 on one thread), the whole population's first (one number read back: each
    # torch call more is dear in a generation's loop), then the rows'; a sum that overflowed is checked value
    # by value.
    if math.isfinite(parameters.sum()):
        return
    suspects = (~torch.isfinite(parameters.sum(dim=1))).nonzero().flatten()
    rows = suspects[~torch.isfinite(parameters[suspects]).all(dim=1)].tolist() if len(suspects) else []
    if rows:
        raise ValueError(
            f"Parameter rows {listed(rows)} hold NaN or inf: a network with them acts without meaning (an argmax of"
            " NaN picks action 0) yet would get a finite score, so evaluate() refuses them. Replace or drop"
            " those rows (torch.isfinite(parameters).all(dim=1) marks the good ones)."
        )


#: The envs (unwrapped) each policy was found to fit, with the parameters' dtypes and devices: what depends on
#: the policy and the env alone is checked once, not at every call of a loop that evaluates generations.
_FITTING: weakref.WeakKeyDictionary[Policy, weakref.WeakKeyDictionary[Any, set[tuple[Any, Any]]]] = (
    weakref.WeakKeyDictionary()
)


def _check_policy_fits_env_once(policy: Policy, env: Any, parameters: torch.Tensor) -> None:
    """``_check_policy_fits_env``, unless ``policy`` was found to fit ``env`` with parameters of this dtype and
    device before."""
    seen = _FITTING.setdefault(policy, weakref.WeakKeyDictionary()).setdefault(env.unwrapped, set())
    if (parameters.dtype, parameters.device) not in seen:
        _check_policy_fits_env(policy, env, parameters[:1])
        seen.add((parameters.dtype, parameters.device))


class PolicyMismatch(ValueError):
    """The policy's network does not fit the env's observations or actions."""


def _check_policy_fits_env(policy: Policy, env: Any, row: torch.Tensor) -> None:
    """Run the network once on a zero observation: a PolicyMismatch says what does not fit, before any step.
    (The loop's first set_parameters clears the state this leaves.)"""
    observation_space, action_space = env.single_observation_space, env.single_action_space
    batch_norms = [m for m in policy.wrapped_module.modules() if isinstance(m, _BATCH_NORMS)]
    if batch_norms:
        raise PolicyMismatch(
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
        raise PolicyMismatch(
            f"The policy's network cannot read this env's observations: they reach it as vectors of length"
            f" {obs_length} (flattened from {_short(observation_space)}), and it raised: {str(error).splitlines()[0]}"
            f" Its first layer must take {obs_length} inputs (gymnasium.spaces.flatdim(env.single_observation_space)),"
            " and each layer what the one before it gives."
        ) from error
    if tuple(output.shape[1:]) != expected:
        what = "one score per discrete action" if isinstance(action_space, Discrete) else "one action"
        raise PolicyMismatch(
            f"The policy's network gives outputs of shape {tuple(output.shape[1:])} per row, but the env's action"
            f" space {_short(action_space)} needs {what} of shape {expected}. Make its output {math.prod(expected)} wide."
        )


_BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)


def _short(space: Any) -> str:
    """``space`` as a short phrase for an error message (a Box's bounds can fill lines)."""
    text = str(space)
    return text if len(text) <= 60 else f"a {type(space).__name__} of shape {space.shape}"
