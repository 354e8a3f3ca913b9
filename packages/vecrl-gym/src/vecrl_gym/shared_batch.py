"""Shared memory for every per-step array of a process vector env: actions, observations, rewards, flags."""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory

from vecrl.nests import map_batch


@dataclass(frozen=True)
class BatchViews:
    """numpy views of a ``SharedBatch``: the batched actions and observations (arrays, or tuples and dicts of
    them, as gymnasium batches the spaces), the rewards (float64) and the terminated and truncated flags."""

    actions: Any
    observations: Any
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray


class SharedBatch:
    """Shared memory holding one step of ``num_envs`` sub-envs, which the caller and its worker processes
    read and write in place (each worker its own block of rows), so no per-step array is pickled.

    It pickles (to hand it to a new process) as the handles of its memory; ``views()`` gives numpy arrays
    over it in any process.

    Examples:
        >>> import multiprocessing
        >>> from gymnasium.spaces import Box, Discrete
        >>> batch = SharedBatch(Box(-1.0, 1.0, (3,)), Discrete(2), 4, multiprocessing.get_context("spawn"))
        >>> views = batch.views()
        >>> views.observations.shape, views.actions.dtype, views.terminated.dtype
        ((4, 3), dtype('int64'), dtype('bool'))
    """

    def __init__(
        self, observation_space: Space, action_space: Space, num_envs: int, context: BaseContext
    ) -> None:
        self._spaces = observation_space, action_space
        self._num_envs = num_envs
        module: Any = context  # gymnasium types it as the multiprocessing module; a context works alike
        self._actions = create_shared_memory(action_space, num_envs, module)
        self._observations = create_shared_memory(observation_space, num_envs, module)
        self._rewards = context.RawArray("d", num_envs)
        self._flags = context.RawArray("b", 2 * num_envs)

    def views(self) -> BatchViews:
        observation_space, action_space = self._spaces
        flags = np.frombuffer(self._flags, np.bool_).reshape(2, self._num_envs)
        return BatchViews(
            actions=read_from_shared_memory(action_space, self._actions, self._num_envs),
            observations=read_from_shared_memory(observation_space, self._observations, self._num_envs),
            rewards=np.frombuffer(self._rewards, np.float64),
            terminated=flags[0],
            truncated=flags[1],
        )


def write_rows(target: Any, source: Any, start: int, stop: int) -> None:
    """Write the batched ``source`` (an array, or tuples and dicts of arrays) into rows ``start:stop`` of
    ``target``, nested alike.

    Examples:
        >>> target = {"a": np.zeros(3)}
        >>> write_rows(target, {"a": np.ones(2)}, 1, 3); target["a"].tolist()
        [0.0, 1.0, 1.0]
    """
    map_batch(lambda leaf, part: leaf.__setitem__(slice(start, stop), part), target, source)


def rows_of(batch: Any, start: int, stop: int) -> Any:
    """Rows ``start:stop`` of the batched ``batch`` (an array, or tuples and dicts of arrays), as views.

    Examples:
        >>> rows_of((np.arange(4),), 1, 3)
        (array([1, 2]),)
    """
    return map_batch(lambda leaf: leaf[start:stop], batch)
