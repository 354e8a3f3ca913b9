"""HostVectorEnv: the step half of the episode engine, for sub-envs whose results are numpy arrays.

A backend whose sub-envs step on the host subclasses ``HostVectorEnv`` and writes how to reset and how to
step a set of its sub-envs (``reset_rows`` and ``step_rows``); ``reset()`` and ``step()`` are the
engine's, and with them every episode rule: the three autoreset modes, the episode budget and the NaN
rows of a spent budget (``vecrl.episodes``), masked resets that keep the other rows, the final
observations and infos of ``vecrl.final_observations`` (the restarted sub-envs' reset infos in the rows,
as in gymnasium), the refusal to step a finished sub-env with autoreset
disabled, and the checks of actions (``vecrl.action_checks``) and of ``reset()``'s arguments
(``vecrl.episode_vector_env``), and a step that raised refusing further steps until a full reset.
vecrl-gym's ``SyncVectorEnv`` (whose per-sub-env info dicts the engine batches as gymnasium does) and
envpool's backend stand on it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import partial
from typing import Any, NoReturn

import numpy as np
from gymnasium.spaces import Space

from vecrl.action_checks import ActionCheck
from vecrl.checks import checked_flag, closed_env_error, failed_env_error
from vecrl.compat import (
    FINAL_OBS_KEY,
    FINAL_OBS_MASK_KEY,
)
from vecrl.contract import EpisodeOptions
from vecrl.episode_vector_env import EpisodeVectorEnv
from vecrl.episodes import EpisodeBudget, StepEnds, acting_sub_envs, spent_results, step_ends
from vecrl.final_observations import final_infos, is_row_array
from vecrl.gathered_batches import GatheredBatches
from vecrl.nests import copy_batch, map_batch
from vecrl.params import PARAMS_OPTION, params_rows
from vecrl.spaces import ARRAY_SPACES, check_supported_space, write_rows

#: gymnasium's ``VectorEnv._add_info(infos, info, index)``: ``infos`` with the sub-env ``index``'s ``info``.
#: What ``step_rows`` returns: observations (an array, or for a Tuple or Dict space tuples and dicts of
#: arrays nested like it), rewards, terminated, truncated (one row per sub-env stepped) and info (arrays
#: with one row per sub-env stepped, other values as they are; with ``infos_per_sub_env``, a list of
#: their info dicts).
StepRows = tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any]
#: The episodes of pause()'s budget: more than any run ends, so only pause() spends it.
_UNLIMITED = 2**62

RENAMED_HOOKS = {
    "_reset_rows": "reset_rows",
    "_step_rows": "step_rows",
    "_reset_rows_into": "reset_rows_into",
    "_step_rows_into": "step_rows_into",
    "_set_params": "set_params",
    "_results": "results_of",
    "_reset_returned": "reset_returned",
    "_step_returned": "step_returned",
}
"""The hooks' names before they were public (old -> new); a subclass that writes an old one still works,
warned."""


class HostVectorEnv(EpisodeVectorEnv):
    """A vector env whose backend says how to reset and step a set of sub-envs; the episode rules are
    this engine's, the same for every host backend (and a third party's).

    A subclass calls ``HostVectorEnv.__init__(num_envs, observation_space, action_space,
    episode_options=vecrl.EpisodeOptions(...))`` with any space gymnasium
    batches densely (``vecrl.spaces``: Box, Discrete, MultiDiscrete, MultiBinary, and Tuple and Dict spaces
    of them, whose observations are tuples and dicts of arrays nested like the space), and writes:

    - ``reset_rows(ids, seeds, options)``: reset the sub-envs ``ids`` (an int array in ascending order;
      None for every sub-env) with ``seeds`` (one per sub-env reset, None entries unseeded; None: no seeds)
      and the reset ``options`` other than ``reset_mask`` (None: none); return their observations and
      info, one row per sub-env in the order of ``ids``.
    - ``step_rows(actions, ids)``: step the sub-envs ``ids`` (None: all) with ``actions`` (one row per
      sub-env stepped); return ``(observations, rewards, terminated, truncated, info)``, one row per
      sub-env stepped, in the order of ``ids``, the rewards in ``reward_dtype`` (else they are cast), in
      arrays of its own (fresh each call: the engine writes restarted rows into them and gives them out).
      The engine never steps a sub-env whose budget is spent,
      resets the sub-envs whose episode ended (by the autoreset mode) and refuses bad actions first.
    - Optionally, for speed, ``reset_rows_into(ids, seeds, options, out)`` and ``step_rows_into(actions,
      ids, out)``: a reset or step of some sub-envs (restarts, masked resets, budget steps) that writes
      their results into their rows of the engine's arrays ``out`` (the observations; for a step also the
      rewards, terminated and truncated, the flags False in those rows) and returns their info as
      ``reset_rows`` and ``step_rows`` do. The defaults write what those return; vecrl-gym's, which steps
      one sub-env at a time, write each sub-env's row where it goes instead of into arrays of their own.

    A backend declares what more it can do in ``capabilities`` (``vecrl.Capabilities``): with
    ``steps_reset_next`` the engine leaves next_step mode's resets to the backend's own step; with
    ``infos_per_sub_env``, ``reset_rows`` and ``step_rows`` return as their info a list of the sub-envs'
    info dicts in the order of ``ids`` (or ``{}`` when none has any), which the engine batches once per
    step with gymnasium's ``_add_info`` in sub-env order, the restarted sub-envs' being their reset's, and
    gives the ended episodes' in ``info["final_info"]`` exactly as gymnasium's SyncVectorEnv of the
    installed version does; with ``resets_spent_sub_envs`` same_step mode resets a spent sub-env too.
    ``empty_info=True`` makes every info ``{}`` (no final observations either; the backend may skip its
    info work too, reading ``self.empty_info``). ``results_of(array)`` turns the numpy results into what the
    env returns (the arrays themselves here; torch tensors for a backend that returns them); a backend that
    returns its own kind of results overrides ``reset_returned`` and ``step_returned`` instead. A
    backend whose ``step_rows`` or ``reset_rows`` raises leaves the env refusing ``step()`` until a full
    ``reset()`` (``failure`` says why; the backend may set it first, naming the sub-env), since some
    sub-envs may have moved on.

    Examples:
        >>> from gymnasium.spaces import Box, Discrete
        >>> class Clock(HostVectorEnv):
        ...     '''Each sub-env counts its steps; an episode lasts 3 steps.'''
        ...     def __init__(self, num_envs, **episode_options):
        ...         options = EpisodeOptions(**episode_options)
        ...         super().__init__(num_envs, Box(0.0, 3.0, (1,), np.float32), Discrete(2), episode_options=options)
        ...         self.time = np.zeros(num_envs, np.float32)
        ...     def reset_rows(self, ids, seeds, options):
        ...         ids = slice(None) if ids is None else ids
        ...         self.time[ids] = 0.0
        ...         return self.time[ids, None].copy(), {}
        ...     def step_rows(self, actions, ids):
        ...         ids = slice(None) if ids is None else ids
        ...         self.time[ids] += 1.0
        ...         time = self.time[ids]
        ...         return time[:, None].copy(), np.ones_like(time), time >= 3.0, time < 0.0, {}
        >>> env = Clock(2, num_episodes=1)
        >>> _ = env.reset()
        >>> for _ in range(4):
        ...     observation, reward, terminated, truncated, info = env.step(np.zeros(2, np.int64))
        >>> observation.tolist(), reward.tolist(), terminated.tolist()
        ([[nan], [nan]], [nan, nan], [True, True])
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A backend written against the hooks' old private names (``_reset_rows``, ...) keeps working for one
        release: each is taken as the public hook it became, with a DeprecationWarning."""
        super().__init_subclass__(**kwargs)
        for old, new in RENAMED_HOOKS.items():
            if old in cls.__dict__ and new not in cls.__dict__:
                warnings.warn(
                    f"{cls.__qualname__}.{old} is the old name of HostVectorEnv's hook {new}: rename it (the old"
                    " name works until the next release).",
                    DeprecationWarning,
                    stacklevel=2,
                )
                setattr(cls, new, cls.__dict__[old])

    @property
    def _empty_info(self) -> bool:
        """The old name of ``empty_info``, for backends written before the hooks were public."""
        warnings.warn("HostVectorEnv._empty_info is now empty_info.", DeprecationWarning, stacklevel=2)
        return self.empty_info

    def __init__(
        self,
        num_envs: int,
        observation_space: Space,
        action_space: Space,
        *,
        episode_options: EpisodeOptions | None = None,
        reward_dtype: Any = np.float64,
        empty_info: bool = False,
        batch_size: int | None = None,
    ) -> None:
        check_supported_space(observation_space, "observation space")
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            episode_options=episode_options,
            reward_dtype=reward_dtype,
        )
        self.empty_info = checked_flag(empty_info, "empty_info")
        self._check_action = ActionCheck(action_space, num_envs, type(self).__name__)
        self._reward_dtype = np.dtype(reward_dtype)
        self._budget: EpisodeBudget | None = None
        if self._num_episodes is not None:
            self._budget = EpisodeBudget(num_envs, self._num_episodes, observation_space, reward_dtype)
        self._paused_only = False  # whether the budget is pause()'s alone, dropped at the next full reset
        self._no_results = spent_results(observation_space, np.zeros(num_envs, np.bool_), reward_dtype)
        # next_step mode: which sub-envs the next step resets (their actions are ignored, so not checked)
        self._resetting: np.ndarray = np.zeros(num_envs, np.bool_)
        # whether a step must find the episodes that ended: to restart them (same_step) or count them against a
        # budget (next_step resets them at the next step, and the disabled mode's bookkeeping is the base's)
        self._tracks_ends = self._autoreset_mode == "same_step" or self._budget is not None
        self._next_step = self._autoreset_mode == "next_step"
        self._no_ends = bytes(num_envs)  # the bytes of a bool flag per sub-env, all False
        self._last_observation: Any = None  # for masked resets, which keep the other rows
        # what the env returns for a batch of observations: ``results_of`` of the array, or of each of its leaves
        self._tree_observations = not isinstance(observation_space, ARRAY_SPACES)
        self._tree_actions = not isinstance(action_space, ARRAY_SPACES)
        self._calling = "step()"  # what the env is doing ("reset()" within a reset), for a failure's message
        self._observation_results = (
            partial(map_batch, self.results_of) if self._tree_observations else self.results_of
        )
        # envpool's async API, gathered into lockstep steps (vecrl.gathered_batches), where batch_size is given
        self._batches = None if batch_size is None else GatheredBatches(self, batch_size)

    def reset_rows(
        self, ids: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> Any:
        """Reset the sub-envs ``ids`` (None: all); their ``(observations, info)`` (see the class)."""
        raise NotImplementedError

    def async_reset(self, seed: Any = None, options: Any = None) -> None:
        """Reset every sub-env for async batches (``batch_size``): ``vecrl.gathered_batches``."""
        self._gathered_batches("async_reset").async_reset(seed=seed, options=options)

    def send(self, action: Any, env_id: Any) -> None:
        """Give a batch ``recv()`` handed out its actions (``vecrl.gathered_batches``)."""
        self._gathered_batches("send").send(action, env_id)

    def recv(self) -> tuple[Any, ...]:
        """The next batch's results (``vecrl.gathered_batches``)."""
        return self._gathered_batches("recv").recv()

    def _gathered_batches(self, method: str) -> GatheredBatches:
        if self._batches is None:
            raise AttributeError(
                f"{method}() steps async batches of sub-envs, which {type(self).__name__} was made without: give"
                f" batch_size=k (a divisor of num_envs={self.num_envs}) where its backend takes it"
                " (make_vector_env('gym::...', num_envs=n, batch_size=k) steps them in worker processes);"
                " step() steps every sub-env."
            )
        return self._batches

    def step_rows(self, actions: np.ndarray, ids: np.ndarray | None) -> StepRows:
        """Step the sub-envs ``ids`` (None: all) with ``actions``; their results (see the class)."""
        raise NotImplementedError

    def set_params(self, ids: np.ndarray | None, params: dict[str, np.ndarray]) -> None:
        """Give the sub-envs ``ids`` (None: all) the parameters ``params`` (the names given, one row per sub-env
        of ``ids``) and the defaults of every other name of ``default_params``, before the reset that starts
        their next episode. A backend that declares ``default_params`` writes it; the engine has checked the
        values."""
        raise NotImplementedError(
            f"{type(self).__name__} declares parameters but does not say how to set them."
        )

    def reset_rows_into(
        self, ids: np.ndarray, seeds: list[Any] | None, options: dict[str, Any] | None, out: Any
    ) -> Any:
        """Reset the sub-envs ``ids``, writing their observations into their rows of ``out``; their info (see
        the class)."""
        observation, info = self.reset_rows(ids, seeds, options)
        write_rows(out, ids, observation)
        return info

    def step_rows_into(self, actions: Any, ids: np.ndarray, out: tuple[Any, ...]) -> Any:
        """Step the sub-envs ``ids`` with ``actions``, writing their results into their rows of ``out``; their
        info (see the class)."""
        observation, reward, terminated, truncated, info = self.step_rows(actions, ids)
        write_rows(out[0], ids, observation)
        out[1][ids] = reward
        if np.count_nonzero(terminated) or np.count_nonzero(truncated):  # (else False already)
            out[2][ids], out[3][ids] = terminated, truncated
        return info

    def results_of(self, array: np.ndarray) -> Any:
        """What the env returns for the numpy ``array`` of a result (the array itself)."""
        return array

    def reset(
        self, *, seed: Any = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start a new episode in every sub-env, or in those of ``options["reset_mask"]`` (the other rows of
        the observations are those last returned), and restart their episode budgets.

        ``seed`` is an int (by the env's ``seed_rule``) or one seed per sub-env; without one (None) the seed
        given to ``seed()`` is used, if any (``vecrl.episode_vector_env``).
        """
        mask, seeds, rest = self._reset_request(seed, options, started=self._last_observation is not None)
        params = rest.pop(PARAMS_OPTION, None) if rest else None
        rest = rest or None
        self._calling = "reset()"
        try:
            if params is not None:
                ids_set = None if mask is None else np.flatnonzero(mask)
                self.set_params(ids_set, params_rows(params, ids_set))
            if mask is None:
                observation, info = self.reset_rows(None, seeds, rest)
                info = self._batched_info(info)
                self._resetting[:] = False
                self.failure = None
            else:
                # (a masked reset before the first reset was refused)
                assert self._last_observation is not None
                ids = np.flatnonzero(mask)
                observation = copy_batch(self._last_observation)
                some_seeds = None if seeds is None else [seeds[i] for i in ids]
                part = self.reset_rows_into(ids, some_seeds, rest, observation)
                info = self._batched_info(self._info_with_rows({}, part, ids))
                self._resetting[ids] = False
        except BaseException as error:
            self._fail(error)
        if self._paused_only and mask is None:
            self._budget, self._paused_only = None, False
        elif self._budget is not None:
            self._budget.restart(mask)
        self._calling = "step()"
        self._note_reset(mask)
        self._last_observation = observation
        return self.reset_returned(observation, info)

    def pause(self, mask: Any) -> None:
        """Stop stepping the sub-envs of ``mask`` (a bool per sub-env) until a reset restarts them: from the
        next step on they cost nothing and report what a spent budget reports (NaN observation and reward,
        terminated = truncated = True), their actions unread. ``vecrl_evaluate.evaluate`` pauses the
        sub-envs whose rows are done, on an env made without ``num_episodes``. Same-step autoreset only.

        Examples:
            >>> from gymnasium.spaces import Box, Discrete
            >>> class Ones(HostVectorEnv):  # a reward of 1 a step, episodes that never end
            ...     def reset_rows(self, ids, seeds, options):
            ...         return np.zeros((self.num_envs if ids is None else len(ids), 1), np.float32), {}
            ...     def step_rows(self, actions, ids):
            ...         n = self.num_envs if ids is None else len(ids)
            ...         return np.zeros((n, 1), np.float32), np.ones(n), np.zeros(n, bool), np.zeros(n, bool), {}
            >>> env = Ones(2, Box(-1.0, 1.0, (1,), np.float32), Discrete(2))
            >>> _ = env.reset()
            >>> env.pause(np.array([False, True]))
            >>> _, reward, terminated, _, _ = env.step(np.zeros(2, np.int64))
            >>> reward.tolist(), terminated.tolist()
            ([1.0, nan], [False, True])
        """
        if self._autoreset_mode != "same_step":
            raise ValueError(
                f"pause() needs same_step autoreset; this env's autoreset mode is {self._autoreset_mode!r}."
            )
        mask = np.asarray(mask, dtype=np.bool_)
        if mask.shape != (self.num_envs,):
            raise ValueError(
                f"pause() takes a bool per sub-env, shape ({self.num_envs},); got shape {mask.shape}."
            )
        if self._last_observation is None or not mask.any():
            return
        if self._budget is None:
            self._budget = EpisodeBudget(
                self.num_envs, _UNLIMITED, self.single_observation_space, self._reward_dtype
            )
            self._paused_only = True
        self._budget.spend(mask)

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every live sub-env with its row of ``action`` (shape ``(num_envs, *action_shape)``); returns
        ``(observation, reward, terminated, truncated, info)``. A bad action is a ValueError before anything
        steps."""
        if self._last_observation is None or self.failure is not None:
            self._refuse_step()
        if self._finished is not None:  # (autoreset disabled)
            self._refuse_finished()
        budget = self._budget
        ids = None if budget is None else budget.live_ids
        resetting = self._resetting if self._next_step and self._resetting.any() else None
        rows = (None if budget is None else budget.live) if resetting is None else self._acting(resetting)
        actions = self._check_action(action, rows)
        try:
            if ids is None and (resetting is None or self.capabilities.steps_reset_next):
                observation, reward, terminated, truncated, info = self.step_rows(actions, None)
                if reward.dtype is not self._reward_dtype and reward.dtype != self._reward_dtype:
                    reward = reward.astype(self._reward_dtype)
            else:
                observation, reward, terminated, truncated, info = self._step_some(actions, budget, resetting)
            # Did an episode end? The flags' bytes differ from those of a step where none did: all False, or
            # True at the spent sub-envs (a twentieth of the time of any(); flags of another dtype differ).
            quiet = self._no_ends if budget is None else budget.start[2].tobytes()
            flagged = self._tracks_ends and (terminated.tobytes() != quiet or truncated.tobytes() != quiet)
            if flagged or self._next_step:  # (next_step: what the next step resets, every step)
                ends = step_ends(
                    self._autoreset_mode,
                    budget is not None,
                    None if budget is None else budget.left,
                    self._resetting if self._next_step else None,
                    terminated,
                    truncated,
                )
                if self._next_step:
                    self._resetting = ends.needs_reset
                if flagged and ends.ended.any():
                    observation, info = self._episodes_ended(ends, observation, info)
        except BaseException as error:
            self._fail(error)
        if type(info) is list:  # (per-sub-env infos: infos_per_sub_env)
            info = self._batched_info(info)
        if self._autoreset_mode == "disabled":
            self._note_ended(terminated | truncated)
        self._last_observation = observation
        return self.step_returned(observation, reward, terminated, truncated, info)

    def reset_returned(self, observation: Any, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """What ``reset()`` returns for the numpy ``observation`` and batched ``info``."""
        return self._observation_results(observation), info

    def step_returned(
        self, observation: Any, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, info: Any
    ) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """What ``step()`` returns for its numpy results and batched ``info``."""
        out = self.results_of
        return self._observation_results(observation), out(reward), out(terminated), out(truncated), info

    def acting_rows(self) -> list[int] | None:
        """The sub-envs whose action the next ``step()`` uses (None: all of them): not those of a spent budget,
        nor, in next_step mode, those it resets. Only their actions are checked.

        Examples:
            >>> import gymnasium
            >>> from vecrl_gym import SyncVectorEnv
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_episodes=1)
            >>> _ = env.reset(seed=0)
            >>> env.acting_rows() is None
            True
        """
        return self._acting(self._resetting if self._next_step and self._resetting.any() else None)

    def _acting(self, resetting: np.ndarray | None) -> list[int] | None:
        """``acting_rows()``, given the sub-envs the step resets (None: none)."""
        budget = self._budget
        if resetting is None:  # (the budget keeps its acting sub-envs between spends)
            return None if budget is None else budget.live
        acting = acting_sub_envs(None if budget is None else budget.left, resetting)
        assert acting is not None  # (some sub-envs are resetting)
        return np.flatnonzero(acting).tolist()

    def _refuse_step(self) -> NoReturn:
        """Raise why ``step()`` cannot go on: the env is closed, an error left it out of step, or it was never
        reset."""
        if self.closed:
            raise closed_env_error("step", self)
        if self.failure is not None:
            raise failed_env_error(self.failure)
        raise RuntimeError("step() was called before reset(); call reset() first.")

    def _fail(self, error: BaseException) -> NoReturn:
        """Refuse ``step()`` from now on (until a full reset): the backend raised ``error`` mid-way, so some
        sub-envs may have moved on; raise it again."""
        if self.failure is None:
            self.failure = f"{type(self).__name__}.{self._calling} raised {type(error).__qualname__}"
        raise error

    def _step_some(
        self, actions: np.ndarray, budget: EpisodeBudget | None, resetting: np.ndarray | None
    ) -> StepRows:
        """Step the live sub-envs but those next_step resets, and reset those: every row of the results
        (the spent sub-envs' as ``vecrl.episodes`` says; a reset sub-env reports reward 0 and neither flag)."""
        start = self._no_results if budget is None else budget.start
        observation = copy_batch(start[0])
        reward, terminated, truncated = start[1].copy(), start[2].copy(), start[3].copy()
        live = None if budget is None else budget.live_ids
        ids = np.arange(self.num_envs) if live is None else live
        restarting = None
        if resetting is not None and not self.capabilities.steps_reset_next:
            restarting, ids = ids[resetting[ids]], ids[~resetting[ids]]
        info: dict[str, Any] = {}
        if len(ids):
            rows = map_batch(lambda leaf: leaf[ids], actions) if self._tree_actions else actions[ids]
            part = self.step_rows_into(rows, ids, (observation, reward, terminated, truncated))
            info = self._info_with_rows(info, part, ids)
        if restarting is not None and len(restarting):
            part = self.reset_rows_into(restarting, None, None, observation)
            info = self._info_with_rows(info, part, restarting)
        return observation, reward, terminated, truncated, info

    def _episodes_ended(
        self, ends: StepEnds, observation: Any, info: dict[str, Any]
    ) -> tuple[Any, dict[str, Any]]:
        """Take the budget the step's episode ends left (``ends``: ``vecrl.episodes.step_ends``'s), and in
        same_step mode restart the sub-envs with episodes left, as gymnasium does: their final observations and
        infos in ``info`` (``vecrl.final_observations``, ``final_infos``), the reset's info in their rows."""
        done, restart = ends.ended, ends.restart
        if self._budget is not None:
            self._budget.take(ends.episodes_left)
        ids = restart.nonzero()[0]
        if self._autoreset_mode != "same_step":
            return observation, info
        finals: dict[str, Any] = {}
        if not self.empty_info:  # the final observations: the step's, before the restarts written below
            finals = self._finals(copy_batch(observation) if len(ids) else observation, info, done)
        if (
            self.capabilities.resets_spent_sub_envs and restart is not done
        ):  # (their rows keep the step's results)
            spent = (done & ~restart).nonzero()[0]
            if len(spent):
                self.reset_rows_into(spent, None, None, copy_batch(observation))
        if len(ids):  # (in place: the step's arrays are fresh each step)
            part = self.reset_rows_into(ids, None, None, observation)
            if part or info:  # (into copies: the final infos hold the step's arrays)
                info = self._info_with_rows(info, part, ids, copy=True)
        if finals:
            info = {**self._batched_info(info), **finals} if info else finals
        return observation, info

    def _finals(self, observation: Any, info: Any, ended: np.ndarray) -> dict[str, Any]:
        """The info keys of the episodes that ``ended`` at a same_step step: their last observations (the
        step's ``observation`` before any restart, ``vecrl.final_observations``) and infos (``final_infos``),
        each with its mask."""
        mask = self.results_of(ended)
        finals = {FINAL_OBS_KEY: self._observation_results(observation), FINAL_OBS_MASK_KEY: mask}
        finals.update(
            final_infos(info, mask, self._add_info, per_sub_env=self.capabilities.infos_per_sub_env)
        )
        return finals

    def _info_with_rows(self, info: Any, part: Any, ids: np.ndarray, *, copy: bool = False) -> Any:
        """A step's ``info`` with the info ``part`` of the sub-envs ``ids`` in their rows (``with_rows``); for a
        backend with ``infos_per_sub_env``, a list of every sub-env's info dict with those of ``ids`` replaced
        (``{}``: none yet)."""
        if self.empty_info:
            return {}
        if not self.capabilities.infos_per_sub_env:
            return with_rows(info, part, ids, self.num_envs, copy=copy)
        if not (part or info):
            return {}
        infos = list(info) if info else [{}] * self.num_envs
        for position, index in enumerate(ids.tolist()):
            infos[index] = part[position] if part else {}
        return infos

    def _batched_info(self, info: Any) -> dict[str, Any]:
        """The info a step or reset returns: ``info`` itself, or for a backend with ``infos_per_sub_env``
        its sub-envs' dicts batched by gymnasium's ``_add_info`` in sub-env order."""
        if self.empty_info:
            return {}
        if isinstance(info, dict):
            return info
        batched: dict[str, Any] = {}
        for index, sub_env_info in enumerate(info):
            if sub_env_info:
                batched = self._add_info(batched, sub_env_info, index)
        return batched


def with_rows(
    info: dict[str, Any], part: Mapping[str, Any], ids: np.ndarray, num_envs: int, *, copy: bool = False
) -> dict[str, Any]:
    """``info`` with the info ``part`` of the sub-envs ``ids`` written into its rows: each array of
    ``part`` with one row per id goes into rows ``ids`` of an array with a row per sub-env (zeros in the
    others where ``info`` has none yet; with ``copy``, a copy of ``info``'s, which stays as it was); other
    values are taken as they are.

    Examples:
        >>> with_rows({}, {"elapsed": np.array([5, 7])}, np.array([0, 2]), 3)
        {'elapsed': array([5, 0, 7])}
    """
    info = dict(info)
    for key, value in part.items():
        if is_row_array(value, len(ids)):
            full = info.get(key)
            if not (isinstance(full, np.ndarray) and full.shape[1:] == value.shape[1:]):
                full = np.zeros((num_envs, *value.shape[1:]), value.dtype)
            elif copy:
                full = full.copy()
            full[ids] = value
            value = full
        info[key] = value
    return info
