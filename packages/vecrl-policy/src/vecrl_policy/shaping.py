"""Reward shaping and action noise for ``evaluate``, with the names and meaning of EvoTorch's ``VecGymNE``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import torch


@dataclass(frozen=True)
class Shaping:
    """What ``evaluate`` changes in each step's reward and action.

    - ``decrease_rewards_by``: subtracted from every step's reward (Hopper's alive bonus is 1.0).
    - ``alive_bonus_schedule``: ``(t, b)`` adds ``b`` to the reward of every step of an episode from its
      ``t``-th step on; ``(t0, t1, b)`` adds a bonus that grows linearly from 0 at step ``t0`` to ``b`` at
      step ``t1``, and ``b`` after it (steps counted from 1 in each episode, as VecGymNE counts them).
    - ``action_noise_stdev``: Gaussian noise of that standard deviation added to continuous actions, drawn
      from the call's seed.

    Examples:
        >>> shaping = Shaping.checked(decrease_rewards_by=1.0, alive_bonus_schedule=(2, 4, 1.0))
        >>> shaping.shaped(torch.ones(5), torch.arange(1, 6)).tolist()
        [0.0, 0.0, 0.5, 1.0, 1.0]
    """

    decrease_rewards_by: float | None = None
    alive_bonus_schedule: tuple[int, int, float] | None = None
    action_noise_stdev: float | None = None

    @classmethod
    def checked(
        cls,
        *,
        decrease_rewards_by: Any = None,
        alive_bonus_schedule: Any = None,
        action_noise_stdev: Any = None,
    ) -> Shaping:
        """The settings, each checked; a bad one is a ValueError saying what was expected."""
        if decrease_rewards_by is not None and not _is_finite_real(decrease_rewards_by):
            raise ValueError(
                f"decrease_rewards_by must be a finite number (subtracted from every step's reward), got"
                f" {decrease_rewards_by!r}."
            )
        if action_noise_stdev is not None and not (
            _is_finite_real(action_noise_stdev) and action_noise_stdev >= 0
        ):
            raise ValueError(
                f"action_noise_stdev must be a finite number >= 0 (the std of the Gaussian noise added to"
                f" actions), got {action_noise_stdev!r}."
            )
        return cls(
            None if decrease_rewards_by is None else float(decrease_rewards_by),
            _checked_schedule(alive_bonus_schedule),
            None if not action_noise_stdev else float(action_noise_stdev),
        )

    @property
    def changes_rewards(self) -> bool:
        return self.decrease_rewards_by is not None or self.alive_bonus_schedule is not None

    def shaped(self, reward: Any, t: Any, where: Callable[..., Any] = torch.where) -> Any:
        """``reward`` of steps ``t`` (1 for an episode's first step; in the reward's float dtype, for the
        bonus's precision) with the shaping applied. Written with operators and ``where`` only, so that
        the fused jax rollout runs this very rule on jax arrays (``where=jax.numpy.where``)."""
        if self.decrease_rewards_by is not None:
            reward = reward - self.decrease_rewards_by
        if self.alive_bonus_schedule is not None:
            t0, t1, bonus = self.alive_bonus_schedule
            if t1 > t0:
                ramp = (t - t0) / (t1 - t0)
                reward = reward + bonus * where(ramp < 0.0, 0.0, where(ramp > 1.0, 1.0, ramp))
            else:
                reward = reward + where(t >= t1, bonus, 0.0)
        return reward


class RowNoise:
    """The action noise of each slot of ``evaluate``'s loop, drawn from a generator of the row that slot
    runs (seeded with the row's seed, fresh for an unseeded row), ``BLOCK`` steps at a time: a row's noise
    is the same whichever slot runs it and whatever runs beside it.

    Examples:
        >>> noise = RowNoise(0.1, num_slots=2, action_shape=(3,), dtype=torch.float32, device=torch.device("cpu"))
        >>> noise.start([0, 1], [5, 5])
        >>> first = noise.take(None, held=torch.zeros(2, dtype=torch.bool))
        >>> bool((first[0] == first[1]).all()), tuple(first.shape)
        (True, (2, 3))
    """

    BLOCK = 64

    def __init__(
        self,
        stdev: float,
        num_slots: int,
        action_shape: tuple[int, ...],
        dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        self.stdev, self.dtype = stdev, dtype
        self.buffer = torch.empty(num_slots, self.BLOCK, *action_shape, dtype=dtype, device=device)
        self.cursor = torch.zeros(num_slots, dtype=torch.int64)
        self.generators: list[torch.Generator] = [torch.Generator() for _ in range(num_slots)]

    def start(self, slots: Sequence[int], seeds: Sequence[int] | None) -> None:
        """New rows on ``slots``, seeded with ``seeds`` (one each; None: unseeded)."""
        for index, slot in enumerate(slots):
            generator = self.generators[slot]
            if seeds is None:
                generator.seed()
            else:
                generator.manual_seed(seeds[index])
            self._draw_block(slot)

    def take(self, slots: torch.Tensor | None, held: torch.Tensor) -> torch.Tensor:
        """The next noise of ``slots`` (all when None), one row each; slots where ``held`` (a mask over all
        slots) is True get it without using it up (their action is ignored)."""
        slots = torch.arange(len(self.cursor)) if slots is None else slots
        noise = self.buffer[slots.to(self.buffer.device), self.cursor[slots].to(self.buffer.device)]
        self.cursor[slots] += ~held[slots]
        for slot in slots[self.cursor[slots] == self.BLOCK].tolist():
            self._draw_block(slot)
        return noise

    def _draw_block(self, slot: int) -> None:
        block = torch.randn(self.buffer.shape[1:], generator=self.generators[slot], dtype=self.dtype)
        self.buffer[slot] = self.stdev * block
        self.cursor[slot] = 0


def _checked_schedule(schedule: Any) -> tuple[int, int, float] | None:
    if schedule is None:
        return None
    usage = (
        "alive_bonus_schedule must be (t, bonus) or (t0, t1, bonus): steps t >= 0 (t0 <= t1) and a finite"
        " bonus, as in EvoTorch's VecGymNE"
    )
    if not isinstance(schedule, Sequence) or isinstance(schedule, str) or len(schedule) not in (2, 3):
        raise ValueError(f"{usage}; got {schedule!r}.")
    *steps, bonus = schedule
    if not all(isinstance(t, Integral) and not isinstance(t, bool) and int(t) >= 0 for t in steps):
        raise ValueError(f"{usage}; got {schedule!r}, whose steps are not ints >= 0.")
    if not _is_finite_real(bonus):
        raise ValueError(f"{usage}; got {schedule!r}, whose bonus is not a finite number.")
    t0, t1 = int(steps[0]), int(steps[-1])
    if t1 < t0:
        raise ValueError(f"{usage}; got {schedule!r}, where t1 < t0.")
    return (t0, t1, float(bonus))


def _is_finite_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)
