"""Checks of SyncVectorEnv's arguments and sub-envs; each error says what was expected and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict, Discrete

_MAX_SEED = 2**32


def checked_num_episodes(num_episodes: Any) -> int | None:
    """``num_episodes`` as an int >= 1, or None; a ValueError otherwise.

    Example:
        >>> checked_num_episodes(3), checked_num_episodes(None)
        (3, None)
    """
    if num_episodes is None:
        return None
    if isinstance(num_episodes, bool) or not isinstance(num_episodes, Integral) or num_episodes < 1:
        raise ValueError(
            f"num_episodes must be a positive int (episodes per sub-env) or None (autoreset forever),"
            f" but got {num_episodes!r}."
        )
    return int(num_episodes)


def checked_seeds(seed: Any, num_envs: int) -> list[int | None] | None:
    """The per-sub-env seeds that ``seed`` stands for (None: no seeding).

    An int ``S`` stands for ``numpy.random.RandomState(S).randint(0, 2**32, num_envs)`` (as in EvoTorch);
    a list or tuple gives one seed (an int or None) per sub-env.

    Example:
        >>> checked_seeds([3, None], 2), checked_seeds(None, 2)
        ([3, None], None)
    """
    if seed is None:
        return None
    if _is_int(seed):
        sub_seeds = np.random.RandomState(_seed_in_range(seed, "seed")).randint(0, _MAX_SEED, num_envs)
        return [int(s) for s in sub_seeds]
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        if len(seed) != num_envs:
            raise ValueError(
                f"A list of seeds needs one seed per sub-env ({num_envs}), but {len(seed)} were given: {seed!r}."
                " Give an int to derive all the sub-seeds from it, or a list of length num_envs."
            )
        seeds: list[int | None] = []
        for index, item in enumerate(seed):
            if item is not None and not _is_int(item):
                raise ValueError(f"seed[{index}] is {item!r}; each per-sub-env seed must be None or an int.")
            seeds.append(None if item is None else _seed_in_range(item, f"seed[{index}]"))
        return seeds
    raise ValueError(
        f"seed must be None, an int in [0, 2**32) or a list of num_envs={num_envs} such ints (or None),"
        f" but got {seed!r} (of type {type(seed).__qualname__})."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _seed_in_range(value: Any, what: str) -> int:
    value = int(value)
    if not 0 <= value < _MAX_SEED:
        raise ValueError(f"{what} is {value}, but seeds must be ints in [0, 2**32).")
    return value


def check_same_spaces(envs: Sequence[Any]) -> None:
    """Check that every sub-env's spaces agree with those of sub-env 0; the error names the sub-env.

    Observations must agree in space type, shape and dtype (Dict spaces: be equal); actions in space type, ``n`` (and
    ``start``) for Discrete, shape for Box.

    Example:
        >>> import gymnasium
        >>> check_same_spaces([gymnasium.make("CartPole-v1"), gymnasium.make("CartPole-v1")])
    """
    first_obs, first_act = envs[0].observation_space, envs[0].action_space
    for index, env in enumerate(envs[1:], start=1):
        obs, act = env.observation_space, env.action_space
        _check_same_type(index, "observation", obs, first_obs)
        if isinstance(first_obs, Dict) and obs != first_obs:
            raise ValueError(
                f"Sub-env {index} has the observation space {obs}, but sub-env 0 has {first_obs}. All sub-envs"
                " of a SyncVectorEnv must have one Dict observation space (same keys, shapes and dtypes)."
            )
        if obs.shape != first_obs.shape or obs.dtype != first_obs.dtype:
            raise ValueError(
                f"Sub-env {index} has observations of shape {obs.shape} and dtype {obs.dtype}, but sub-env 0"
                f" has shape {first_obs.shape} and dtype {first_obs.dtype} ({obs} vs {first_obs}). All"
                " sub-envs of a SyncVectorEnv must give observations of one shape and dtype."
            )
        _check_same_type(index, "action", act, first_act)
        if isinstance(act, Discrete) and (act.n != first_act.n or act.start != first_act.start):
            raise ValueError(
                f"Sub-env {index} has the action space {act} but sub-env 0 has {first_act}: the number of"
                " discrete actions (and their start) must be the same for all sub-envs."
            )
        if isinstance(act, Box) and act.shape != first_act.shape:
            raise ValueError(
                f"Sub-env {index} has actions of shape {act.shape} but sub-env 0 has {first_act.shape}"
                f" ({act} vs {first_act}): all sub-envs must take actions of one shape."
            )


def _check_same_type(index: int, kind: str, space: Any, first: Any) -> None:
    if type(space) is not type(first):
        raise TypeError(
            f"Sub-env {index} has the {kind} space {space} (a {type(space).__name__}), but sub-env 0 has"
            f" {first} (a {type(first).__name__}): all sub-envs must have {kind} spaces of one type."
        )
