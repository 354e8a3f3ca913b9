"""EvoTorch VecGymNE's keywords and network conventions, read as VecrlNE's, so that a script written for
VecGymNE runs on VecrlNE by changing the class name.

- ``max_num_envs`` caps the sub-envs made for a population; ``device`` is the device the networks run on
  (the population is moved there for each evaluation: ``network_device``).
- ``num_actors`` (an int, ``"max"`` or ``"num_cpus"``: VecGymNE's Ray actors) is the number of evaluation
  processes (``num_workers``: vecrl's worker processes, this one included; vecrl-ray's ``RayExecutor`` is
  the way to Ray); ``num_subbatches`` and ``subbatch_size`` are accepted and change nothing, since vecrl's
  workers take rows as their sub-envs free up and a row's result never depends on the split.
- ``num_gpus_per_actor`` and ``actor_config`` configure Ray actors: refused, naming ``RayExecutor``.
- A network callable (a function or an ``nn.Module`` class) gets, of ``obs_length``, ``act_length``,
  ``obs_shape``, ``act_shape``, ``obs_space``, ``act_space`` (VecGymNE's ``@pass_info`` keywords, its
  ``act_space`` a Box for discrete actions too) and ``obs``/``act``, those it takes by name (all of them
  where it takes ``**kwargs`` or is marked ``@pass_info``), then ``network_args``.

Examples:
    >>> checked_workers(num_actors=2, num_workers=None)
    2
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete
from torch import nn

from vecrl.checks import checked_num_envs
from vecrl_policy.observations import flat_observation_length


def checked_workers(*, num_actors: Any, num_workers: Any) -> Any:
    """``num_workers``, or VecGymNE's ``num_actors`` as a count of evaluation processes (``"max"`` and
    ``"num_cpus"``: one per core); a ValueError for both, or for what is no count."""
    if num_actors is None:
        return num_workers
    if num_workers is not None:
        raise ValueError(
            f"Give num_workers={num_workers!r} or num_actors={num_actors!r} (VecGymNE's name for it), not both."
        )
    if num_actors in ("max", "num_cpus"):
        return os.cpu_count() or 1
    if isinstance(num_actors, bool) or not isinstance(num_actors, int) or num_actors < 0:
        raise ValueError(
            f"num_actors must be an int >= 0, 'max' or 'num_cpus' (evaluation processes, as VecGymNE's Ray"
            f" actors; vecrl's GPU placement is vecrl-ray's RayExecutor), got {num_actors!r}."
        )
    return num_actors or None


def check_unused(**given: Any) -> None:
    """Refuse VecGymNE's Ray actor settings (``num_gpus_per_actor``, ``actor_config``) and check its subbatch
    settings, which change nothing here, and ``max_num_envs``."""
    for name in ("num_gpus_per_actor", "actor_config"):
        if given.get(name) is not None:
            raise TypeError(
                f"VecrlNE runs no Ray actors of EvoTorch's, so {name} has nothing to configure: evaluate on Ray with"
                " executor=vecrl_ray.RayExecutor(num_actors=N, ...), whose options place the actors."
            )
    subbatches, size = given.get("num_subbatches"), given.get("subbatch_size")
    if subbatches is not None and size is not None:
        raise ValueError("Give num_subbatches or subbatch_size, not both (as VecGymNE).")
    for name in ("num_subbatches", "subbatch_size", "max_num_envs"):
        if given.get(name) is not None:
            checked_num_envs(given[name])  # (a positive int, said so)


def checked_device(device: Any) -> torch.device | None:
    """``device`` as a ``torch.device`` this torch can run networks on (None: where the population is)."""
    if device is None:
        return None
    try:
        result = torch.device(device)
        torch.empty(0, device=result)
    except (RuntimeError, TypeError, AssertionError) as error:
        raise ValueError(f"device={device!r} is no device this torch can run networks on: {error}") from error
    return result


def network_module(network: Callable[..., nn.Module], env: Any, network_args: Mapping[str, Any]) -> nn.Module:
    """The module the callable ``network`` makes for ``env``, given the env's sizes it takes by name."""
    space = env.single_action_space
    discrete = isinstance(space, Discrete)
    act_length = int(space.n) if discrete else math.prod(space.shape or ())
    obs_length = flat_observation_length(env.single_observation_space)
    act_space = Box(-np.inf, np.inf, (act_length,), np.float32) if discrete else space
    info = {
        "obs_length": obs_length,
        "act_length": act_length,
        "obs_shape": tuple(env.single_observation_space.shape or (obs_length,)),
        "act_shape": tuple(act_space.shape),
        "obs_space": env.single_observation_space,
        "act_space": act_space,
        "obs": obs_length,
        "act": act_length,
    }
    try:
        parameters = list(inspect.signature(network).parameters.values())
    except (TypeError, ValueError):  # (a callable inspect cannot read: only what @pass_info asks for)
        parameters = []
    passed_all = getattr(network, "__evotorch_pass_info__", False)
    if passed_all or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        taken = info
    else:
        names = {p.name for p in parameters}
        taken = {name: value for name, value in info.items() if name in names}
    module = network(**{**taken, **network_args})
    if not isinstance(module, nn.Module):
        raise TypeError(
            f"The network callable {network!r} returned {type(module).__qualname__}, not an nn.Module."
        )
    return module
