"""How ``reset(seed=S)`` seeds the sub-envs: one rule, chosen with ``seed_rule=`` on every backend.

- ``"evotorch"``: sub-env ``i`` gets ``numpy.random.RandomState(S).randint(0, 2**32, num_envs)[i]``
  (EvoTorch's rule; the gym backend's default, so results reproduce EvoTorch's).
- ``"gymnasium"``: sub-env ``i`` gets ``S + i`` (gymnasium's vector envs; envpool's default, as
  ``envpool.make(seed=S)`` seeds its envs).

A list of seeds, one per sub-env (an int, or None for a random one), seeds each sub-env with its own on
every backend, whatever the rule. The jax backends (brax, playground) take ``seed_rule`` too; without it
they start every sub-env from keys split off one key of ``S`` (jax's own way).
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any, Literal

import numpy as np

#: Seeds are ints in [0, 2**32) on every backend.
MAX_SEED = 2**32

#: How an int seed ``S`` gives the sub-envs their seeds (see the module).
SeedRule = Literal["evotorch", "gymnasium"]
SEED_RULES: tuple[SeedRule, ...] = ("evotorch", "gymnasium")


def checked_seed_rule(seed_rule: Any) -> SeedRule:
    """``seed_rule`` if it is one of ``SEED_RULES``; a ValueError otherwise.

    Examples:
        >>> checked_seed_rule("gymnasium")
        'gymnasium'
        >>> checked_seed_rule("numpy")
        Traceback (most recent call last):
        ...
        ValueError: seed_rule='numpy' is not a seed rule. Expected 'evotorch' (sub-seeds drawn from numpy.random.RandomState(seed)) or 'gymnasium' (seed + i for sub-env i, as gymnasium's vector envs do).
    """
    if seed_rule not in SEED_RULES:
        raise ValueError(
            f"seed_rule={seed_rule!r} is not a seed rule. Expected 'evotorch' (sub-seeds drawn from"
            " numpy.random.RandomState(seed)) or 'gymnasium' (seed + i for sub-env i, as gymnasium's vector"
            " envs do)."
        )
    return seed_rule


def sub_env_seeds(seed: int, num_envs: int, rule: SeedRule) -> list[int]:
    """The seed of each sub-env that the int ``seed`` stands for under ``rule``.

    Examples:
        >>> sub_env_seeds(5, 3, "gymnasium")
        [5, 6, 7]
        >>> sub_env_seeds(0, 2, "evotorch")
        [2357136044, 2546248239]
    """
    if rule == "gymnasium":
        return [seed + index for index in range(num_envs)]
    return [int(s) for s in np.random.RandomState(seed).randint(0, MAX_SEED, num_envs)]


def checked_seeds(seed: Any, num_envs: int, rule: SeedRule = "evotorch") -> list[int | None] | None:
    """The per-sub-env seeds that ``seed`` stands for (None: no seeding): an int ``S`` by ``rule``
    (``sub_env_seeds``); a list or tuple gives one seed (an int or None: unseeded) per sub-env, and so does
    a 1-D numpy, torch or jax array of ints.

    Examples:
        >>> checked_seeds([3, None], 2), checked_seeds(None, 2), checked_seeds(5, 3, "gymnasium")
        ([3, None], None, [5, 6, 7])
        >>> checked_seeds(np.array([4, 2]), 2)
        [4, 2]
    """
    if seed is None:
        return None
    if is_int(seed):
        return list(sub_env_seeds(seed_in_range(seed, "seed"), num_envs, rule))
    if getattr(seed, "ndim", None) == 1 and hasattr(seed, "tolist"):
        seed = seed.tolist()
    if isinstance(seed, Sequence) and not isinstance(seed, (str, bytes)):
        if len(seed) != num_envs:
            raise ValueError(
                f"A list of seeds needs one seed per sub-env ({num_envs}), but {len(seed)} were given: {seed!r}."
                " Give an int to derive all the sub-seeds from it, or a list of length num_envs."
            )
        seeds: list[int | None] = []
        for index, item in enumerate(seed):
            if item is not None and not is_int(item):
                raise ValueError(f"seed[{index}] is {item!r}; each per-sub-env seed must be None or an int.")
            seeds.append(None if item is None else seed_in_range(item, f"seed[{index}]"))
        return seeds
    raise ValueError(
        f"seed must be None, an int in [0, 2**32) or a list of num_envs={num_envs} such ints (or None),"
        f" but got {seed!r} (of type {type(seed).__qualname__})."
    )


def is_int(value: Any) -> bool:
    """Whether ``value`` is an int (numpy's too) and not a bool.

    Examples:
        >>> is_int(np.int64(3)), is_int(True), is_int(3.0)
        (True, False, False)
    """
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_seed(value: Any) -> bool:
    """Whether ``value`` is a seed: an int (not a bool) in [0, 2**32).

    Examples:
        >>> is_seed(np.uint32(7)), is_seed(2**32), is_seed(-1), is_seed(False)
        (True, False, False, False)
    """
    return is_int(value) and 0 <= int(value) < MAX_SEED


def seed_in_range(value: Any, what: str) -> int:
    """``value`` as an int if it is a seed (in [0, 2**32)); a ValueError naming ``what`` otherwise.

    Examples:
        >>> seed_in_range(-1, "seed")
        Traceback (most recent call last):
        ...
        ValueError: seed is -1, but seeds must be ints in [0, 2**32).
    """
    value = int(value)
    if not 0 <= value < MAX_SEED:
        raise ValueError(f"{what} is {value}, but seeds must be ints in [0, 2**32).")
    return value
