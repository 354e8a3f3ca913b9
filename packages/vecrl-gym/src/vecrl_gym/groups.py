"""How a ProcessVectorEnv splits its sub-envs: into groups, each stepped as one SyncVectorEnv, and the groups
among the processes.

In lockstep (no ``batch_size``) there is one group a process: the caller steps the first, each worker
process one other, and every ``step()`` steps them all at once. With ``batch_size=k`` the groups are the
``num_envs / k`` batches that ``recv()`` returns, consecutive sub-envs each, and the worker processes hold
them all (consecutive groups a worker), so the caller is free to compute actions while they step.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np

from vecrl.checks import checked_batch_size


@dataclass(frozen=True)
class GroupLayout:
    """``groups``: each group's sub-envs ``(start, stop)``, in order; ``workers``: the groups each worker
    process steps; ``own``: whether the calling process steps group 0 (lockstep); ``batch_size``: the
    sub-envs of a group with async batches (None: lockstep)."""

    groups: tuple[tuple[int, int], ...]
    workers: tuple[tuple[int, ...], ...]
    own: bool
    batch_size: int | None

    @property
    def worker_of(self) -> dict[int, tuple[int, int]]:
        """By group stepped in a worker: the worker's index and the group's index among that worker's."""
        return {
            group: (w, local) for w, groups in enumerate(self.workers) for local, group in enumerate(groups)
        }


def lockstep_layout(num_envs: int, num_workers: Any) -> GroupLayout:
    """``num_workers`` near-equal groups (``checked_num_workers``), the first stepped in the caller.

    Examples:
        >>> lockstep_layout(5, 2)
        GroupLayout(groups=((0, 2), (2, 5)), workers=((1,),), own=True, batch_size=None)
    """
    count = checked_num_workers(num_workers, num_envs)
    bounds = np.linspace(0, num_envs, count + 1).round().astype(int).tolist()
    groups = tuple(itertools.pairwise(bounds))
    return GroupLayout(groups, tuple((g,) for g in range(1, count)), own=True, batch_size=None)


def async_layout(num_envs: int, num_workers: Any, batch_size: Any) -> GroupLayout:
    """Groups of ``batch_size`` sub-envs (it must divide ``num_envs``), spread over ``num_workers`` worker
    processes (default: one per core, at most one per group).

    Examples:
        >>> async_layout(16, 2, 4).workers
        ((0, 1), (2, 3))
    """
    k = checked_batch_size(batch_size, num_envs)
    count = num_envs // k
    if num_workers is None:
        num_workers = min(os.cpu_count() or 1, count)
    workers = checked_num_workers(num_workers, count, of=f"num_envs / batch_size = {count}", per="batch")
    groups = tuple((g * k, (g + 1) * k) for g in range(count))
    bounds = np.linspace(0, count, workers + 1).round().astype(int).tolist()
    return GroupLayout(
        groups,
        tuple(tuple(range(a, b)) for a, b in itertools.pairwise(bounds)),
        own=False,
        batch_size=k,
    )


def checked_num_workers(num_workers: Any, count: int, *, of: str = "", per: str = "sub-env") -> int:
    """``num_workers`` for ``count`` (>= 1) groups: None means the number of cores (at most ``count``); else a
    ValueError unless it is an int in ``[1, count]`` (``of``: what ``count`` is, ``per``: what one group is,
    for the message).

    Examples:
        >>> checked_num_workers(2, 8), checked_num_workers(None, 1)
        (2, 1)
    """
    if num_workers is None:
        return min(os.cpu_count() or 1, count)
    workers = (
        int(num_workers) if isinstance(num_workers, Integral) and not isinstance(num_workers, bool) else 0
    )
    if not 1 <= workers <= count:
        raise ValueError(
            f"num_workers must be an int from 1 to {of or f'num_envs={count}'} (processes stepping sub-envs, at"
            f" most one per {per}),"
            f" but got {num_workers!r}. This machine has {os.cpu_count()} cores; more workers than cores only"
            " take turns."
        )
    return workers
