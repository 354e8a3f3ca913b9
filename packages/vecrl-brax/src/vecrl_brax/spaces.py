"""The gymnasium spaces of one brax sub-env: observations unbounded (Box, or Dict of Boxes for dict
observations), actions from the actuators."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict


def observation_space(observation: Any) -> Box | Dict:
    """The space of one sub-env's observation, given a batched observation (arrays or
    ``jax.ShapeDtypeStruct``, leading axis the batch): ``Box(-inf, inf, float32)`` of its per-env shape,
    brax declaring no bounds; a (possibly nested) dict of them becomes a ``Dict`` of such Boxes.

    Examples:
        >>> observation_space(jax.ShapeDtypeStruct((8, 2), jnp.float32))  # doctest: +SKIP
        Box(-inf, inf, (2,), float32)
    """
    if isinstance(observation, Mapping):
        return Dict({key: observation_space(value) for key, value in observation.items()})
    shape = getattr(observation, "shape", None)
    if shape is None or len(shape) < 1:
        raise TypeError(
            f"The brax env's observation has a leaf {observation!r} without a batch axis; vecrl supports"
            " observations that are arrays or (nested) dicts of arrays."
        )
    return Box(-np.inf, np.inf, shape=tuple(shape[1:]), dtype=np.float32)


def action_space(env: Any) -> Box:
    """A float32 Box bounded by the actuators' control range (``env.sys.actuator.ctrl_range``).

    Envs without that range (brax.v1 envs, or an actuator count that does not match ``action_size``)
    get ``[-1, 1]``, the range brax's own training code assumes, with a warning saying why.

    Examples:
        >>> action_space(brax.envs.create("inverted_pendulum"))  # doctest: +SKIP
        Box(-3.0, 3.0, (1,), float32)
    """
    size = int(env.action_size)
    ctrl_range = getattr(getattr(getattr(env, "sys", None), "actuator", None), "ctrl_range", None)
    if ctrl_range is not None:
        bounds = np.asarray(ctrl_range, dtype=np.float32)
        if bounds.shape == (size, 2):
            return Box(low=bounds[:, 0], high=bounds[:, 1], dtype=np.float32)
        reason = f"its actuator ctrl_range has shape {bounds.shape}, not ({size}, 2)"
    else:
        reason = "it exposes no sys.actuator.ctrl_range"
    warnings.warn(
        f"The brax env {type(env).__name__} gets the action space [-1, 1]^{size} because {reason}.",
        stacklevel=3,
    )
    return Box(-1.0, 1.0, shape=(size,), dtype=np.float32)
