"""The observation space of one sub-env of a jax env: unbounded (a Box, or a Dict of Boxes for dict
observations)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict


def observation_space(observation: Any) -> Box | Dict:
    """The space of one sub-env's observation, given a batched observation (arrays or
    ``jax.ShapeDtypeStruct``, leading axis the batch): ``Box(-inf, inf, float32)`` of its per-env shape,
    jax envs declaring no bounds; a (possibly nested) dict of them becomes a ``Dict`` of such Boxes.

    Examples:
        >>> import jax
        >>> observation_space(jax.ShapeDtypeStruct((8, 2), np.float32))
        Box(-inf, inf, (2,), float32)
    """
    if isinstance(observation, Mapping):
        return Dict({key: observation_space(value) for key, value in observation.items()})
    shape = getattr(observation, "shape", None)
    if shape is None or len(shape) < 1:
        raise TypeError(
            f"The jax env's observation has a leaf {observation!r} without a batch axis; vecrl supports"
            " observations that are arrays or (nested) dicts of arrays."
        )
    return Box(-np.inf, np.inf, shape=tuple(shape[1:]), dtype=np.float32)
