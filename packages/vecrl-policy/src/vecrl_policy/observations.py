"""Batched observations as the flat float rows a policy reads, laid out as ``gymnasium.spaces.flatten``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple, flatdim

Flattener = Callable[[Any], torch.Tensor]


def observation_flattener(space: Space, dtype: torch.dtype, device: torch.device | str) -> Flattener:
    """A function from a batch of observations of ``space`` (torch tensors, one row per sub-env, nested
    as the space is) to a ``(batch, flatdim(space))`` tensor of ``dtype`` on ``device``.

    Each row is what ``gymnasium.spaces.flatten(space, observation)`` gives: a Box is flattened, a
    ``Discrete(n, start)`` becomes a one-hot vector of length n, a MultiDiscrete one one-hot block per
    entry, a MultiBinary its bits, and a Dict or Tuple the concatenation of its parts in the space's
    order.

    Examples:
        >>> flatten = observation_flattener(Discrete(3), torch.float32, "cpu")
        >>> flatten(torch.tensor([0, 2]))
        tensor([[1., 0., 0.],
                [0., 0., 1.]])
    """
    device = torch.device(device)
    if isinstance(space, Box):
        return lambda x: x.to(device=device, dtype=dtype).reshape(len(x), -1)
    if isinstance(space, Discrete):
        n, start = int(space.n), int(space.start)
        return lambda x: _one_hot(x.to(device).reshape(len(x)) - start, n, dtype)
    if isinstance(space, MultiDiscrete):
        sizes = [int(n) for n in space.nvec.reshape(-1)]
        starts = torch.as_tensor(space.start.reshape(-1), device=device)
        return lambda x: _one_hots(x.to(device).reshape(len(x), -1) - starts, sizes, dtype)
    if isinstance(space, MultiBinary):
        return lambda x: x.to(device=device, dtype=dtype).reshape(len(x), -1)
    if isinstance(space, Dict):
        parts = {key: observation_flattener(sub, dtype, device) for key, sub in space.spaces.items()}
        return lambda x: torch.cat([flatten(_entry(x, key)) for key, flatten in parts.items()], dim=1)
    if isinstance(space, Tuple):
        items = [observation_flattener(sub, dtype, device) for sub in space.spaces]
        return lambda x: torch.cat([flatten(part) for flatten, part in zip(items, x, strict=True)], dim=1)
    raise TypeError(
        f"A policy reads observations as flat vectors, but the observation space {space!r} (of type"
        f" {type(space).__qualname__}) has no fixed-size flat form. Wrap the env so that its observations"
        " are Box, Discrete, MultiDiscrete, MultiBinary, or Dict/Tuple of these."
    )


def flat_observation_length(space: Space) -> int:
    """The length of one flattened observation of ``space`` (``gymnasium.spaces.flatdim``).

    Examples:
        >>> flat_observation_length(Discrete(16)), flat_observation_length(Box(0, 1, (2, 3)))
        (16, 6)
    """
    observation_flattener(space, torch.float32, "cpu")  # refuses the spaces a policy cannot read
    return int(flatdim(space))


def _one_hot(index: torch.Tensor, n: int, dtype: torch.dtype) -> torch.Tensor:
    # clamp: a sub-env whose budget is spent reports 0, which may lie outside [start, start + n)
    return torch.nn.functional.one_hot(index.long().clamp(0, n - 1), n).to(dtype)


def _one_hots(indices: torch.Tensor, sizes: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
    return torch.cat([_one_hot(indices[:, i], n, dtype) for i, n in enumerate(sizes)], dim=1)


def _entry(x: Any, key: str) -> Any:
    if not isinstance(x, Mapping):
        raise TypeError(f"Expected a dict of observations for a Dict space, got {type(x).__qualname__}.")
    return x[key]
