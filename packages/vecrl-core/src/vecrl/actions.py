"""Random valid actions for a batch of sub-environments, drawn in torch (cheap for large batches)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete, Space


def random_action_sampler(space: Space, num_envs: int, seed: int = 0) -> Callable[[], torch.Tensor]:
    """A function returning a fresh ``(num_envs, *space.shape)`` batch of valid random actions per call.

    Box actions are uniform within the bounds (within [-1, 1] along unbounded dimensions); Discrete
    actions are uniform over the ``n`` choices. Reproducible by ``seed``.

    Examples:
        >>> sample = random_action_sampler(Discrete(3), num_envs=4, seed=0)
        >>> sample().shape
        torch.Size([4])
    """
    if not isinstance(space, (Box, Discrete)):
        raise TypeError(
            f"Random actions are drawn for Box and Discrete action spaces, but the action space is {space!r}."
            " Sample such actions with the env's own action_space.sample() instead."
        )
    generator = torch.Generator().manual_seed(seed)
    if isinstance(space, Discrete):
        low_int, high_int = int(space.start), int(space.start + space.n)
        return lambda: torch.randint(low_int, high_int, (num_envs,), generator=generator)
    assert isinstance(space, Box)
    low = torch.from_numpy(np.where(np.isfinite(space.low), space.low, -1.0).astype(np.float32))
    high = torch.from_numpy(np.where(np.isfinite(space.high), space.high, 1.0).astype(np.float32))
    low, high = torch.minimum(low, high), torch.maximum(low, high)  # one infinite side may cross over
    span = high - low
    shape = (num_envs, *low.shape)
    return lambda: low + span * torch.rand(shape, generator=generator)
