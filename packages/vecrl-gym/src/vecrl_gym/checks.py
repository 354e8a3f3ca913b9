"""Checks of SyncVectorEnv's arguments and sub-envs; each error says what was expected and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import gymnasium
from gymnasium.spaces import Box, Space

from vecrl.compat import GYMNASIUM_1

#: How the sub-envs' observation spaces are batched: gymnasium's ``observation_mode``.
ObservationMode = Literal["same", "different"] | tuple[Space, Space]


def checked_observation_mode(mode: Any) -> ObservationMode:
    """``observation_mode`` as gymnasium's vector envs take it: ``"same"`` (every sub-env has one observation
    space), ``"different"`` (the same shape and dtype, bounds of their own; gymnasium >= 1.0) or a tuple
    ``(batched space, single space)``; a ValueError or TypeError saying what is expected otherwise.

    Examples:
        >>> checked_observation_mode("same")
        'same'
    """
    if isinstance(mode, tuple):
        if len(mode) != 2 or not all(isinstance(space, Space) for space in mode):
            raise TypeError(
                f"observation_mode as a tuple must be (batched observation space, single observation space), two"
                f" gymnasium spaces, but got {mode!r}."
            )
    elif mode not in ("same", "different"):
        raise ValueError(
            f"observation_mode must be 'same', 'different' or (batched space, single space), as gymnasium's"
            f" vector envs take it, but got {mode!r}."
        )
    if mode != "same" and not GYMNASIUM_1:
        raise ValueError(
            f"observation_mode={mode!r} needs gymnasium >= 1.0 (its batch_differing_spaces); the installed"
            f" gymnasium is {gymnasium.__version__}. Upgrade gymnasium, or give the sub-envs one observation space."
        )
    return mode


def observation_spaces(mode: ObservationMode, spaces: Sequence[Space]) -> tuple[Space, Space | None]:
    """The single observation space of sub-envs with the observation ``spaces`` under ``mode``, and their
    batched space where it is not the single one batched (None: ``"same"``)."""
    if isinstance(mode, tuple):
        return mode[1], mode[0]
    if mode == "different":
        from gymnasium.vector.utils import batch_differing_spaces

        return spaces[0], batch_differing_spaces(list(spaces))
    return spaces[0], None


def check_same_spaces(envs: Sequence[Any], observation_mode: ObservationMode = "same") -> None:
    """Check that every sub-env's spaces agree with those of sub-env 0; the RuntimeError (gymnasium's type
    for this) names the sub-env.

    Spaces must be equal, Box bounds included, as gymnasium's vector envs require: the batched space is
    made from sub-env 0's, so a sub-env with other bounds would be described wrongly. With
    ``observation_mode="different"`` (or a tuple of spaces: its single space stands for sub-env 0's),
    observation spaces need only the same shape and dtype, as in gymnasium.

    Examples:
        >>> import gymnasium
        >>> check_same_spaces([gymnasium.make("CartPole-v1"), gymnasium.make("CartPole-v1")])
    """
    for kind in ("observation", "action"):
        first = getattr(envs[0], f"{kind}_space")
        loose = kind == "observation" and observation_mode != "same"
        if loose and isinstance(observation_mode, tuple):
            first = observation_mode[1]
        for index, env in enumerate(envs if loose else envs[1:], start=0 if loose else 1):
            space = getattr(env, f"{kind}_space")
            if loose:
                from gymnasium.spaces.utils import is_space_dtype_shape_equiv

                if not is_space_dtype_shape_equiv(space, first):
                    raise RuntimeError(
                        f"Sub-env {index} has the observation space {space!r}, whose shape or dtype differs from"
                        f" {first!r}. With observation_mode={observation_mode!r}, observation spaces may differ in"
                        " their bounds only."
                    )
            elif space != first:
                bounds_only = (
                    isinstance(first, Box)
                    and isinstance(space, Box)
                    and (space.shape, space.dtype) == (first.shape, first.dtype)
                )
                differs = " (the same shape and dtype, other bounds)" if bounds_only else ""
                mode_hint = (
                    ", or make the env with observation_mode='different'"
                    if bounds_only and kind == "observation"
                    else ""
                )
                raise RuntimeError(
                    f"Sub-env {index} has the {kind} space {space!r}, but sub-env 0 has {first!r}{differs}. All"
                    f" sub-envs of a SyncVectorEnv must have one {kind} space, bounds included. Make them alike,"
                    f" e.g. with the same env id and keyword arguments{mode_hint}."
                )


def attribute_values(name: str, values: Any, num_envs: int) -> list[Any]:
    """``set_attr(name, values)``'s values, one per sub-env: a list or tuple gives one value per sub-env,
    any other value is given to all; a ValueError for a list of the wrong length.

    Examples:
        >>> attribute_values("gravity", 9.8, 2), attribute_values("gravity", (1.0, 2.0), 2)
        ([9.8, 9.8], [1.0, 2.0])
    """
    if not isinstance(values, (list, tuple)):
        return [values] * num_envs
    if len(values) != num_envs:
        raise ValueError(
            f"set_attr({name!r}, values) received {len(values)} values for {num_envs} sub-envs. Give"
            " a list or tuple with one value per sub-env, or a single value (not a list) for all of them."
        )
    return list(values)


def checked_env_makers(env_makers: Any, owner: str) -> Sequence[Any]:
    """``env_makers`` as a sequence (a sequence is kept as it is, so a lazy one of any length works); a
    ValueError naming ``owner`` when it is empty.

    Examples:
        >>> len(checked_env_makers(iter([list, list]), "SyncVectorEnv"))
        2
    """
    makers = env_makers if isinstance(env_makers, Sequence) else list(env_makers)
    if not makers:
        raise ValueError(
            f"{owner} needs at least one sub-environment, but env_makers is empty. Pass a list of"
            " functions that each make one env, e.g. [lambda: gymnasium.make('CartPole-v1')] * 8."
        )
    return makers
