"""Autoreset modes, named once for every backend: ``"same_step"``, ``"next_step"`` and ``"disabled"``.

They mean what gymnasium's ``gymnasium.vector.AutoresetMode`` (gymnasium >= 1.1) means:

- ``same_step``: a sub-env whose episode ends is reset within that ``step()``; the observation
  returned is the first of the next episode, the last one is in ``info`` (vecrl's default).
- ``next_step``: the step that ends an episode returns its last observation; the following
  ``step()`` resets that sub-env, ignores its action and reports reward 0, ``terminated`` and
  ``truncated`` False and the reset's info (gymnasium 1.x's default).
- ``disabled``: no autoreset; the user resets finished sub-envs with
  ``reset(options={"reset_mask": mask})``.

On gymnasium 0.29 and 1.0, which have no ``AutoresetMode``, ``metadata["autoreset_mode"]`` holds the
mode's name as a string instead of the enum.

Examples:
    >>> autoreset_mode_name("next_step"), autoreset_mode_name("SameStep")
    ('next_step', 'same_step')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import numpy as np

from vecrl.arrays import convert_to_numpy
from vecrl.compat import AutoresetMode

AutoresetModeName: TypeAlias = Literal["same_step", "next_step", "disabled"]
AUTORESET_MODES: tuple[AutoresetModeName, ...] = ("same_step", "next_step", "disabled")

# gymnasium's enum values ("SameStep", ...) are accepted as well, for drop-in use of its spellings.
_GYMNASIUM_VALUES: dict[str, AutoresetModeName] = {
    "SameStep": "same_step",
    "NextStep": "next_step",
    "Disabled": "disabled",
}


def autoreset_mode_name(mode: Any) -> AutoresetModeName:
    """The vecrl name of ``mode``: one of ``"same_step"``, ``"next_step"``, ``"disabled"``, gymnasium's
    spelling of them (``"SameStep"``, ...) or a ``gymnasium.vector.AutoresetMode``; else a ValueError.

    Examples:
        >>> autoreset_mode_name("disabled")
        'disabled'
    """
    if AutoresetMode is not None and isinstance(mode, AutoresetMode):
        return _GYMNASIUM_VALUES[mode.value]
    if isinstance(mode, str):
        if mode in AUTORESET_MODES:
            return mode
        if mode in _GYMNASIUM_VALUES:
            return _GYMNASIUM_VALUES[mode]
    raise ValueError(
        f"autoreset_mode={mode!r} is not an autoreset mode. Expected one of {', '.join(map(repr, AUTORESET_MODES))}"
        " (or gymnasium.vector.AutoresetMode.SAME_STEP / NEXT_STEP / DISABLED on gymnasium >= 1.1)."
    )


def autoreset_metadata(mode: Any) -> dict[str, Any]:
    """The ``metadata`` entry that declares ``mode``: gymnasium's enum where it exists, else the name.

    Examples:
        >>> mode = autoreset_metadata("next_step")["autoreset_mode"]
        >>> mode == "next_step" if AutoresetMode is None else mode is AutoresetMode.NEXT_STEP
        True
    """
    return {"autoreset_mode": autoreset_mode_value(mode)}


def autoreset_mode_value(mode: Any) -> Any:
    """``mode`` as gymnasium's ``AutoresetMode`` where gymnasium has it (>= 1.1), else as vecrl's name:
    what a vector env's ``autoreset_mode`` attribute holds (TorchRL and gymnasium's wrappers compare it
    with the enum).

    Examples:
        >>> value = autoreset_mode_value("disabled")
        >>> value == "disabled" if AutoresetMode is None else value is AutoresetMode.DISABLED
        True
    """
    name = autoreset_mode_name(mode)
    if AutoresetMode is None:
        return name
    return AutoresetMode(_gymnasium_value(name))


def declared_autoreset_mode(env: Any, default: AutoresetModeName = "same_step") -> AutoresetModeName:
    """The autoreset mode ``env`` declares in its ``metadata`` (``default`` when it declares none).

    vecrl's backends reset in the same step unless asked otherwise, hence the default.

    Examples:
        >>> class Env:
        ...     metadata = {"autoreset_mode": "next_step"}
        >>> declared_autoreset_mode(Env())
        'next_step'
    """
    metadata = getattr(env, "metadata", None)
    if not isinstance(metadata, Mapping) or metadata.get("autoreset_mode") is None:
        return default
    return autoreset_mode_name(metadata["autoreset_mode"])


def checked_reset_mask(mask: Any, num_envs: int) -> np.ndarray:
    """``options["reset_mask"]`` as a numpy bool array of shape ``(num_envs,)``; otherwise a ValueError for
    the wrong shape or a mask without a True (as gymnasium refuses it: a reset that resets nothing is a
    mistake) and a TypeError for the wrong dtype (gymnasium's types for these).

    A numpy array, a torch tensor (on any device) or a list of bools is accepted.

    Examples:
        >>> checked_reset_mask([True, False], 2)
        array([ True, False])
    """
    array = convert_to_numpy(mask)
    if array.shape != (num_envs,) or array.dtype != np.bool_:
        error = ValueError if array.shape != (num_envs,) else TypeError
        raise error(
            f"options['reset_mask'] must be a boolean array of shape ({num_envs},) (one entry per sub-env,"
            f" True for those to reset), but got {type(mask).__qualname__} of shape {array.shape} and dtype"
            f" {array.dtype}: {mask!r}."
        )
    if not array.any():
        raise ValueError(
            f"options['reset_mask'] is all False, so the reset would reset no sub-env: {mask!r}. Mark the"
            " sub-envs to reset with True (e.g. terminated | truncated), and skip the reset when none is."
        )
    return array


def finished_sub_envs_error(finished: list[int]) -> RuntimeError:
    """The error for stepping sub-envs whose episodes ended while autoreset is disabled.

    Examples:
        >>> str(finished_sub_envs_error([3])).split(",")[0]
        'The episodes of sub-envs [3] have ended and autoreset is disabled'
    """
    return RuntimeError(
        f"The episodes of sub-envs {finished} have ended and autoreset is disabled, so they cannot be"
        " stepped. Reset them first with env.reset(options={'reset_mask': mask}), mask being True"
        " for the sub-envs to reset (e.g. mask = terminated | truncated)."
    )


def _gymnasium_value(name: AutoresetModeName) -> str:
    return next(value for value, ours in _GYMNASIUM_VALUES.items() if ours == name)
