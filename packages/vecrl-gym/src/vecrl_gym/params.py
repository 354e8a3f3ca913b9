"""The parameters a gymnasium env lets vary (``vecrl.params``): a MuJoCo env's model fields, or a classic-control
env's physical constants, read and written on one sub-env.

Examples:
    >>> import gymnasium
    >>> env = gymnasium.make("CartPole-v1")
    >>> sorted(default_params(env))
    ['force_mag', 'gravity', 'length', 'masscart', 'masspole', 'tau']
    >>> set_params(env, {"masspole": np.array(0.5)}); env.unwrapped.total_mass
    1.5
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

#: The MuJoCo model fields varied per sub-env (MuJoCo's names, the same on every MuJoCo-based engine),
#: and ``gravity`` (the model's ``opt.gravity``).
MUJOCO_FIELDS = (
    "body_mass",
    "body_inertia",
    "geom_friction",
    "dof_damping",
    "dof_armature",
    "dof_frictionloss",
    "actuator_gear",
)
#: Each classic-control env's physical constants, by its class (gymnasium's attribute names).
CLASSIC_CONTROL = {
    "CartPoleEnv": ("gravity", "masscart", "masspole", "length", "force_mag", "tau"),
    "PendulumEnv": ("g", "m", "l", "max_speed", "max_torque", "dt"),
    "MountainCarEnv": ("force", "gravity"),
    "Continuous_MountainCarEnv": ("power",),
    "AcrobotEnv": (
        "LINK_LENGTH_1",
        "LINK_LENGTH_2",
        "LINK_MASS_1",
        "LINK_MASS_2",
        "LINK_COM_POS_1",
        "LINK_COM_POS_2",
        "LINK_MOI",
    ),
}


def default_params(env: Any) -> dict[str, np.ndarray]:
    """The parameters of ``env`` (a gymnasium env, wrapped or not) as they stand: {} for an env of neither kind."""
    base = env.unwrapped
    model = getattr(base, "model", None)
    if model is not None and hasattr(model, "body_mass") and hasattr(model, "opt"):
        params = {name: np.array(getattr(model, name), dtype=np.float64) for name in MUJOCO_FIELDS}
        params["gravity"] = np.array(model.opt.gravity, dtype=np.float64)
        return params
    names = CLASSIC_CONTROL.get(type(base).__name__, ())
    return {name: np.array(float(getattr(base, name))) for name in names}


def set_params(env: Any, params: Mapping[str, np.ndarray]) -> None:
    """Write ``params`` (names of ``default_params``, values of one sub-env) into ``env``."""
    base = env.unwrapped
    model = getattr(base, "model", None)
    for name, value in params.items():
        if model is not None and name == "gravity" and hasattr(model, "opt"):
            model.opt.gravity[:] = value
        elif model is not None and name in MUJOCO_FIELDS:
            getattr(model, name)[:] = value
        else:
            setattr(base, name, float(value))
    if type(base).__name__ == "CartPoleEnv":  # constants its __init__ derives from the masses and length
        base.total_mass = base.masspole + base.masscart
        base.polemass_length = base.masspole * base.length
