"""Batched observations of every space gymnasium batches densely: allocation, row writes, NaN fills, torch.

Array spaces (Box, Discrete, MultiDiscrete, MultiBinary) batch into one array; Tuple and Dict spaces
into tuples and dicts of arrays, nested as the space is (gymnasium's ``create_empty_array`` layout).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Space
from gymnasium.vector.utils import create_empty_array

from vecrl.nests import map_batch
from vecrl.spaces import write_rows


class TreeRows:
    """Batched Tuple or Dict observations (tuples and dicts of arrays, nested like the space) written one
    sub-env at a time.

    ``rows[i] = observation`` writes sub-env ``i``'s observation into every leaf array, so the step loop
    reads the same for array observations (a numpy array) and composite ones.

    Examples:
        >>> from gymnasium.spaces import Box, Dict, Discrete, Tuple
        >>> space = Dict({"a": Box(0.0, 1.0, (2,)), "b": Tuple((Discrete(3), Box(0.0, 1.0, ())))})
        >>> rows = TreeRows(allocate_observations(space, 2))
        >>> rows[1] = {"a": np.ones(2), "b": (2, np.float32(0.5))}
        >>> int(rows.arrays["b"][0][1]), float(rows.arrays["b"][1][1])
        (2, 0.5)
    """

    __slots__ = ("arrays",)

    def __init__(self, arrays: Any) -> None:
        self.arrays = arrays

    def __setitem__(self, index: int, observation: Any) -> None:
        write_rows(self.arrays, index, observation)


def allocate_observations(space: Space, num_envs: int) -> Any:
    """Uninitialised arrays for ``num_envs`` observations of ``space`` (gymnasium's own layout).

    Examples:
        >>> from gymnasium.spaces import Box
        >>> allocate_observations(Box(0.0, 1.0, (3,)), 2).shape
        (2, 3)
    """
    return create_empty_array(space, n=num_envs, fn=np.empty)


def observations_to_torch(observations: Any, device: torch.device) -> Any:
    """Batched observations as torch tensors on ``device`` (sharing memory on the CPU), tuples and dicts
    kept.

    Examples:
        >>> observations_to_torch({"a": np.zeros(2)}, torch.device("cpu"))
        {'a': tensor([0., 0.], dtype=torch.float64)}
    """
    if device.type == "cpu":
        return map_batch(torch.from_numpy, observations)
    return map_batch(lambda leaf: torch.from_numpy(leaf).to(device), observations)
