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
``step_ends`` is the rule of a step (what restarts, what is spent, what the step reports, per autoreset
mode), written once for both too; ``EpisodeBudget`` keeps the budget of a host backend's sub-envs (gym's, envpool's): what each has left,
which still run, and the arrays a step starts from.

Examples:
    >>> checked_episode_budget(2, "next_step")
    (2, 'next_step')
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, NamedTuple, TypeVar

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


def budget_under_wrappers_error(num_episodes: int, wrappers: str, fix: str) -> ValueError:
    """The error of an episode budget under gymnasium's wrappers (``wrappers`` names them, ``fix`` says what
    to do instead): they see every row of every step, a spent sub-env's included.

    Examples:
        >>> print(budget_under_wrappers_error(1, "vector_wrappers", "Drop one."))
        num_episodes=1 cannot be combined with vector_wrappers: gymnasium's vector wrappers see every row of every step, so the sub-envs of a spent budget (NaN observation and reward, both flags True) would enter them: RecordEpisodeStatistics would record an empty or NaN episode per step, NormalizeObservation's mean would turn NaN. Drop one.
    """
    return ValueError(
        f"num_episodes={num_episodes!r} cannot be combined with {wrappers}: gymnasium's vector wrappers see every"
        " row of every step, so the sub-envs of a spent budget (NaN observation and reward, both flags True)"
        " would enter them: RecordEpisodeStatistics would record an empty or NaN episode per step,"
        f" NormalizeObservation's mean would turn NaN. {fix}"
    )


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


class StepEnds(NamedTuple):
    """What a step's episode ends mean under an autoreset mode and an episode budget (``step_ends``)."""

    episodes_left: Any  # the budget after the step
    ended: Any  # the episodes that ended at this step (counted; same_step's final observations)
    restart: Any  # the sub-envs restarting from a fresh state at this step
    spent: Any  # the sub-envs past their budget: not stepped (frozen), reporting NaN and both flags
    terminated: Any  # the flags the step reports
    truncated: Any
    zero_reward: Any  # next_step: the sub-envs this step restarts, which report reward 0 (else None)
    needs_reset: Any  # next_step: the sub-envs the next step restarts (else None)


def step_ends(
    mode: AutoresetModeName,
    budget: bool,
    episodes_left: ArrayT,
    needs_reset: ArrayT | None,
    terminated: ArrayT,
    truncated: ArrayT,
) -> StepEnds:
    """The episode rules of one step, written once for every backend: given the budget before the step
    (``episodes_left``, read where ``budget``), the sub-envs this step restarts in ``next_step`` mode
    (``needs_reset``: those whose episode ended at the step before) and the env's ``terminated`` and
    ``truncated`` flags, which sub-envs restart now, which are spent, what the step reports and what the
    next step restarts. Array operators only, so numpy arrays (a host backend) and jax arrays (inside a
    jitted step) alike.

    - ``same_step``: an episode that ends restarts at once, if its sub-env has episodes left; a spent
      sub-env (no episode left before the step) ended nothing and reports both flags.
    - ``next_step``: a sub-env whose episode ended at the step before restarts at this one (reward 0, no
      end), unless that was its last episode: it is spent then, and reports both flags from now on.
    - ``disabled``: nothing restarts and there is no budget.

    Examples:
        >>> no = np.zeros(3, bool)
        >>> ends = step_ends("same_step", True, np.array([1, 2, 0]), None, np.array([True, True, False]), no)
        >>> ends.restart.tolist(), ends.spent.tolist(), ends.terminated.tolist()
        ([False, True, False], [False, False, True], [True, True, True])
        >>> ends = step_ends("next_step", True, np.array([0, 1, 1]), np.array([True, True, False]), no, no)
        >>> ends.restart.tolist(), ends.spent.tolist(), ends.needs_reset.tolist()
        ([False, True, False], [True, False, False], [True, False, False])
    """
    done = terminated | truncated
    none = done & ~done  # (all False, of the flags' array type)
    if mode == "next_step":
        assert needs_reset is not None
        ended = done & ~needs_reset
        spent = needs_reset & (episodes_left == 0) if budget else none
        if budget:
            episodes_left, _ = count_episode_ends(episodes_left, ended)  # (restarted at the next step)
        return StepEnds(
            episodes_left,
            ended,
            needs_reset & ~spent,
            spent,
            (terminated & ended) | spent,
            (truncated & ended) | spent,
            needs_reset,
            ended | spent,
        )
    spent = episodes_left == 0 if budget else none
    ended = done & ~spent
    restart = ended
    if budget:
        episodes_left, restart = count_episode_ends(episodes_left, ended)
    if mode == "disabled":
        restart = none
    return StepEnds(episodes_left, ended, restart, spent, terminated | spent, truncated | spent, None, None)


def acting_sub_envs(episodes_left: ArrayT | None, resetting: ArrayT | None) -> ArrayT | None:
    """The sub-envs whose action a step uses, a bool per sub-env (None where every one does): not those whose
    budget is spent (``episodes_left`` 0; None: no budget), nor those a next_step autoreset restarts at this
    step (``resetting``; None: none). Their actions are ignored, so never checked: a policy turns a spent
    sub-env's NaN observation into NaN actions. Array operators only (numpy, or jax arrays read back).

    Examples:
        >>> acting_sub_envs(np.array([1, 0, 2]), np.array([False, False, True])).tolist()
        [True, False, False]
    """
    acting = None if episodes_left is None else episodes_left > 0
    if resetting is not None:
        acting = ~resetting if acting is None else acting & ~resetting
    return acting


def spent_fill(dtype: Any) -> float:
    """What a spent sub-env reports in an array of ``dtype``: NaN, or 0 where the dtype holds no NaN (the
    one rule for numpy's rows and the jax engine's).

    Examples:
        >>> spent_fill(np.float32), spent_fill(np.int64)
        (nan, 0)
    """
    return np.nan if np.issubdtype(dtype, np.inexact) else 0


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
    return np.full(space.shape, spent_fill(space.dtype), dtype=space.dtype)


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
    spent sub-envs report, ``spent_results``). A backend takes the budget each step's ends leave (``take``,
    with ``step_ends``'s count), restarts the budget of the sub-envs it resets (``restart``), and steps only
    the live sub-envs; ``live`` and ``start`` change only when a budget is spent or restarted.

    Examples:
        >>> from gymnasium.spaces import Box
        >>> budget = EpisodeBudget(3, 1, Box(-1.0, 1.0, (2,)))
        >>> budget.take(np.array([1, 0, 1]))  # sub-env 1's only episode ended: its budget is spent
        >>> budget.live, budget.start[1].tolist()
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

    @property
    def spent(self) -> np.ndarray:
        """A bool per sub-env: whether its budget is spent."""
        return self.left == 0

    def take(self, episodes_left: np.ndarray) -> None:
        """Take the budget a step left (``step_ends``'s ``episodes_left``), updating where one was spent."""
        newly_spent = (episodes_left == 0) & (self.left != 0)
        self.left = episodes_left
        if newly_spent.any():
            self.update()

    def spend(self, mask: np.ndarray) -> None:
        """Spend the budget of the sub-envs of ``mask`` now, as their last episode's end would."""
        self.left[mask] = 0
        self.update()

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
