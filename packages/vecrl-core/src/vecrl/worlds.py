"""The seat rules: a vector env whose rows are the seats of worlds (``pettingzoo::``, a third party's
multi-agent backend) says so by ``seats_per_world``, an int attribute of its unwrapped env: rows
``w * seats`` to ``w * seats + seats - 1`` are world ``w``'s agents, a world's rows end their episodes
together, a reset mask holds every row of a world or none, and ``num_envs`` is a multiple of ``seats``
(refused otherwise with ``NotWholeWorldsError``, which says the seats a world needs). What runs rows in
groups (``vecrl_evaluate``'s worker processes and executors, a population seated by ``opponents=``) keeps a
world's rows together by ``rows_per_world``. ``vecrl.testing.check_worlds`` checks a backend keeps the rules.

Examples:
    >>> import vecrl
    >>> rows_per_world(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))
    1
    >>> NotWholeWorldsError(5, 3).seats_per_world
    3
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from vecrl.arrays import array_namespace
from vecrl.errors import VecrlError


class NotWholeWorldsError(VecrlError, ValueError):
    """A ``num_envs`` that is not a multiple of the seats of a world, refused by an env whose rows are seats;
    ``seats_per_world`` says how many a world has (a caller choosing ``num_envs`` itself can round by it).
    A ValueError."""

    def __init__(self, num_envs: Any, seats_per_world: int) -> None:
        self.num_envs, self.seats_per_world = num_envs, int(seats_per_world)
        worlds = max(1, int(num_envs) // int(seats_per_world)) if isinstance(num_envs, Integral) else 1
        super().__init__(
            f"num_envs must be a positive multiple of the {seats_per_world} agents of a world (a row per agent of"
            f" each world), got {num_envs!r}: give num_envs={seats_per_world * worlds} for {worlds} world(s)."
        )


def rows_per_world(env: Any) -> int:
    """The rows of one world of ``env``: its ``seats_per_world`` where its rows are seats, else 1 (every row
    a world of its own).

    Examples:
        >>> class Seated: seats_per_world = 3
        >>> rows_per_world(Seated())
        3
    """
    seats = getattr(getattr(env, "unwrapped", env), "seats_per_world", None)
    if isinstance(seats, Integral) and not isinstance(seats, bool) and int(seats) >= 1:
        return int(seats)
    return 1


def whole_worlds(count: int, seats: int) -> int:
    """``count`` rows rounded down to whole worlds of ``seats`` rows, at least one world.

    Examples:
        >>> whole_worlds(64, 3), whole_worlds(2, 3)
        (63, 3)
    """
    return max(seats, count // seats * seats)


def rows_of(worlds: Any, seats: int) -> Any:
    """The rows of ``worlds`` (a 1-D numpy array or torch tensor of world numbers), world after world.

    Examples:
        >>> rows_of(np.array([0, 2]), 3).tolist()
        [0, 1, 2, 6, 7, 8]
    """
    return (worlds[:, None] * seats + array_namespace(worlds).arange(seats)).reshape(-1)


def check_whole_worlds(mask: Any, seats: int) -> None:
    """A ValueError unless the reset ``mask`` (a bool per row) holds every row of a world or none (a world
    resets as a whole), naming the worlds it splits.

    Examples:
        >>> check_whole_worlds(np.array([True, True, False, False]), 2)
        >>> check_whole_worlds(np.array([True, False, False, False]), 2)
        Traceback (most recent call last):
        ...
        ValueError: reset_mask [True, False, False, False] splits world(s) [0] of 2 seats (rows w*2 to w*2+1): give a reset_mask that holds every row of a world or none.
    """
    if seats == 1:
        return
    by_world = np.asarray(mask, dtype=bool).reshape(-1, seats)
    split = np.flatnonzero(by_world.any(axis=1) & ~by_world.all(axis=1))
    if len(split):
        raise ValueError(
            f"reset_mask {by_world.ravel().tolist()} splits world(s) {split.tolist()} of {seats} seats (rows"
            f" w*{seats} to w*{seats}+{seats - 1}): give a reset_mask that holds every row of a world or none."
        )
