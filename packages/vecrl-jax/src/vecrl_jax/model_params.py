"""Per-sub-env parameters of MuJoCo-based jax envs (brax, MuJoCo Playground), by MuJoCo's field names.

Such an env steps with one model (brax's ``System``, playground's ``mjx.Model``) held by the env object. To
step each sub-env with its own values, ``BraxStyleEnv`` vmaps the env's step over the sub-envs and, inside,
gives the env that sub-env's model (``ModelParams.stepping``), as brax's and playground's own domain
randomization wrappers do; the values are carried in each state's ``info`` (``PARAMS_KEY``). The names
(``vecrl.params.MUJOCO_FIELDS`` and ``gravity``) mean the same on gym's MuJoCo envs.

Examples:
    >>> ModelParams("_mjx_model", ("body_mass", "gravity")).names
    ('body_mass', 'gravity')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The key of a state's ``info`` that holds its sub-env's params.
PARAMS_KEY = "vecrl_params"


@dataclass(frozen=True)
class ModelParams:
    """The params ``names`` of an env whose model is the attribute ``attribute`` of its unwrapped env:
    MuJoCo model fields (``body_mass``, ...) and ``gravity`` (the model's ``opt.gravity``). ``brax_mirrors``:
    the model is brax's ``System``, whose physics pipelines read their own copies of some fields (its
    ``link.inertia.mass``, ``dof.damping``, ``dof.armature``, ``actuator.gear`` and ``gravity``), written too."""

    attribute: str
    names: tuple[str, ...]
    brax_mirrors: bool = False

    def defaults(self, env: Any) -> dict[str, np.ndarray]:
        """The model's values of the params, as float32 arrays of one sub-env's shape."""
        model = getattr(env.unwrapped, self.attribute)
        return {
            name: np.array(model.opt.gravity if name == "gravity" else getattr(model, name), dtype=np.float32)
            for name in self.names
        }

    def written(self, model: Any, params: Mapping[str, Any]) -> Any:
        """``model`` with one sub-env's ``params``."""
        changes = {name: value for name, value in params.items() if name != "gravity"}
        if "gravity" in params:
            changes["opt"] = model.opt.replace(gravity=params["gravity"])
        if self.brax_mirrors:
            changes.update(_brax_mirrors(model, params))
        return model.replace(**changes)

    @contextmanager
    def stepping(self, env: Any, params: Mapping[str, Any]) -> Iterator[None]:
        """``env`` steps with ``params`` inside (traced only: jax's trace reads the model once); its own model
        is back afterwards."""
        base = env.unwrapped
        model = getattr(base, self.attribute)
        setattr(base, self.attribute, self.written(model, params))
        try:
            yield
        finally:
            setattr(base, self.attribute, model)


def _brax_mirrors(system: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of brax's ``System`` that copy MuJoCo's, for ``params`` (a link is a body but the world)."""
    changes: dict[str, Any] = {}
    if "body_mass" in params:
        inertia = system.link.inertia.replace(mass=params["body_mass"][1:])
        changes["link"] = system.link.replace(inertia=inertia)
    dof = {
        key: params[name]
        for key, name in (("damping", "dof_damping"), ("armature", "dof_armature"))
        if name in params
    }
    if dof:
        changes["dof"] = system.dof.replace(**dof)
    if "actuator_gear" in params:
        changes["actuator"] = system.actuator.replace(gear=params["actuator_gear"][:, 0])
    if "gravity" in params:
        changes["gravity"] = params["gravity"]
    return changes
