"""``evaluate(..., opponents=...)``: a population seated in the worlds of a multi-agent env (an env whose rows
are the seats of worlds, ``seats_per_world`` of them a world: ``pettingzoo::``), its members playing each
other, fixed opponents, or as teams.

The seating is a population of its own, a world's seats ``seats_per_world`` rows in a row, which ``evaluate``
runs as any population: its rows go to the env's sub-envs in order, and a world's seats end together, so each
world's rows stay in one world. A member's fitness is then its mean return over the seats it played:

- ``"self"``: each member plays ``matches`` matches in every seat, the other seats taken by members drawn
  (by the seed) from the rest of the population;
- a tensor of opponents' parameters (a baseline, a hall of fame): as ``"self"``, the other seats taken by
  opponents drawn from it;
- ``"team"``: each member takes every seat of ``matches`` worlds (parameter sharing in cooperative tasks).

``MatchTable`` says who sat where and what each seat returned.

Examples:
    >>> table = seating(torch.zeros(3, 2), "self", matches=1, seats=2, seed=0)
    >>> tuple(table.members.shape), table.player.tolist(), table.seat.tolist()
    ((6, 2), [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

import torch

from vecrl.worlds import rows_of, rows_per_world

#: What ``opponents`` names, besides a tensor of opponents' parameters.
KINDS = ("self", "team")


@dataclass(frozen=True)
class MatchTable:
    """The worlds ``evaluate(..., opponents=...)`` played, one row a world (a match).

    ``members[m, s]`` is who sat in seat ``s`` of match ``m``: a member's index in the population, or
    ``-1 - k`` for fixed opponent ``k``; ``player[m]`` and ``seat[m]`` are the member the match was played for
    and its seat (-1 for a team's: every seat); ``returns[m, s]`` is each seat's mean return."""

    members: torch.Tensor
    player: torch.Tensor
    seat: torch.Tensor
    returns: torch.Tensor | None = None


def seats_per_world(env: Any) -> int:
    """The seats of a world of ``env`` (its rows are seats: ``vecrl.worlds``); a ValueError where it has none."""
    if getattr(env.unwrapped, "seats_per_world", None) is None:
        raise ValueError(
            f"opponents= seats a population in the worlds of a multi-agent env, but {type(env.unwrapped).__name__}"
            " has no seats (no seats_per_world): make one whose rows are the agents of its worlds, such as"
            " make_vector_env('pettingzoo::mpe2.simple_tag_v3', num_envs=...)."
        )
    return rows_per_world(env)


def seating(
    parameters: torch.Tensor,
    opponents: Any,
    *,
    matches: int,
    seats: int,
    seed: int | None,
    common: bool = False,
) -> MatchTable:
    """The matches of ``parameters``' members against ``opponents`` (see the module), ``matches`` in each
    seat, the opponents drawn by ``seed``: for each member apart, or, ``common`` (common random numbers), once
    for all, so that every member meets the same opponents in a seat's k-th match (with ``"self"`` the same
    members, itself where it is drawn). A ValueError or TypeError says what is wrong with ``opponents`` or
    ``matches``."""
    if isinstance(matches, bool) or not isinstance(matches, Integral) or matches < 1:
        raise ValueError(f"matches must be a positive int (matches per member and seat), got {matches!r}.")
    population, worlds = len(parameters), worlds_per_member(opponents, matches=matches, seats=seats)
    generator = torch.Generator().manual_seed(int(torch.randint(2**62, ()) if seed is None else seed))
    if isinstance(opponents, str):
        if opponents not in KINDS:
            raise ValueError(
                f"opponents must be 'self', 'team' or a tensor of opponents' parameters, got {opponents!r}."
            )
        if opponents == "team":
            player = torch.arange(population).repeat_interleave(worlds)
            members = player[:, None].expand(-1, seats).contiguous()
            return MatchTable(members, player, torch.full_like(player, -1))
    player = torch.arange(population).repeat_interleave(worlds)
    seat = torch.arange(seats).repeat_interleave(matches).repeat(population)
    others = (worlds, seats) if common else (len(player), seats)
    if isinstance(opponents, str):  # "self": the rest of the population (itself where it is alone)
        if common or population == 1:
            members = torch.randint(population, others, generator=generator)
        else:
            drawn = torch.randint(population - 1, others, generator=generator)
            members = drawn + (drawn >= player[:, None]).long()  # (skipping the player)
    else:
        members = -1 - torch.randint(len(opponents), others, generator=generator)
    if common:
        members = members.repeat(population, 1)
    members[torch.arange(len(player)), seat] = player
    return MatchTable(members, player, seat)


def seated_rows(population: int, opponents: Any, *, matches: int, seats: int) -> int:
    """The rows ``seating`` seats ``population`` members in: ``matches`` worlds a member (``"team"``), else
    ``matches`` worlds a member and seat; ``seats`` rows a world.

    Examples:
        >>> seated_rows(3, "self", matches=1, seats=2), seated_rows(3, "team", matches=1, seats=2)
        (12, 6)
    """
    return population * worlds_per_member(opponents, matches=matches, seats=seats) * seats


def worlds_per_member(opponents: Any, *, matches: int, seats: int) -> int:
    """The worlds ``seating`` gives each member: ``matches`` of its own for a team (``"team"``), else
    ``matches`` in each of its ``seats`` seats.

    Examples:
        >>> worlds_per_member("self", matches=2, seats=3), worlds_per_member("team", matches=2, seats=3)
        (6, 2)
    """
    return matches if isinstance(opponents, str) and opponents == "team" else seats * matches


def checked_opponents(opponents: Any, parameters: torch.Tensor) -> Any:
    """``opponents`` as ``seating`` takes it: a name of ``KINDS``, or parameters shaped as ``parameters``' rows
    (finite), on their device and dtype."""
    if isinstance(opponents, str):
        return opponents
    if not isinstance(opponents, torch.Tensor):
        raise TypeError(
            f"opponents must be 'self', 'team' or a tensor of opponents' parameters, got {type(opponents).__name__}."
        )
    if opponents.ndim != 2 or opponents.shape[1] != parameters.shape[1] or len(opponents) == 0:
        raise ValueError(
            f"opponents must hold one opponent's parameters a row, {parameters.shape[1]} each (the policy's"
            f" parameter_length), got shape {tuple(opponents.shape)}."
        )
    if not torch.isfinite(opponents).all():
        bad = (~torch.isfinite(opponents)).any(dim=1).nonzero().flatten().tolist()
        raise ValueError(f"opponents' rows {bad} are not finite (NaN or inf): give finite parameters.")
    return opponents.to(parameters.device, parameters.dtype)


def seated_parameters(parameters: torch.Tensor, opponents: Any, table: MatchTable) -> torch.Tensor:
    """Each seat's parameters, world after world (the rows ``evaluate`` runs)."""
    members = table.members.flatten()
    if isinstance(opponents, str):
        return parameters[members]
    pool = torch.cat([parameters, opponents.flip(0)])  # (-1 - k is opponent k: row len(pool) - 1 - k)
    return pool[torch.where(members >= 0, members, len(pool) + members)]


def own_rows(table: MatchTable, population: int, seats: int) -> torch.Tensor:
    """``(population, K)``: the rows of the seated population (world-major) each member played, in its matches'
    order (a team's every seat)."""
    worlds = torch.arange(len(table.player))
    if bool((table.seat < 0).all()):  # a team's worlds: every seat its own
        rows = rows_of(worlds, seats).reshape(-1, seats)
    else:
        rows = (worlds * seats + table.seat)[:, None]
    order = torch.argsort(table.player, stable=True)
    return rows[order].reshape(population, -1)
