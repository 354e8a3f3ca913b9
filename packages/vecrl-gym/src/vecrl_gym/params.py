"""The parameters a gymnasium env lets vary (``vecrl.params``): a MuJoCo env's model fields, or a classic-control
env's physical constants, read and written on one sub-env.

Examples:
    >>> import gymnasium
    >>> env = gymnasium.make("CartPole-v1")
    >>> sorted(default_params(env))
    ['force_mag', 'gravity', 'length', 'masscart', 'masspole', 'tau']
    >>> ParamsWriter([env]).write([0], {"masspole": [0.5]}); env.unwrapped.total_mass
    1.5
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vecrl.params import MUJOCO_FIELDS

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


class ParamsWriter:
    """Writes parameters (names of ``default_params``) into sub-envs of one kind, a name at a time: a MuJoCo
    env's model arrays, looked up once (MuJoCo hands out views of the model's memory), so that a reset with
    params costs a copy per field and sub-env; a classic-control env's attributes, and the constants its
    ``__init__`` derives from them."""

    def __init__(self, envs: Sequence[Any]) -> None:
        self._bases = [env.unwrapped for env in envs]
        model = getattr(self._bases[0], "model", None)
        self._arrays: dict[str, list[np.ndarray]] = {}
        if model is not None and hasattr(model, "body_mass") and hasattr(model, "opt"):
            models = [base.model for base in self._bases]
            self._arrays = {name: [getattr(model, name) for model in models] for name in MUJOCO_FIELDS}
            self._arrays["gravity"] = [model.opt.gravity for model in models]
        self._cartpole = type(self._bases[0]).__name__ == "CartPoleEnv"

    def write(self, rows: Sequence[int], columns: Mapping[str, Sequence[Any]]) -> None:
        """Write each name's ``columns[name][k]`` into sub-env ``rows[k]`` (a float for a constant, an array
        for a model field), then what the env derives from them (CartPole's constants, which its
        ``__init__`` computes from the masses and length)."""
        bases = self._bases
        for name, column in columns.items():
            if self._arrays:
                arrays = self._arrays[name]
                for index, value in zip(rows, column, strict=True):
                    arrays[index][...] = value
            else:  # (the constants are plain attributes)
                for index, value in zip(rows, column, strict=True):
                    setattr(bases[index], name, value)
        if self._cartpole:
            for index in rows:
                base = bases[index]
                base.total_mass = base.masspole + base.masscart
                base.polemass_length = base.masspole * base.length
