"""The rules of evaluate's rollout that both of its drivers follow, written once over an array namespace:
the stepped loop (``vecrl_evaluate.row_loop``) calls them on torch tensors, the fused program
(``vecrl_evaluate.fused``) on jax arrays inside its compiled loop. With them: the random rule
(``vecrl_evaluate.randomness``), the statistics (``vecrl_policy.statistics``) and the shaping
(``vecrl_evaluate.shaping.Shaping.shaped``).

A slot is one sub-env; it holds a row (``held``) and counts for it while the row is not done
(``counting``). The rules: a step's values go to the rows of the counting slots (``add_to_rows``), a slot
counts the episodes that end (``episode_ends``), a slot whose row is done takes the next row
(``refilled``) and starts its counters afresh (``started``).

Examples:
    >>> import torch
    >>> ended = torch.tensor([True, True, False])
    >>> slot_episodes, finished, continuing = episode_ends(ended, torch.tensor([1, 0, 0]), 2)
    >>> slot_episodes.tolist(), finished.tolist(), continuing.tolist()
    ([2, 1, 0], [True, False, False], [False, True, False])
"""

from __future__ import annotations

from typing import Any

from vecrl.arrays import array_namespace


def episode_ends(ended: Any, slot_episodes: Any, num_episodes: int) -> tuple[Any, Any, Any]:
    """Count the episodes that ``ended`` (a bool per slot, True only for slots whose row counts) into
    ``slot_episodes`` (each slot's row's episodes so far): the new counts, the slots whose row has now
    run its ``num_episodes`` (``finished``: it frees its slot) and those whose row goes on to its next
    episode (``continuing``)."""
    slot_episodes = slot_episodes + ended
    finished = ended & (slot_episodes >= num_episodes)
    return slot_episodes, finished, ended & ~finished


def add_to_rows(totals: Any, values: Any, held: Any, counting: Any) -> Any:
    """``totals`` (one per row) with each value of ``values`` added to the row its slot holds (``held``)
    where the slot is ``counting`` (``held`` None: slot ``i`` holds row ``i``); ``values`` may hold a column
    of several per slot, added to a row of ``totals`` alike. On torch ``values``,
    ``held`` and ``counting`` may carry a leading axis of steps, added in order: a row's sum is the same
    whichever slots and steps it shared.

    Examples:
        >>> import torch
        >>> add_to_rows(torch.zeros(3), torch.tensor([1.0, 2.0, 4.0]), torch.tensor([2, 0, 2]),
        ...             torch.tensor([True, False, True])).tolist()
        [0.0, 0.0, 5.0]
    """
    xp = array_namespace(totals)
    if (
        xp.__name__ == "torch" and held is not None
    ):  # (torch scatters no masked values: the counted ones alone)
        return totals.index_add(0, held[counting], values[counting].to(totals.dtype))
    mask = xp.reshape(counting, counting.shape + (1,) * (values.ndim - counting.ndim))  # (a column a slot)
    if held is None:
        return totals + xp.where(mask, values, 0)
    return totals.at[held].add(xp.where(mask, values, 0))


def refilled(free: Any, held: Any, new_rows: Any, available: Any) -> tuple[Any, Any]:
    """The ``free`` slots (a bool per slot) take rows in slot order: the first of them ``new_rows[0]``, the
    next ``new_rows[1]``, ..., as many as ``available`` (the others stay free). Returns the slots that took
    a row and each slot's row (``held`` where none was taken).

    Examples:
        >>> import torch
        >>> took, held = refilled(torch.tensor([True, False, True, True]), torch.tensor([0, 1, 2, 3]),
        ...                       torch.tensor([4, 5]), 2)
        >>> took.tolist(), held.tolist()
        ([True, False, True, False], [4, 1, 5, 3])
    """
    xp = array_namespace(free)
    order = xp.cumsum(free, 0) - 1
    took = free & (order < available)
    return took, xp.where(took, new_rows[xp.clip(order, 0, new_rows.shape[0] - 1)], held)


def started(took: Any, *counters: Any) -> tuple[Any, ...]:
    """Each of a slot's ``counters`` (episodes, steps, ...) back to 0 where the slot ``took`` a new row."""
    xp = array_namespace(took)
    return tuple(xp.where(took, 0, counter) for counter in counters)
