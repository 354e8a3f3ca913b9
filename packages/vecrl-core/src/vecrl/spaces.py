"""Checks and batching for the spaces vecrl supports: Box and Discrete, and for observations also Dict
spaces (possibly nested) whose leaves are Box spaces."""

from __future__ import annotations

from gymnasium.spaces import Box, Dict, Discrete, MultiDiscrete, Space
from gymnasium.vector.utils import batch_space

SUPPORTED_SPACES: tuple[type[Space], ...] = (Box, Discrete)


def check_supported_space(space: object, what: str, *, allow_dict: bool = False) -> None:
    """Raise a TypeError naming ``space`` unless it is a Box or a Discrete (or, with ``allow_dict``, a Dict
    of Box leaves, possibly nested).

    Example:
        >>> check_supported_space(Discrete(3), "action space")
        >>> check_supported_space(Dict({"a": Box(0.0, 1.0, (2,))}), "observation space", allow_dict=True)
    """
    if isinstance(space, Dict) and allow_dict:
        _check_dict_leaves(space, what, path="")
        return
    if not isinstance(space, SUPPORTED_SPACES):
        kinds = " and ".join(t.__name__ for t in SUPPORTED_SPACES)
        if allow_dict:
            kinds = f"{', '.join(t.__name__ for t in SUPPORTED_SPACES)} and Dict (of Box leaves)"
        raise TypeError(
            f"The {what} is {space!r} (of type {type(space).__qualname__}), but vecrl supports only {kinds}"
            f" spaces. Wrap the environment so that its {what} is one of these (e.g."
            " gymnasium.wrappers.FlattenObservation)."
        )


def _check_dict_leaves(space: Dict, what: str, path: str) -> None:
    for key, subspace in space.spaces.items():
        where = f"{path}[{key!r}]"
        if isinstance(subspace, Dict):
            _check_dict_leaves(subspace, what, where)
        elif not isinstance(subspace, Box):
            raise TypeError(
                f"The {what} is a Dict whose entry {where} is {subspace!r} (of type"
                f" {type(subspace).__qualname__}), but vecrl supports only Box spaces (or nested Dicts of"
                " them) inside a Dict. Wrap the environment so that this entry is a Box (e.g."
                " gymnasium.wrappers.TransformObservation), or flatten the observations"
                " (gymnasium.wrappers.FlattenObservation)."
            )


def batched_space(space: Space, num_envs: int, what: str, *, allow_dict: bool = False) -> Space:
    """The space of ``num_envs`` stacked copies of ``space``: Box gains a leading batch dimension,
    Discrete becomes MultiDiscrete, a Dict (with ``allow_dict``) batches each leaf.

    Example:
        >>> batched_space(Discrete(2), 3, "action space")
        MultiDiscrete([2 2 2])
    """
    check_supported_space(space, what, allow_dict=allow_dict)
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
    if isinstance(space, Dict):
        return Dict({key: unbatched_space(subspace, what) for key, subspace in space.spaces.items()})
    raise TypeError(
        f"The batched {what} is {space!r}; expected a Box with a leading batch dimension, a MultiDiscrete"
        " whose entries are all equal (the batched form of a Box or a Discrete), or a Dict of such Boxes."
    )
