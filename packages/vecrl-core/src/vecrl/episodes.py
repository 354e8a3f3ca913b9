"""The episode rules every backend follows, written once: the episode budget and its checks.

A vector env made with ``num_episodes=n`` runs each sub-env for ``n`` episodes. On the step where a
sub-env's last episode ends it reports that episode's final observation and reward; from then on, until
the next ``reset()`` of that sub-env, it reports ``terminated = truncated = True``, a NaN observation (0
for integer dtypes: ``spent_observation``) and a NaN reward (``spent_results``: the arrays a host
backend's step starts from). In ``next_step`` mode the reset step that would start one episode too many
is not taken. With ``autoreset_mode="disabled"`` a budget is a ValueError, since the user starts every
episode. Stepping a finished sub-env while autoreset is disabled is
``vecrl.autoreset.finished_sub_envs_error``. ``count_episode_ends`` is the budget's count, written once
over whichever array type a backend keeps it in (numpy on the host, jax inside a jitted step);
``EpisodeBudget`` keeps the budget of a host backend's sub-envs (gym's, envpool's): what each has left,
which still run, and the arrays a step starts from.

Examples:
    >>> checked_episode_budget(2, "next_step")
    (2, 'next_step')
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, TypeVar

import numpy as np
from gymnasium.spaces import Dict, Space, Tuple
from gymnasium.vector.utils import create_empty_array

from vecrl.autoreset import AutoresetModeName, autoreset_mode_name
from vecrl.spaces import write_rows

#: A numpy array, or a jax array inside a jitted step.
ArrayT = TypeVar("ArrayT", bound=Any)


def checked_episode_budget(num_episodes: Any, autoreset_mode: Any) -> tuple[int | None, AutoresetModeName]:
    """``num_episodes`` (a positive int, or None: autoreset forever) and the name of ``autoreset_mode``,
    checked together; a ValueError saying how to fix them otherwise.

    Examples:
        >>> checked_episode_budget(None, "disabled")
        (None, 'disabled')
        >>> checked_episode_budget(1, "disabled")
        Traceback (most recent call last):
        ...
        ValueError: num_episodes=1 cannot be combined with autoreset_mode='disabled': the episode budget counts the episodes that autoreset starts, and with autoreset disabled you start each episode yourself (reset(options={'reset_mask': mask})). Count episodes yourself, or use autoreset_mode='same_step' or 'next_step'.
    """
    if num_episodes is not None and (
        isinstance(num_episodes, bool) or not isinstance(num_episodes, Integral) or num_episodes < 1
    ):
        raise ValueError(
            f"num_episodes must be a positive int (episodes per sub-env) or None (autoreset forever),"
            f" but got {num_episodes!r}."
        )
    mode = autoreset_mode_name(autoreset_mode)
    if mode == "disabled" and num_episodes is not None:
        raise ValueError(
            f"num_episodes={num_episodes!r} cannot be combined with autoreset_mode='disabled': the episode"
            " budget counts the episodes that autoreset starts, and with autoreset disabled you start"
            " each episode yourself (reset(options={'reset_mask': mask})). Count episodes yourself, or"
            " use autoreset_mode='same_step' or 'next_step'."
        )
    return (None if num_episodes is None else int(num_episodes)), mode


def count_episode_ends(episodes_left: ArrayT, ended: ArrayT) -> tuple[ArrayT, ArrayT]:
    """The budget after a step: ``episodes_left`` (an int per sub-env, 0 once its budget is spent) less the
    episodes that ``ended`` (a bool per sub-env, True only where episodes were left), and where an episode
    ended with another still to run (the sub-envs to restart; the others that ended are now spent). Array
    methods only, so numpy arrays and jax arrays (inside a jitted step) alike.

    Examples:
        >>> left, restart = count_episode_ends(np.array([2, 1, 1]), np.array([True, True, False]))
        >>> left.tolist(), restart.tolist()
        ([1, 0, 1], [True, False, False])
    """
    left = episodes_left - ended.astype(episodes_left.dtype)
    return left, ended & (left > 0)


def spent_observation(space: Space) -> Any:
    """What a sub-env whose episode budget is spent reports as its observation: NaN (0 for integer dtypes),
    nested as ``space`` is.

    Examples:
        >>> from gymnasium.spaces import Box, Discrete
        >>> spent_observation(Box(-1.0, 1.0, (2,))), spent_observation(Discrete(3))
        (array([nan, nan], dtype=float32), array(0))
    """
    if isinstance(space, Dict):
        return {key: spent_observation(subspace) for key, subspace in space.spaces.items()}
    if isinstance(space, Tuple):
        return tuple(spent_observation(subspace) for subspace in space.spaces)
    fill = np.nan if np.issubdtype(space.dtype, np.inexact) else 0
    return np.full(space.shape, fill, dtype=space.dtype)


def spent_results(
    space: Space, spent: np.ndarray, reward_dtype: Any = np.float64
) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """The arrays a host backend's step starts from, ``(observations, rewards, terminated, truncated)`` for
    ``len(spent)`` sub-envs of observation ``space``: what a sub-env whose budget is ``spent`` (a bool per
    sub-env) reports in its rows, zeros and False flags in the others (which the step writes). The spent
    rows are written at once, not one by one.

    Examples:
        >>> from gymnasium.spaces import Box
        >>> observations, rewards, terminated, _ = spent_results(Box(-1.0, 1.0, (2,)), np.array([False, True]))
        >>> observations.tolist(), rewards.tolist(), terminated.tolist()
        ([[0.0, 0.0], [nan, nan]], [0.0, nan], [False, True])
    """
    observations = create_empty_array(space, n=len(spent), fn=np.zeros)
    if spent.any():
        write_rows(observations, spent, spent_observation(space))
    rewards = np.where(spent, np.nan, 0.0).astype(reward_dtype)
    return observations, rewards, spent.copy(), spent.copy()


class EpisodeBudget:
    """The episode budget of ``num_envs`` host sub-envs, each given ``num_episodes``, kept once for every
    host backend (gym's sub-env loop, envpool's pool): the episodes each has left (``left``), the sub-envs
    still running (``live``, None while all are) and the arrays a step starts from (``start``: what the
    spent sub-envs report, ``spent_results``). A backend counts each episode end (``end`` for one sub-env,
    ``end_all`` for a batch), restarts the budget of the sub-envs it resets (``restart``), and steps only
    the live sub-envs; ``live`` and ``start`` change only when a budget is spent or restarted.

    Examples:
        >>> from gymnasium.spaces import Box
        >>> budget = EpisodeBudget(3, 1, Box(-1.0, 1.0, (2,)))
        >>> budget.end(1)  # sub-env 1's only episode ended: its budget is spent
        True
        >>> budget.update(); budget.live, budget.start[1].tolist()
        ([0, 2], [0.0, nan, 0.0])
        >>> budget.restart(); budget.live is None
        True
    """

    def __init__(
        self, num_envs: int, num_episodes: int, space: Space, reward_dtype: Any = np.float64
    ) -> None:
        self.num_episodes = num_episodes
        self.left: np.ndarray = np.full(num_envs, num_episodes, np.int64)
        self._space, self._reward_dtype = space, reward_dtype
        self.live: list[int] | None = None
        self.live_ids: np.ndarray | None = None  # ``live`` as an int32 array (envpool's ids)
        self.start = spent_results(space, np.zeros(num_envs, np.bool_), reward_dtype)
        self.changed = False  # a budget was spent since the last ``update()``

    @property
    def spent(self) -> np.ndarray:
        """A bool per sub-env: whether its budget is spent."""
        return self.left == 0

    def end(self, index: int) -> bool:
        """Count the end of an episode of sub-env ``index``; True when that was its last (its budget is now
        spent, and ``update()`` is due before the next step)."""
        left = self.left
        left[index] -= 1
        if left[index]:
            return False
        self.changed = True
        return True

    def end_all(self, ended: np.ndarray) -> np.ndarray:
        """Count the episodes that ``ended`` (a bool per sub-env, True only at live ones) and update; the
        sub-envs to restart (those with episodes left, as a bool per sub-env)."""
        self.left, restart = count_episode_ends(self.left, ended)
        if (ended & ~restart).any():
            self.update()
        return restart

    def restart(self, mask: np.ndarray | None = None) -> None:
        """Give every sub-env (or those of ``mask``) its whole budget again, as a reset does."""
        if mask is None:
            self.left[:] = self.num_episodes
        else:
            self.left[mask] = self.num_episodes
        self.update()

    def update(self) -> None:
        """Recount the live sub-envs and remake ``start`` after budgets were spent or restarted."""
        spent = self.spent
        if spent.any():
            self.live_ids = np.flatnonzero(~spent).astype(np.int32)
            self.live = self.live_ids.tolist()
        else:
            self.live = self.live_ids = None
        self.start = spent_results(self._space, spent, self._reward_dtype)
        self.changed = False
