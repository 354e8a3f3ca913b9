"""Batched actions checked against the single action space before any sub-env steps.

The check is what lets ``SyncVectorEnv.step()`` refuse a bad action without stepping anyone: the shape of
every array, and for discrete spaces (Discrete, MultiDiscrete, MultiBinary) integer values in range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict, Discrete, MultiDiscrete, Space, Tuple

from vecrl.arrays import convert_to_numpy


def value_range(space: Space) -> tuple[Any, Any]:
    """The lowest and highest valid value of a Discrete, MultiDiscrete or MultiBinary space's entries.

    Example:
        >>> value_range(Discrete(3, start=-1))
        (-1, 1)
    """
    if isinstance(space, Discrete):
        return int(space.start), int(space.start) + int(space.n) - 1
    if isinstance(space, MultiDiscrete):
        return space.start, space.start + space.nvec - 1
    return 0, 1


def array_problem(space: Space, actions: np.ndarray, num_envs: int) -> str | None:
    """What is wrong with ``actions``, the batched actions of the array space ``space`` (None: nothing).

    Example:
        >>> array_problem(MultiDiscrete([2, 3]), np.array([[1, 3]]), 1)
        'values outside [[0 0], [1 2]] for sub-envs [0]: [[1, 3]]'
    """
    expected = (num_envs, *(space.shape or ()))
    if actions.shape != expected:
        return f"shape {actions.shape}, where ({num_envs} sub-envs, *{space.shape}) = {expected} was expected"
    if isinstance(space, Box):
        return None
    if actions.dtype.kind not in "iub":
        return f"dtype {actions.dtype}, where an integer dtype was expected"
    low, high = value_range(space)
    bad = ((actions < low) | (actions > high)).reshape(num_envs, -1).any(axis=1)
    if not bad.any():
        return None
    rows = np.flatnonzero(bad).tolist()
    return (
        f"values outside [{np.array2string(np.asarray(low), separator=' ')},"
        f" {np.array2string(np.asarray(high), separator=' ')}] for sub-envs {rows}: {actions[rows].tolist()}"
    )


def checked_tree(space: Space, actions: Any, num_envs: int, path: str = "actions") -> Any:
    """The batched actions ``actions`` of the Tuple or Dict space ``space`` as numpy arrays nested alike; a
    ValueError that names the part at fault otherwise.

    Example:
        >>> import torch
        >>> space = Dict({"move": Box(-1.0, 1.0, (2,)), "grip": Discrete(2)})
        >>> tree = checked_tree(space, {"move": torch.zeros(3, 2), "grip": [0, 1, 1]}, 3)
        >>> tree["grip"]
        array([0, 1, 1])
    """
    if isinstance(space, Dict):
        if not isinstance(actions, Mapping) or set(actions) != set(space.spaces):
            got = sorted(actions) if isinstance(actions, Mapping) else type(actions).__qualname__
            raise ValueError(
                f"{path} must be a dict with the keys {sorted(space.spaces)} of the action space {space}, but"
                f" got {got}."
            )
        return {
            key: checked_tree(subspace, actions[key], num_envs, f"{path}[{key!r}]")
            for key, subspace in space.spaces.items()
        }
    if isinstance(space, Tuple):
        if not isinstance(actions, Sequence) or isinstance(actions, str) or len(actions) != len(space.spaces):
            raise ValueError(
                f"{path} must be a tuple of {len(space.spaces)} batched actions, one per part of the action"
                f" space {space}, but got {type(actions).__qualname__}"
                f"{f' of length {len(actions)}' if isinstance(actions, Sequence) else ''}."
            )
        return tuple(
            checked_tree(subspace, part, num_envs, f"{path}[{index}]")
            for index, (subspace, part) in enumerate(zip(space.spaces, actions, strict=True))
        )
    array = convert_to_numpy(actions)
    problem = array_problem(space, array, num_envs)
    if problem is not None:
        raise ValueError(
            f"{path} (for the space {space}, one row per sub-env) has {problem}. No sub-env was stepped."
        )
    return array
