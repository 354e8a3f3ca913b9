"""Per-sub-env parameters: what ``reset(options={"params": {...}})`` asks for, checked once for every backend.

A vector env declares the parameters it lets vary in ``default_params`` (name -> array of one sub-env's
shape: on MuJoCo-based engines the MuJoCo model's field names, ``body_mass``, ``geom_friction``, ...; on
classic control the env's attributes, ``gravity``, ``masspole``, ``g``). ``reset(options={"params":
{name: array with a leading num_envs axis}})`` sets them for the sub-envs reset (those of ``reset_mask``, or
all): the names given to those values, the others back to their defaults. They hold until the sub-env's next
reset that gives params; resets without params and autoresets keep them. ``checked_params`` is the check,
before anything changes; ``with_defaults`` fills in the names not given.

Examples:
    >>> defaults = {"gravity": np.array(9.8), "body_mass": np.ones(3)}
    >>> params = checked_params({"gravity": [9.0, 10.0]}, defaults, 2, "Walk")
    >>> params["gravity"].tolist(), with_defaults(params, defaults, 2)["body_mass"].shape
    ([9.0, 10.0], (2, 3))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from vecrl.arrays import convert_to_numpy
from vecrl.checks import did_you_mean

#: The reset option that carries them.
PARAMS_OPTION = "params"

#: The MuJoCo model fields that MuJoCo-based backends vary per sub-env, by MuJoCo's names (the same on gym,
#: brax and playground, where a backend's physics reads them), besides ``gravity`` (the model's
#: ``opt.gravity``).
MUJOCO_FIELDS = (
    "body_mass",
    "body_inertia",
    "geom_friction",
    "dof_damping",
    "dof_armature",
    "dof_frictionloss",
    "actuator_gear",
)


#: What physics asks of a parameter's values, by name (MuJoCo's fields, as gym, brax and playground name
#: them, and classic control's, as gym and gymnax do): masses, inertias, lengths and time steps are positive
#: (where the default is; a zero default, such as the world body's mass, stays zero or more), frictions,
#: dampings and armatures are not negative. Other names (gravity, gears, forces) take any finite value.
POSITIVE = (
    "body_mass",
    "body_inertia",
    "masscart",
    "masspole",
    "total_mass",
    "length",
    "polemass_length",
    "tau",
    "dt",
    "m",
    "l",
    "LINK_LENGTH_1",
    "LINK_LENGTH_2",
    "LINK_MASS_1",
    "LINK_MASS_2",
    "LINK_MOI",
)
NON_NEGATIVE = ("geom_friction", "dof_damping", "dof_armature", "dof_frictionloss")


def checked_params(
    given: Any, defaults: Mapping[str, np.ndarray], num_envs: int, owner: str
) -> dict[str, np.ndarray]:
    """``given``'s values (a mapping of declared names to arrays of shape ``(num_envs, *default.shape)``,
    numpy, torch or lists), each a fresh numpy array of the default's dtype: the names given only (the
    others go back to their defaults, which the backend restores: ``with_defaults``). A clear error naming what was received and what was expected where ``given`` is not that:
    NotImplementedError where ``owner`` (the env's class name) declares no parameters, ValueError for an
    unknown name, a wrong shape or a value that is not finite, TypeError for one that is no number.

    Examples:
        >>> checked_params({"gravty": [1.0]}, {"gravity": np.array(9.8)}, 1, "Walk")
        Traceback (most recent call last):
        ...
        ValueError: Walk has no parameter 'gravty'; its parameters are gravity. Did you mean 'gravity'?
    """
    if not defaults:
        raise NotImplementedError(
            f"{owner} lets no parameter vary per sub-env, so reset(options={{'params': ...}}) cannot be honoured;"
            " its backend declares none (env.default_params is empty)."
        )
    if not isinstance(given, Mapping):
        raise TypeError(
            f"options['params'] must map parameter names to one value per sub-env, got {type(given).__qualname__};"
            f" {owner}'s parameters are {', '.join(defaults)}."
        )
    checked = {}
    for name, value in given.items():
        if name not in defaults:
            raise ValueError(
                f"{owner} has no parameter {name!r}; its parameters are {', '.join(defaults)}."
                + did_you_mean(str(name), defaults)
            )
        default = defaults[name]
        try:
            array = convert_to_numpy(value)  # (tensors on any device; lists and numbers through numpy)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"params[{name!r}] must be an array of numbers, got {type(value).__qualname__}."
            ) from error
        if array.dtype.kind not in "biuf":
            raise TypeError(f"params[{name!r}] must hold numbers, got an array of {array.dtype}.")
        expected = (num_envs, *default.shape)
        if array.shape != expected:
            raise ValueError(
                f"params[{name!r}] must have shape {expected} (one value of shape {default.shape} per sub-env, for"
                f" all {num_envs} sub-envs even with a reset_mask), got {array.shape}."
            )
        if not np.isfinite(array).all():
            raise ValueError(
                f"params[{name!r}] holds values that are not finite (NaN or inf): give finite ones."
            )
        with np.errstate(over="ignore"):  # (checked next: a value the env's dtype cannot hold)
            cast = array.astype(default.dtype, copy=True)
        if cast.dtype.kind == "f" and not np.isfinite(cast).all():
            raise ValueError(
                f"params[{name!r}] holds values too large for the env's {cast.dtype} (at most"
                f" {np.finfo(cast.dtype).max:.3g} in size), e.g. {array[~np.isfinite(cast)].flat[0]:g}:"
                " give values it can hold."
            )
        _check_physical(name, cast, default)
        checked[name] = cast
    return checked


def _check_physical(name: str, values: np.ndarray, default: np.ndarray) -> None:
    """A ValueError where ``values`` (one row per sub-env) of the parameter ``name`` break what physics asks
    of it (``POSITIVE``, ``NON_NEGATIVE``), naming the first sub-env and value that does.

    Examples:
        >>> _check_physical("body_mass", np.array([[0.0, 3.5], [0.0, -1.0]]), np.array([0.0, 3.7]))
        Traceback (most recent call last):
        ...
        ValueError: params['body_mass'] must be positive (as the default is), got -1 for sub-env 1: physics has no meaning for it (a mass, inertia, length or time step); give positive values.
    """
    if name in NON_NEGATIVE:
        bad, kind, what = values < 0, "zero or more", "a friction, damping or armature"
    elif name in POSITIVE:
        bad = (values < 0) | ((values == 0) & (np.broadcast_to(default, values.shape) > 0))
        kind, what = "positive (as the default is)", "a mass, inertia, length or time step"
    else:
        return
    if bad.any():
        where = np.argwhere(bad)[0]
        raise ValueError(
            f"params[{name!r}] must be {kind}, got {values[tuple(where)]:g} for sub-env {where[0]}: physics has no"
            f" meaning for it ({what}); give {kind.split(' (')[0]} values."
        )


def with_defaults(
    params: Mapping[str, np.ndarray], defaults: Mapping[str, np.ndarray], num_envs: int
) -> dict[str, np.ndarray]:
    """Every declared parameter for ``num_envs`` sub-envs: ``params``' values, the defaults (read-only views:
    copy what is kept) for the names not in it."""
    return {
        name: params[name] if name in params else np.broadcast_to(default, (num_envs, *default.shape))
        for name, default in defaults.items()
    }


def params_rows(params: Mapping[str, np.ndarray], ids: np.ndarray | None) -> dict[str, np.ndarray]:
    """The rows of ``ids`` (None: all) of each parameter."""
    return dict(params) if ids is None else {name: value[ids] for name, value in params.items()}
