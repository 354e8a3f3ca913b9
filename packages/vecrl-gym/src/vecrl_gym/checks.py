"""Checks of SyncVectorEnv's arguments and sub-envs; each error says what was expected and how to fix it."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium.spaces import Box, Space

from vecrl.compat import GYMNASIUM_1

_MAX_SEED = 2**32


#: How an int seed ``S`` gives the sub-envs their seeds: ``"evotorch"``, drawn from
#: ``numpy.random.RandomState(S)`` (EvoTorch's rule, vecrl's default), or ``"gymnasium"``, ``S + i`` for
#: sub-env ``i`` (the rule of gymnasium's own vector envs).
SeedRule = Literal["evotorch", "gymnasium"]
SEED_RULES: tuple[SeedRule, ...] = ("evotorch", "gymnasium")


def checked_seed_rule(seed_rule: Any) -> SeedRule:
    """``seed_rule`` if it is one of ``SEED_RULES``; a ValueError otherwise.

    Examples:
        >>> checked_seed_rule("gymnasium")
        'gymnasium'
    """
    if seed_rule not in SEED_RULES:
        raise ValueError(
            f"seed_rule={seed_rule!r} is not a seed rule. Expected 'evotorch' (sub-seeds drawn from"
            " numpy.random.RandomState(seed), the default) or 'gymnasium' (seed + i for sub-env i, as"
            " gymnasium's vector envs do)."
        )
    return seed_rule


def checked_seeds(seed: Any, num_envs: int, rule: SeedRule = "evotorch") -> list[int | None] | None:
    """The per-sub-env seeds that ``seed`` stands for (None: no seeding).

    An int ``S`` stands for ``numpy.random.RandomState(S).randint(0, 2**32, num_envs)`` (as in EvoTorch)
    under the ``"evotorch"`` rule, and for ``S, S + 1, ..., S + num_envs - 1`` under the ``"gymnasium"``
    rule; a list or tuple gives one seed (an int or None) per sub-env.

    Examples:
        >>> checked_seeds([3, None], 2), checked_seeds(None, 2), checked_seeds(5, 3, "gymnasium")
        ([3, None], None, [5, 6, 7])
    """
    if seed is None:
        return None
    if _is_int(seed):
        seed = _seed_in_range(seed, "seed")
        if rule == "gymnasium":
            return [seed + index for index in range(num_envs)]
        sub_seeds = np.random.RandomState(seed).randint(0, _MAX_SEED, num_envs)
        return [int(s) for s in sub_seeds]
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        if len(seed) != num_envs:
            raise ValueError(
                f"A list of seeds needs one seed per sub-env ({num_envs}), but {len(seed)} were given: {seed!r}."
                " Give an int to derive all the sub-seeds from it, or a list of length num_envs."
            )
        seeds: list[int | None] = []
        for index, item in enumerate(seed):
            if item is not None and not _is_int(item):
                raise ValueError(f"seed[{index}] is {item!r}; each per-sub-env seed must be None or an int.")
            seeds.append(None if item is None else _seed_in_range(item, f"seed[{index}]"))
        return seeds
    raise ValueError(
        f"seed must be None, an int in [0, 2**32) or a list of num_envs={num_envs} such ints (or None),"
        f" but got {seed!r} (of type {type(seed).__qualname__})."
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _seed_in_range(value: Any, what: str) -> int:
    value = int(value)
    if not 0 <= value < _MAX_SEED:
        raise ValueError(f"{what} is {value}, but seeds must be ints in [0, 2**32).")
    return value


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
