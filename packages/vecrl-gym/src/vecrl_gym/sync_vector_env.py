"""SyncVectorEnv: gymnasium envs stepped in lockstep, each reset in the very step its episode ends."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium.spaces import Discrete

import vecrl
from vecrl.compat import FINAL_INFO_KEY, FINAL_OBS_KEY, GYMNASIUM_1, same_step_metadata
from vecrl_gym.checks import check_same_spaces, checked_num_episodes, checked_seeds
from vecrl_gym.device import info_to_device

EnvMaker = Callable[[], gymnasium.Env]
Seed = int | Sequence[int | None] | None


class _Unset:
    """The default of ``reset(seed=...)``: unlike an explicit None, it keeps a seed given to ``seed()``."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET = _Unset()


class SyncVectorEnv(vecrl.BaseVectorEnv):
    """Sub-environments stepped one after the other, with eager (same-step) autoreset.

    A sub-env whose episode ends is reset within the same ``step()``: the observation returned for it
    is the first one of its next episode, while the last observation and info of the finished episode
    are in ``info`` under gymnasium's keys (``"final_obs"`` on gymnasium 1.x, ``"final_observation"``
    on 0.29, and ``"final_info"``, each with its ``"_<key>"`` mask).

    Args:
        env_makers: functions without arguments, each making one sub-environment.
        empty_info: always report ``info`` as ``{}`` and skip all per-step info work.
        num_episodes: run each sub-env for this many episodes. On the step where its last episode
            ends it reports that episode's final observation and reward; from then on, until the next
            ``reset()``, it reports terminated = truncated = True, a NaN observation (0 for integer
            dtypes) and a NaN reward.
        device: return torch tensors on this device instead of numpy arrays.

    Arrays returned by ``reset()`` and ``step()`` are fresh on every call: keeping them is safe.

    Example:
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
    ) -> None:
        makers = list(env_makers)
        if not makers:
            raise ValueError(
                "SyncVectorEnv needs at least one sub-environment, but env_makers is empty. Pass a list of"
                " functions that each make one env, e.g. [lambda: gymnasium.make('CartPole-v1')] * 8."
            )
        for index, maker in enumerate(makers):
            if not callable(maker):
                raise TypeError(
                    f"env_makers[{index}] is {maker!r}, which is not callable. SyncVectorEnv expects functions"
                    " that make the sub-environments, e.g. lambda: gymnasium.make('CartPole-v1')."
                )
        self._num_episodes = checked_num_episodes(num_episodes)
        self._device = None if device is None else torch.device(device)
        self._empty_info = bool(empty_info)

        envs: list[gymnasium.Env] = []
        try:
            for maker in makers:
                envs.append(maker())
            check_same_spaces(envs)
            super().__init__(len(envs), envs[0].observation_space, envs[0].action_space)
        except BaseException:
            for env in envs:
                env.close()
            raise

        self.envs: list[gymnasium.Env] = envs
        self.metadata = {**getattr(envs[0], "metadata", {}), **same_step_metadata()}
        self.render_mode = getattr(envs[0], "render_mode", None)

        obs_space = self.single_observation_space
        self._batched_obs_shape: tuple[int, ...] = (self.num_envs, *obs_space.shape)  # type: ignore[misc]
        self._obs_dtype: np.dtype = obs_space.dtype  # type: ignore[assignment]
        self._batched_action_shape: tuple[int, ...] = (self.num_envs, *self.single_action_space.shape)  # type: ignore[misc]
        self._discrete_actions = isinstance(self.single_action_space, Discrete)
        self._env_steps = [env.step for env in envs]
        self._env_resets = [env.reset for env in envs]
        self._pending_seeds: list[int | None] | None = None
        self._pending_actions: Any = None

        # Episodes still to run per sub-env (None: autoreset forever); 0 means its budget is spent.
        self._episodes_left: list[int] | None = None
        self._spent_observation: np.ndarray | None = None
        if self._num_episodes is not None:
            self._episodes_left = [self._num_episodes] * self.num_envs
            fill = np.nan if np.issubdtype(self._obs_dtype, np.inexact) else 0
            self._spent_observation = np.full(obs_space.shape, fill, dtype=self._obs_dtype)  # type: ignore[arg-type]

    @property
    def num_episodes(self) -> int | None:
        """The episode budget of each sub-env (None: autoreset forever)."""
        return self._num_episodes

    def seed(self, seed: Seed = None) -> None:
        """Seed the next ``reset()`` (and only that one); None clears a pending seed.

        An int ``S`` gives the sub-envs the seeds ``numpy.random.RandomState(S).randint(0, 2**32,
        num_envs)``; a list gives one seed (or None) per sub-env. ``seed(S); reset()`` is the same as
        ``reset(seed=S)``.

        Example:
            >>> import gymnasium
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
            >>> env.seed(7)
            >>> bool((env.reset()[0] == env.reset(seed=7)[0]).all())
            True
        """
        self._pending_seeds = checked_seeds(seed, self.num_envs)

    def reset(
        self,
        *,
        seed: Seed | _Unset = _UNSET,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env and restart the episode budgets; returns ``(observations, info)``.

        ``seed`` is as in ``seed()``; leaving it out uses the seed given to ``seed()`` if any, and an
        explicit ``seed=None`` resets without seeding. ``options`` go to every sub-env's ``reset``.

        Example:
            >>> import gymnasium
            >>> env = SyncVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 2)
            >>> obs, info = env.reset(seed=[1, 2], options={"x_init": 0.5})
            >>> obs.shape
            (2, 3)
        """
        if not isinstance(seed, _Unset):
            self.seed(seed)
        seeds = self._pending_seeds or [None] * self.num_envs
        self._pending_seeds = None
        if self._num_episodes is not None:
            self._episodes_left = [self._num_episodes] * self.num_envs

        observations = np.empty(self._batched_obs_shape, dtype=self._obs_dtype)
        infos: dict[str, Any] = {}
        for index, (env_reset, env_seed) in enumerate(zip(self._env_resets, seeds, strict=True)):
            observations[index], info = env_reset(seed=env_seed, options=options)
            if info and not self._empty_info:
                infos = self._add_info(infos, info, index)
        if self._device is not None:
            return torch.from_numpy(observations).to(self._device), info_to_device(infos, self._device)
        return observations, infos

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every sub-env with its row of ``actions``; returns ``(obs, reward, terminated, truncated,
        info)`` batched over the sub-envs.

        ``actions`` (numpy array, torch tensor or nested list) must have the shape ``(num_envs,
        *single_action_space.shape)``. Sub-envs whose episode ends are reset at once (see the class doc).

        Example:
            >>> import gymnasium, torch
            >>> env = SyncVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 2, device="cpu")
            >>> _ = env.reset(seed=0)
            >>> env.step(torch.zeros(2, 1))[1].dtype
            torch.float64
        """
        if type(actions) is not np.ndarray:
            actions = _as_numpy(actions)
        if actions.shape != self._batched_action_shape or (
            self._discrete_actions and actions.dtype.kind not in "iub"
        ):
            raise ValueError(self._action_error_message(actions))
        num_envs = self.num_envs
        observations = np.empty(self._batched_obs_shape, self._obs_dtype)
        rewards = np.empty(num_envs)
        terminated = np.zeros(num_envs, np.bool_)  # zeros: only the sub-envs whose episode ends are written
        truncated = np.zeros(num_envs, np.bool_)
        infos: dict[str, Any] | None = None if self._empty_info else {}
        episodes_left = self._episodes_left

        for index, env_step, action in zip(range(num_envs), self._env_steps, actions, strict=True):
            if episodes_left is not None and not episodes_left[index]:
                observations[index] = self._spent_observation
                rewards[index] = np.nan
                terminated[index] = truncated[index] = True
                continue
            observation, reward, term, trunc, info = env_step(action)
            if term or trunc:
                terminated[index] = term
                truncated[index] = trunc
                observation, info = self._end_episode(index, observation, info, infos)
            if info and infos is not None:
                infos = self._add_info(infos, info, index)
            observations[index] = observation
            rewards[index] = reward

        if infos is None:
            infos = {}
        device = self._device
        if device is None:
            return observations, rewards, terminated, truncated, infos
        if infos:
            infos = info_to_device(infos, device)
        if device.type == "cpu":  # the tensors share the fresh arrays' memory: no copy, no device move
            return (
                torch.from_numpy(observations),
                torch.from_numpy(rewards),
                torch.from_numpy(terminated),
                torch.from_numpy(truncated),
                infos,
            )
        return (
            torch.from_numpy(observations).to(device),
            torch.from_numpy(rewards).to(device),
            torch.from_numpy(terminated).to(device),
            torch.from_numpy(truncated).to(device),
            infos,
        )

    def _end_episode(
        self, index: int, observation: Any, info: dict[str, Any], infos: dict[str, Any] | None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset sub-env ``index`` whose episode just ended; give the observation and info to report.

        The sub-env is reset even when its budget is spent (as EvoTorch does), so that its random state
        advances exactly as in the reference implementation.
        """
        next_observation, next_info = self._env_resets[index]()
        if infos is not None:
            self._add_info(infos, {FINAL_OBS_KEY: observation, FINAL_INFO_KEY: info}, index)
        episodes_left = self._episodes_left
        if episodes_left is not None:
            episodes_left[index] -= 1
            if not episodes_left[index]:
                return observation, info
        return next_observation, next_info

    def _action_error_message(self, actions: np.ndarray) -> str:
        """Say what ``step()`` expected of ``actions``, what it received and how to fix it."""
        expected, shape = self._batched_action_shape, actions.shape
        if shape == expected:
            return (
                f"SyncVectorEnv.step() expected integer actions for the discrete action space"
                f" {self.single_action_space}, but received actions of dtype {actions.dtype}. Cast them to an"
                " integer dtype, or make the env with discrete_to_continuous_act=True to pass scores whose"
                " argmax is taken."
            )
        if len(shape) == 0:
            problem = "a 0-d (scalar) action"
        elif shape[0] != self.num_envs:
            problem = f"actions of shape {shape}, whose leading (batch) dimension is {shape[0]}"
        else:
            problem = f"actions of shape {shape}, i.e. one action of shape {shape[1:]} per sub-env"
        return (
            f"SyncVectorEnv.step() expected actions of shape {expected}: num_envs={self.num_envs} rows, one"
            f" per sub-env, each of shape {expected[1:]} for the single action space"
            f" {self.single_action_space}. It received {problem}. Give one action per sub-env, stacked along"
            " the first dimension."
        )

    # gymnasium 0.29's VectorEnvWrapper steps and resets its env through these async/wait pairs.
    def step_async(self, actions: Any) -> None:
        """Keep ``actions`` for ``step_wait()`` (gymnasium 0.29's two-phase step)."""
        self._pending_actions = actions

    def step_wait(self, **kwargs: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step with the actions given to ``step_async()``."""
        actions, self._pending_actions = self._pending_actions, None
        return self.step(actions)

    def reset_async(self, seed: Seed = None, options: dict[str, Any] | None = None) -> None:
        """Nothing to start: ``reset_wait()`` does the work (gymnasium 0.29's two-phase reset)."""

    def reset_wait(
        self, seed: Seed = None, options: dict[str, Any] | None = None, **kwargs: Any
    ) -> tuple[Any, dict[str, Any]]:
        """Reset as ``reset(seed=seed, options=options)``."""
        return self.reset(seed=seed, options=options)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env (or read the attribute ``name``); one result each.

        Example:
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

        Example:
            >>> import gymnasium
            >>> SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2).get_attr("gravity")
            (9.8, 9.8)
        """
        return tuple(env.get_wrapper_attr(name) for env in self.envs)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env: a list or tuple gives one value per sub-env, any
        other value is given to all.

        Example:
            >>> import gymnasium
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
            >>> env.set_attr("gravity", [9.8, 1.6]); env.get_attr("gravity")
            (9.8, 1.6)
        """
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(
                f"set_attr({name!r}, values) received {len(values)} values for {self.num_envs} sub-envs. Give"
                " a list or tuple with one value per sub-env, or a single value (not a list) for all of them."
            )
        for env, value in zip(self.envs, values, strict=True):
            if GYMNASIUM_1:
                env.set_wrapper_attr(name, value)
            else:  # gymnasium 0.29 has no set_wrapper_attr; its SyncVectorEnv uses setattr
                setattr(env, name, value)

    def render(self) -> tuple[Any, ...]:
        """The frames the sub-envs render (their ``render_mode`` is set when they are made)."""
        return tuple(env.render() for env in self.envs)

    def close_extras(self, **kwargs: Any) -> None:
        """Close every sub-env (``close()`` calls this once; closing again does nothing)."""
        for env in getattr(self, "envs", ()):
            env.close()


def _as_numpy(actions: Any) -> np.ndarray:
    """A torch tensor (on any device, even one that needs grad) or a nested list as a numpy array."""
    if isinstance(actions, torch.Tensor):
        try:
            return actions.numpy()
        except (RuntimeError, TypeError):  # needs grad, or is not on the CPU
            return actions.numpy(force=True)
    return np.asarray(actions)
