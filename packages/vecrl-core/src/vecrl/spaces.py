"""Checks and batching for the spaces vecrl supports: Box and Discrete."""

from __future__ import annotations

from gymnasium.spaces import Box, Discrete, MultiDiscrete, Space
from gymnasium.vector.utils import batch_space

SUPPORTED_SPACES: tuple[type[Space], ...] = (Box, Discrete)


def check_supported_space(space: object, what: str) -> None:
    """Raise a TypeError naming ``space`` unless it is a Box or a Discrete.

    Example:
        >>> check_supported_space(Discrete(3), "action space")
    """
    if not isinstance(space, SUPPORTED_SPACES):
        raise TypeError(
            f"The {what} is {space!r} (of type {type(space).__qualname__}), but vecrl supports only"
            f" {' and '.join(t.__name__ for t in SUPPORTED_SPACES)} spaces. Wrap the environment so that"
            f" its {what} is one of these (e.g. gymnasium.wrappers.FlattenObservation)."
        )


def batched_space(space: Space, num_envs: int, what: str) -> Space:
    """The space of ``num_envs`` stacked copies of ``space``: Box gains a leading batch dimension,
    Discrete becomes MultiDiscrete.

    Example:
        >>> batched_space(Discrete(2), 3, "action space")
        MultiDiscrete([2 2 2])
    """
    check_supported_space(space, what)
    return batch_space(space, n=num_envs)


def unbatched_space(space: Space, what: str) -> Space:
    """The space of one sub-environment, given the batched space of a vector env.

    Example:
        >>> unbatched_space(MultiDiscrete([2, 2, 2]), "action space")
        Discrete(2)
    """
    if isinstance(space, Box) and len(space.shape) >= 1:
        return Box(low=space.low[0], high=space.high[0], shape=space.shape[1:], dtype=space.dtype)
    if isinstance(space, MultiDiscrete) and space.nvec.ndim == 1 and len(set(space.nvec.tolist())) == 1:
        return Discrete(int(space.nvec[0]), start=int(space.start[0]))
    raise TypeError(
        f"The batched {what} is {space!r}; expected a Box with a leading batch dimension or a MultiDiscrete"
        " whose entries are all equal (the batched form of a Box or a Discrete)."
    )
