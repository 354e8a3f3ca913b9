"""The gymnasium spaces of one brax sub-env: observations unbounded, actions from the actuators."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium.spaces import Box


def observation_space(env: Any) -> Box:
    """``Box(-inf, inf, (observation_size,), float32)``: brax declares no observation bounds.

    Example:
        >>> observation_space(brax.envs.create("fast")).shape  # doctest: +SKIP
        (2,)
    """
    size = env.observation_size
    if not isinstance(size, int):
        raise TypeError(
            f"The brax env declares observation_size={size!r}; vecrl supports flat observations only"
            " (an int size). Use a brax env whose observation is a single vector."
        )
    return Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)


def action_space(env: Any) -> Box:
    """A float32 Box bounded by the actuators' control range (``env.sys.actuator.ctrl_range``).

    Envs without that range (brax.v1 envs, or an actuator count that does not match ``action_size``)
    get ``[-1, 1]``, the range brax's own training code assumes, with a warning saying why.

    Example:
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
