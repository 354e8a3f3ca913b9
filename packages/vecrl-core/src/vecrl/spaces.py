"""The spaces vecrl batches: those gymnasium batches densely, i.e. into arrays of a fixed shape.

These are Box (of any dtype), Discrete, MultiDiscrete and MultiBinary, and Tuple and Dict spaces whose
leaves are any of these, nested. gymnasium batches Text, Graph, Sequence and OneOf spaces as tuples of
per-env samples, which no tensor can hold: they are refused with an error that says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple
from gymnasium.vector.utils import batch_space

from vecrl.nests import map_batch

#: Spaces whose samples are one array each (the leaves of a batched observation or action).
ARRAY_SPACES: tuple[type[Space], ...] = (Box, Discrete, MultiDiscrete, MultiBinary)
#: Spaces made of other spaces, batched leaf by leaf.
COMPOSITE_SPACES: tuple[type[Space], ...] = (Tuple, Dict)


def check_supported_space(space: object, what: str) -> None:
    """Raise a TypeError naming ``space`` (or the part of it at fault) unless gymnasium batches it densely:
    a Box, Discrete, MultiDiscrete or MultiBinary, or a Tuple or Dict of these, nested.

    Examples:
        >>> check_supported_space(Tuple((Discrete(3), Dict({"a": Box(0.0, 1.0, (2,))}))), "observation space")
        >>> from gymnasium.spaces import Text
        >>> check_supported_space(Text(5), "observation space")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        TypeError: The observation space is Text(1, 5, charset=...
    """
    _check_part(space, what, path="")


def _check_part(space: object, what: str, path: str) -> None:
    if isinstance(space, ARRAY_SPACES):
        return
    if isinstance(space, Dict):
        for key, subspace in space.spaces.items():
            _check_part(subspace, what, f"{path}[{key!r}]")
        return
    if isinstance(space, Tuple):
        for index, subspace in enumerate(space.spaces):
            _check_part(subspace, what, f"{path}[{index}]")
        return
    where = f"The {what} is {space!r}" if not path else f"The {what}'s entry {path} is {space!r}"
    if isinstance(space, Space):
        # "has a dynamic shape": the words gymnasium's AsyncVectorEnv uses, which its own tests look for
        reason = (
            f"a {type(space).__name__} space, which has a dynamic shape (its samples have no fixed shape):"
            " gymnasium batches it as a tuple of per-env samples, which no tensor can hold"
        )
    else:
        reason = f"of type {type(space).__qualname__}, not a gymnasium space"
    raise TypeError(
        f"{where}, {reason}. vecrl batches Box, Discrete, MultiDiscrete and MultiBinary spaces, and Tuple and"
        f" Dict spaces of them. Wrap the environment so that its {what} is one of these (e.g. with"
        " gymnasium.wrappers.TransformObservation or TransformAction)."
    )


def batched_space(space: Space, num_envs: int, what: str) -> Space:
    """The space of ``num_envs`` stacked samples of ``space``, as ``gymnasium.vector.utils.batch_space``
    makes it (Box gains a leading batch dimension, Discrete becomes MultiDiscrete, Tuple and Dict batch
    each part), once ``check_supported_space`` has accepted ``space``.

    Examples:
        >>> batched_space(Discrete(2), 3, "action space")
        MultiDiscrete([2 2 2])
    """
    check_supported_space(space, what)
    return batch_space(space, n=num_envs)


def unbatched_space(space: Space, what: str) -> Space:
    """The space of one sub-environment, given the batched space of a vector env.

    Examples:
        >>> unbatched_space(MultiDiscrete([2, 2, 2]), "action space")
        Discrete(2)
    """
    if isinstance(space, Box) and len(space.shape) >= 1:
        return Box(low=space.low[0], high=space.high[0], shape=space.shape[1:], dtype=space.dtype)
    if isinstance(space, MultiDiscrete) and space.nvec.ndim == 1 and len(set(space.nvec.tolist())) == 1:
        return Discrete(int(space.nvec[0]), start=int(space.start[0]))
    if isinstance(space, Dict):
        return Dict({key: unbatched_space(subspace, what) for key, subspace in space.spaces.items()})
    if isinstance(space, Tuple):
        return Tuple(tuple(unbatched_space(subspace, what) for subspace in space.spaces))
    raise TypeError(
        f"The batched {what} is {space!r}, and the env has no single_{what.replace(' ', '_')} to say what one"
        " sub-env's space is. Expected a Box with a leading batch dimension, a MultiDiscrete whose entries"
        " are all equal (the batched form of a Discrete), or a Tuple or Dict of such spaces; or give the env"
        f" a single_{what.replace(' ', '_')} attribute."
    )


def write_rows(batch: Any, rows: Any, value: Any) -> None:
    """``batch[rows] = value`` in every array of ``batch`` (an array, or dicts and tuples of arrays nested
    as a Dict or Tuple space batches them; ``value`` nested alike): ``rows`` is one sub-env's index or an
    index array.

    Examples:
        >>> import numpy as np
        >>> batch = {"a": np.zeros((3, 2)), "b": (np.zeros(3, np.int64),)}
        >>> write_rows(batch, np.array([0, 2]), {"a": np.ones(2), "b": (7,)})
        >>> batch["a"][:, 0].tolist(), batch["b"][0].tolist()
        ([1.0, 0.0, 1.0], [7, 0, 7])
    """
    if type(batch) is np.ndarray:  # (first: the common case, on every step)
        batch[rows] = value
    else:
        map_batch(lambda leaf, part: leaf.__setitem__(rows, part), batch, value)
