"""The rules of evaluate's rollout that both of its drivers follow, written once over an array namespace:
the stepped loop (:mod:`vecrl_policy.row_loop`) calls them on torch tensors, the fused program
(:mod:`vecrl_policy.fused`) on jax arrays inside its compiled loop. With them: the random rule
(:mod:`vecrl_policy.randomness`), the statistics (:mod:`vecrl_policy.statistics`) and the shaping
(:meth:`vecrl_policy.shaping.Shaping.shaped`).

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


def normalized(x: Any, mean: Any, std: Any, clip: float | None) -> Any:
    """``(x - mean) / std``, clipped to ``[-clip, clip]`` unless ``clip`` is None.

    Examples:
        >>> import torch
        >>> normalized(torch.tensor([2.0, 9.0]), 1.0, 2.0, clip=1.0).tolist()
        [0.5, 1.0]
    """
    y = (x - mean) / std
    return y if clip is None else array_namespace(y).clip(y, -clip, clip)
