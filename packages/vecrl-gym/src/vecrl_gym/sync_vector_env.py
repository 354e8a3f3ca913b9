"""SyncVectorEnv: gymnasium envs stepped in lockstep, with gymnasium's three autoreset modes."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn, SupportsFloat

import gymnasium
import numpy as np
import torch
from gymnasium.vector.utils import iterate

from vecrl.action_checks import ActionCheck
from vecrl.autoreset import autoreset_metadata
from vecrl.checks import (
    SubEnvError,
    check_fits_in_memory,
    closed_env_error,
    failed_env_error,
)
from vecrl.compat import GYMNASIUM_1
from vecrl.episodes import EpisodeBudget, spent_results
from vecrl.seeding import SeedRule
from vecrl.spaces import ARRAY_SPACES, check_supported_space, copy_batch
from vecrl_gym.batching import (
    TreeRows,
    allocate_observations,
    observations_to_torch,
)
from vecrl_gym.checks import (
    ObservationMode,
    attribute_values,
    check_same_spaces,
    checked_env_makers,
    observation_spaces,
)
from vecrl_gym.device import info_to_device
from vecrl_gym.final_infos import EndedEpisode, add_final_infos
from vecrl_gym.gym_vector_env import GymVectorEnv, Seed
from vecrl_gym.tensor_rows import TensorRows

EnvMaker = Callable[[], gymnasium.Env]


class SyncVectorEnv(GymVectorEnv):
    """Sub-environments stepped one after the other, reset as ``autoreset_mode`` says.

    - ``"same_step"`` (the default): a sub-env whose episode ends is reset within the same ``step()``;
      the observation returned for it is the first one of its next episode, while the last observation
      and info of the finished episode are in ``info`` under gymnasium's keys (``"final_obs"`` on
      gymnasium 1.x, ``"final_observation"`` on 0.29, and ``"final_info"``, each with its ``"_<key>"``
      mask), the final observations as a batch like the observations (``vecrl.final_observations``).
    - ``"next_step"``: the step that ends an episode returns its last observation; the next ``step()``
      resets that sub-env, ignores its action and reports reward 0, ``terminated = truncated = False``
      and the reset's info (gymnasium 1.x's default).
    - ``"disabled"``: no autoreset. Reset finished sub-envs with ``reset(options={"reset_mask": mask})``;
      stepping one before that is a RuntimeError.

    Each mode steps exactly like ``gymnasium.vector.SyncVectorEnv(..., autoreset_mode=...)`` given the
    same per-env seeds and actions (with ``seed_rule="gymnasium"``, given the same ``reset(seed=S)``).
    gymnasium's ``AutoresetMode`` enum and its spellings (``"NextStep"``) are accepted too; the
    ``autoreset_mode`` attribute and ``metadata["autoreset_mode"]`` hold the enum on gymnasium >= 1.1 and
    the name on older ones, where the three modes work all the same.

    ``reset(options={"reset_mask": mask})`` (in every mode) resets only the sub-envs where ``mask`` (a
    bool array, tensor or list of length ``num_envs``) is True, seeding only those; the other rows of the
    returned observations are those last returned.

    A sub-env that raises in ``step()`` or ``reset()`` is named in a ``vecrl.SubEnvError`` that
    chains its exception; the other sub-envs may have stepped already, so the env then refuses ``step()``
    until ``reset()``. Actions are checked before any sub-env steps (shape, and for a Discrete space
    integer dtype and range, in the sub-envs that step: those of a spent budget ignore theirs), so a bad
    action changes nothing. ``step()`` and ``reset()`` after
    ``close()`` raise. As in gymnasium, sub-envs whose spaces differ are a RuntimeError and a 0-d
    (scalar) action a TypeError.

    Args:
        env_makers: functions without arguments, each making one sub-environment (a sequence is read one
            maker at a time, so a lazy one of any length is fine: the sub-envs must fit in memory, which is
            checked once two are made, before the rest).
        empty_info: always report ``info`` as ``{}`` and skip all per-step info work.
        num_episodes: run each sub-env for this many episodes. On the step where its last episode
            ends it reports that episode's final observation and reward; from then on, until the next
            ``reset()`` (of that sub-env), it reports terminated = truncated = True, a NaN observation (0
            for integer dtypes) and a NaN reward. In ``next_step`` mode the budget is counted the same way
            (the reset step that would start one episode too many is not taken); with ``disabled``
            autoreset it is a ValueError, since the user starts every episode.
        device: return torch tensors on this device instead of numpy arrays.
        autoreset_mode: ``"same_step"``, ``"next_step"`` or ``"disabled"`` (see above).
        seed_rule: how ``reset(seed=S)`` seeds the sub-envs: ``"evotorch"`` (the default) draws their
            seeds from ``numpy.random.RandomState(S)``, as EvoTorch does; ``"gymnasium"`` gives sub-env
            ``i`` the seed ``S + i``, as gymnasium's vector envs do.
        observation_mode: as in gymnasium's vector envs (>= 1.0): ``"same"`` (the default), ``"different"``
            (observation spaces of one shape and dtype with bounds of their own, batched by gymnasium's
            ``batch_differing_spaces``) or ``(batched space, single space)``.

    Every space gymnasium batches densely works, for observations and actions alike: Box (of any
    dtype), Discrete, MultiDiscrete, MultiBinary, and Tuple and Dict spaces of them, nested. They are
    batched as ``gymnasium.vector.utils`` batches them (Tuple and Dict as tuples and dicts of arrays),
    and actions of Tuple and Dict spaces are given alike (numpy arrays, tensors or lists as leaves).
    Arrays returned by ``reset()`` and ``step()`` are fresh on every call: keeping them is safe. (On the
    CPU, ``step()``'s tensors are rows of small blocks made for several steps at once, each row given
    out once: see ``TensorRows``.)

    Examples:
        >>> import gymnasium, numpy as np
        >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(np.array([0, 1, 0]))
        >>> obs.shape, reward.tolist()
        ((3, 4), [1.0, 1.0, 1.0])
    """

    def __init__(
        self,
        env_makers: Iterable[EnvMaker],
        *,
        empty_info: bool = False,
        num_episodes: int | None = None,
        device: str | torch.device | None = None,
        autoreset_mode: Any = "same_step",
        seed_rule: SeedRule = "evotorch",
        observation_mode: ObservationMode = "same",
    ) -> None:
        makers = checked_env_makers(env_makers, "SyncVectorEnv")
        self._take_options(
            empty_info=empty_info,
            num_episodes=num_episodes,
            device=device,
            autoreset_mode=autoreset_mode,
            seed_rule=seed_rule,
            observation_mode=observation_mode,
        )
        envs = _make_sub_envs(makers)
        try:
            check_same_spaces(envs, self.observation_mode)
            single, batched = observation_spaces(
                self.observation_mode, [env.observation_space for env in envs]
            )
            super().__init__(len(envs), single, envs[0].action_space)
            if batched is not None:
                self.observation_space = batched
        except BaseException:
            for env in envs:
                env.close()
            raise

        self.envs: list[gymnasium.Env] = envs
        self.metadata = {**getattr(envs[0], "metadata", {}), **autoreset_metadata(self._autoreset_mode)}
        self.render_mode = getattr(envs[0], "render_mode", None)

        obs_space, action_space = self.single_observation_space, self.single_action_space
        self._tree_observations = not isinstance(obs_space, ARRAY_SPACES)
        self._tree_actions = not isinstance(action_space, ARRAY_SPACES)
        self._check_actions = ActionCheck(action_space, self.num_envs, "SyncVectorEnv")
        # Episodes still to run per sub-env (None: autoreset forever): vecrl.episodes.EpisodeBudget.
        self._budget: EpisodeBudget | None = None
        if self._num_episodes is not None:
            self._budget = EpisodeBudget(self.num_envs, self._num_episodes, obs_space)
        # What a step writes only for some sub-envs, so that its arrays start as a copy: False flags, and
        # under a spent budget what the spent sub-envs report (the budget's ``start``, _update_live).
        self._initial_results = spent_results(obs_space, np.zeros(self.num_envs, np.bool_))
        # On the CPU, step results and info masks are rows of tensors made many at a time (TensorRows).
        self._result_rows: TensorRows | None = None
        self._mask_rows: TensorRows | None = None
        if self._device is not None and self._device.type == "cpu":
            self._mask_rows = TensorRows([np.zeros(self.num_envs, np.bool_)] * 2)
            if not self._tree_observations:
                self._result_rows = TensorRows(self._initial_results)
        self._env_steps = [env.step for env in envs]
        self._env_resets = [env.reset for env in envs]
        # _unusable is "failed (_failure) or closed" in one flag, so that step() checks a single attribute on
        # its hot path.
        self._unusable = False
        # The step loop of the chosen mode: picked once here, so no step pays for branching on the mode.
        self._step_sub_envs = {
            "same_step": self._step_same_step,
            "next_step": self._step_next_step,
            "disabled": self._step_disabled,
        }[self._autoreset_mode]
        # Sub-envs whose episode ended and which the next step resets (next_step; the disabled mode's are
        # EpisodeVectorEnv's).
        self._needs_reset = [False] * self.num_envs
        # The observations last returned (numpy arrays), for the untouched rows of a masked reset.
        self._last_observations: Any = None
        # The budget's live sub-envs, when some are spent (None: all), and their step functions: only these are
        # stepped and have their actions checked, so that a step costs in proportion to the sub-envs still
        # running; the spent rows of a step's arrays come filled (_initial_results).
        self._live: list[int] | None = None
        self._live_env_steps: list[Any] = []

    def reset(
        self,
        *,
        seed: Seed = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs and restart their episode budgets; returns ``(observations, info)``.

        ``seed`` is as in ``seed()``; without one (None) the seed given to ``seed()`` is used, if any
        (``vecrl.episode_vector_env``). ``options`` go to every reset sub-env's ``reset``,
        except ``options["reset_mask"]``: a bool array of length ``num_envs`` choosing the sub-envs to
        reset (and to seed); the other rows keep the observations last returned.

        Examples:
            >>> import gymnasium, numpy as np
            >>> env = SyncVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 2)
            >>> obs, info = env.reset(seed=[1, 2], options={"x_init": 0.5})
            >>> again, _ = env.reset(seed=[1, 3], options={"reset_mask": np.array([False, True])})
            >>> bool((again[0] == obs[0]).all()), bool((again[1] == obs[1]).all())
            (True, False)
        """
        mask, seeds, options = self._reset_request(seed, options, started=self._last_observations is not None)
        seeds = seeds or [None] * self.num_envs

        if mask is None:
            indices: Iterable[int] = range(self.num_envs)
            observations = self._new_observations(None)
        else:
            indices = np.flatnonzero(mask).tolist()
            observations = self._new_observations(copy_batch(self._last_observations))
        infos: dict[str, Any] = {}
        needs_reset, env_resets = self._needs_reset, self._env_resets
        index = -1
        try:
            for index in indices:
                observations[index], info = env_resets[index](seed=seeds[index], options=options)
                if info and not self._empty_info:
                    infos = self._add_info(infos, info, index)
                needs_reset[index] = False
        except BaseException as error:
            self._fail(index, "reset()", error)
        if mask is None:
            self._failure, self._unusable = None, False
        self._note_reset(mask)
        if self._budget is not None:
            self._budget.restart(mask)
            self._update_live()
        observations = self._finished_observations(observations)
        if self._device is not None:
            return observations_to_torch(observations, self._device), info_to_device(infos, self._device)
        return observations, infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every sub-env with its row of ``actions``; returns ``(obs, reward, terminated, truncated,
        info)`` batched over the sub-envs.

        ``actions`` (numpy array, torch tensor or nested list) must have the shape ``(num_envs,
        *single_action_space.shape)``; for a Tuple or Dict action space, a tuple or dict of such batches.
        Finished episodes are handled as ``autoreset_mode`` says.

        Examples:
            >>> import gymnasium, torch
            >>> env = SyncVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 2, device="cpu")
            >>> _ = env.reset(seed=0)
            >>> env.step(torch.zeros(2, 1))[1].dtype
            torch.float64
        """
        if self._unusable:
            self._refuse_step()
        live = self._live
        actions = self._check_actions(actions, self.acting_rows())
        if self._tree_actions:
            actions = list(iterate(self.action_space, actions))
        if live is not None:
            actions = [actions[index] for index in live]
        observations: Any
        tensors: tuple[torch.Tensor, ...] | None = None
        if self._result_rows is not None:
            (observations, rewards, terminated, truncated), tensors = self._result_rows.next_row()
        else:
            observations, rewards, terminated, truncated = self._new_arrays()
        infos = self._step_sub_envs(
            actions, observations, rewards, terminated, truncated, None if self._empty_info else {}
        )
        budget = self._budget
        if budget is not None and budget.changed:
            budget.update()
            self._update_live()
        observations = self._finished_observations(observations)
        if infos is None:
            infos = {}
        device = self._device
        if device is None:
            return observations, rewards, terminated, truncated, infos
        if infos:
            infos = info_to_device(infos, device)
        if tensors is not None:
            return tensors[0], tensors[1], tensors[2], tensors[3], infos
        return (
            observations_to_torch(observations, device),
            torch.from_numpy(rewards).to(device),
            torch.from_numpy(terminated).to(device),
            torch.from_numpy(truncated).to(device),
            infos,
        )

    def _step_same_step(
        self,
        actions: np.ndarray,
        observations: Any,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        infos: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """Step every sub-env, resetting in place those whose episode ends (same_step autoreset)."""
        ended: list[EndedEpisode] = []
        index = -1
        try:
            for index, env_step, action in self._live_sub_envs(actions):
                observation, reward, term, trunc, info = env_step(action)
                if term or trunc:
                    terminated[index] = term
                    truncated[index] = trunc
                    ended.append((index, observation, info))
                    observation, info = self._end_episode(index, observation, info)
                if info and infos is not None:
                    infos = self._add_info(infos, info, index)
                observations[index] = observation
                rewards[index] = reward
        except BaseException as error:
            self._fail(index, "step()", error)
        if ended and infos is not None:
            infos = self._add_final_infos(infos, ended, observations)
        return infos

    def _step_next_step(
        self,
        actions: np.ndarray,
        observations: Any,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        infos: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """Step every sub-env; those whose episode ended at the previous step are reset instead and their
        action ignored (next_step autoreset)."""
        budget, needs_reset, env_resets = self._budget, self._needs_reset, self._env_resets
        index = -1
        try:
            for index, env_step, action in self._live_sub_envs(actions):
                if needs_reset[index]:
                    observation, info = env_resets[index]()
                    reward: SupportsFloat = 0.0
                    needs_reset[index] = False
                else:
                    observation, reward, term, trunc, info = env_step(action)
                    if term or trunc:
                        terminated[index] = term
                        truncated[index] = trunc
                        needs_reset[index] = True
                        if budget is not None:
                            budget.end(index)
                if info and infos is not None:
                    infos = self._add_info(infos, info, index)
                observations[index] = observation
                rewards[index] = reward
        except BaseException as error:
            self._fail(index, "step()", error)
        return infos

    def _step_disabled(
        self,
        actions: np.ndarray,
        observations: Any,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        infos: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """Step every sub-env, none of which may have a finished episode (autoreset disabled)."""
        self._refuse_finished()
        ended = False
        index = -1
        try:
            for index, env_step, action in zip(range(self.num_envs), self._env_steps, actions, strict=True):
                observation, reward, term, trunc, info = env_step(action)
                if term or trunc:
                    terminated[index] = term
                    truncated[index] = trunc
                    ended = True
                if info and infos is not None:
                    infos = self._add_info(infos, info, index)
                observations[index] = observation
                rewards[index] = reward
        except BaseException as error:
            self._fail(index, "step()", error)
        if ended:
            self._note_ended(terminated | truncated)
        return infos

    def _live_sub_envs(self, actions: Any) -> Iterable[tuple[int, Any, Any]]:
        """``(index, step function, action)`` of every sub-env to step: all of them, or under a budget those
        whose budget is not spent (``actions`` then holds their actions only)."""
        live = self._live
        if live is None:
            return zip(range(self.num_envs), self._env_steps, actions, strict=True)
        return zip(live, self._live_env_steps, actions, strict=True)

    def acting_rows(self) -> list[int] | None:
        """The sub-envs whose action the next ``step()`` uses (None: all of them): not those of a spent budget,
        nor, in next_step mode, those it resets. Only their actions are checked.

        Examples:
            >>> import gymnasium
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_episodes=1)
            >>> _ = env.reset(seed=0)
            >>> env.acting_rows() is None
            True
        """
        live, resetting = self._live, self._needs_reset
        if self._autoreset_mode != "next_step" or True not in resetting:
            return live
        return [index for index in (range(self.num_envs) if live is None else live) if not resetting[index]]

    def _update_live(self) -> None:
        """Take the budget's live sub-envs (after a reset, or a step that spent one), and make the arrays
        of the next steps start with what the spent ones report."""
        assert self._budget is not None
        self._live = self._budget.live
        self._live_env_steps = [self._env_steps[index] for index in self._live or ()]
        self._initial_results = self._budget.start
        if self._result_rows is not None:
            self._result_rows.start_from(self._initial_results)

    def _fail(self, index: int, during: str, error: BaseException) -> NoReturn:
        """Refuse step() from now on (until a full reset) and raise: a SubEnvError naming sub-env ``index``
        and chaining ``error``, or ``error`` itself when it is no Exception (Ctrl-C)."""
        self._failure = f"sub-env {index} raised {type(error).__qualname__} in {during}"
        self._unusable = True
        if not isinstance(error, Exception):
            raise error
        raise SubEnvError(index, during, error) from error

    def _refuse_step(self) -> NoReturn:
        if self.closed:
            raise closed_env_error("step", self)
        assert self._failure is not None
        raise failed_env_error(self._failure)

    def _new_arrays(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Fresh arrays to write a step's observations, rewards, terminated and truncated into, copies of
        ``_initial_results``: the flags start False, since only the sub-envs whose episode ends write them."""
        observations, rewards, terminated, truncated = self._initial_results
        observations = copy_batch(observations)
        if self._tree_observations:
            observations = TreeRows(observations)
        return observations, rewards.copy(), terminated.copy(), truncated.copy()

    def _add_final_infos(
        self, infos: dict[str, Any], ended: list[EndedEpisode], observations: Any
    ) -> dict[str, Any]:
        """``infos`` with the last observations and infos of the ``ended`` episodes, the step's
        ``observations`` (as ``_new_observations()`` gave them) for the other rows (see ``add_final_infos``)."""
        if isinstance(observations, TreeRows):
            observations = observations.arrays
        return add_final_infos(infos, ended, observations, self._add_info, self._new_masks)

    def _new_masks(self) -> tuple[Sequence[np.ndarray], Sequence[Any]]:
        """Two zeroed bool arrays of length ``num_envs`` for info masks, and what to report for each."""
        if self._mask_rows is not None:
            return self._mask_rows.next_row()
        masks = (np.zeros(self.num_envs, np.bool_), np.zeros(self.num_envs, np.bool_))
        return masks, masks

    def _new_observations(self, arrays: Any) -> Any:
        """Something to write one observation per sub-env into (``rows[i] = obs``): ``arrays`` if given
        (the batched observations to update), else freshly allocated."""
        if arrays is None:
            arrays = allocate_observations(self.single_observation_space, self.num_envs)
        return TreeRows(arrays) if self._tree_observations else arrays

    def _finished_observations(self, observations: Any) -> Any:
        """The batched observations written through ``_new_observations()`` or ``_new_arrays()``, kept for
        masked resets."""
        if self._tree_observations:
            observations = observations.arrays
        self._last_observations = observations
        return observations

    def _end_episode(self, index: int, observation: Any, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Reset sub-env ``index`` whose episode just ended; give the observation and info to report.

        The sub-env is reset even when its budget is spent (as EvoTorch does), so that its random state
        advances exactly as in the reference implementation.
        """
        next_observation, next_info = self._env_resets[index]()
        budget = self._budget
        if budget is not None and budget.end(index):
            return observation, info
        return next_observation, next_info

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env (or read the attribute ``name``); one result each.

        Examples:
            >>> import gymnasium
            >>> SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2).call("get_wrapper_attr", "gravity")
            (9.8, 9.8)
        """
        results = []
        for env in self.envs:
            attribute = env.get_wrapper_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return tuple(results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env (looked up through its wrappers).

        Examples:
            >>> import gymnasium
            >>> SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2).get_attr("gravity")
            (9.8, 9.8)
        """
        return tuple(env.get_wrapper_attr(name) for env in self.envs)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env: a list or tuple gives one value per sub-env, any
        other value is given to all.

        Examples:
            >>> import gymnasium
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
            >>> env.set_attr("gravity", [9.8, 1.6]); env.get_attr("gravity")
            (9.8, 1.6)
        """
        values = attribute_values(name, values, self.num_envs)
        for env, value in zip(self.envs, values, strict=True):
            if GYMNASIUM_1:
                env.set_wrapper_attr(name, value)
            else:  # gymnasium 0.29 has no set_wrapper_attr; its SyncVectorEnv uses setattr
                setattr(env, name, value)

    def render(self) -> tuple[Any, ...]:
        """The frames the sub-envs render (their ``render_mode`` is set when they are made)."""
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (``close()`` calls this once; closing again does nothing); from now on
        ``step()`` and ``reset()`` raise."""
        self._unusable = True
        for env in getattr(self, "envs", ()):
            env.close()


def _make_sub_envs(makers: Sequence[EnvMaker]) -> list[gymnasium.Env]:
    """Call every maker; once two sub-envs are made, check that all of them fit in memory (the second one's
    Python allocations and arrays for its observations, times the number of makers). Each maker must
    return an env, and a new one."""
    envs: list[gymnasium.Env] = []
    made: dict[int, int] = {}  # the id of each env made: the index of its maker
    try:
        for index, maker in enumerate(makers):
            if not callable(maker):
                raise TypeError(
                    f"env_makers[{index}] is {maker!r}, which is not callable. SyncVectorEnv expects functions"
                    " that make the sub-environments, e.g. lambda: gymnasium.make('CartPole-v1')."
                )
            measured = index == 1 and len(makers) > 2
            env, allocated = _made_and_measured(maker) if measured else (maker(), 0)
            envs.append(_checked_env(env, index, maker))
            first = made.setdefault(id(env), index)
            if first != index:
                envs.pop()  # closed once below, not twice
                raise ValueError(
                    f"env_makers[{first}] and env_makers[{index}] returned the same env object, which every"
                    " step would step more than once. Each maker must make a new env: lambda:"
                    " gymnasium.make('CartPole-v1'), not a lambda returning an env made beforehand."
                )
            if measured:
                # a space vecrl cannot batch is its TypeError here, not flatdim's error for that space
                check_supported_space(env.observation_space, "observation space")
                arrays = (
                    4 * 8 * gymnasium.spaces.flatdim(env.observation_space) + 64
                )  # obs, last, final; flags
                check_fits_in_memory(f"SyncVectorEnv of {_env_name(env)}", len(makers), allocated + arrays)
    except BaseException:
        for env in envs:
            env.close()
        raise
    return envs


_ENV_PARTS = ("reset", "step", "close", "observation_space", "action_space")


def _checked_env(env: Any, index: int, maker: EnvMaker) -> gymnasium.Env:
    """``env``, made by ``env_makers[index]``, if it is an env (it has gymnasium.Env's parts); a TypeError
    naming the maker and what it returned otherwise."""
    missing = [part for part in _ENV_PARTS if not hasattr(env, part)]
    if missing:
        raise TypeError(
            f"env_makers[{index}] ({maker!r}) returned {env!r} of type {type(env).__qualname__}, which is not an"
            f" environment (it has no {', '.join(missing)}). Each maker must return a new gymnasium.Env, e.g."
            " lambda: gymnasium.make('CartPole-v1')."
        )
    return env


def _made_and_measured(maker: EnvMaker) -> tuple[gymnasium.Env, int]:
    """The env ``maker`` makes, and the bytes of Python memory (numpy's included) that making it took."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    try:
        env = maker()
        return env, max(tracemalloc.get_traced_memory()[0] - before, 0)
    finally:
        if not tracing:
            tracemalloc.stop()


def _env_name(env: gymnasium.Env) -> str:
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else type(env.unwrapped).__qualname__
