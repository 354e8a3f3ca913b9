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
      by each row's seed and step (``vecrl_evaluate.randomness.action_noise``).

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


#: The last step an alive bonus schedule may name: the jax rollout counts an episode's steps in int32.
MAX_STEP = 2**31 - 1


def _checked_schedule(schedule: Any) -> tuple[int, int, float] | None:
    if schedule is None:
        return None
    usage = (
        f"alive_bonus_schedule must be (t, bonus) or (t0, t1, bonus): steps 0 <= t <= {MAX_STEP} (t0 <= t1)"
        " and a finite bonus, as in EvoTorch's VecGymNE"
    )
    if not isinstance(schedule, Sequence) or isinstance(schedule, str) or len(schedule) not in (2, 3):
        raise ValueError(f"{usage}; got {schedule!r}.")
    *steps, bonus = schedule
    if not all(
        isinstance(t, Integral) and not isinstance(t, bool) and 0 <= int(t) <= MAX_STEP for t in steps
    ):
        raise ValueError(f"{usage}; got {schedule!r}, whose steps are not ints in [0, {MAX_STEP}].")
    if not _is_finite_real(bonus):
        raise ValueError(f"{usage}; got {schedule!r}, whose bonus is not a finite number.")
    t0, t1 = int(steps[0]), int(steps[-1])
    if t1 < t0:
        raise ValueError(f"{usage}; got {schedule!r}, where t1 < t0.")
    return (t0, t1, float(bonus))


def _is_finite_real(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)
