"""GoalEnvWrapper: any vecrl vector env made goal-conditioned, with xpag's surface.

Backend-agnostic: it only speaks to the env through ``reset`` (with gymnasium's ``reset_mask``
option), ``step``, its spaces and ``metadata["autoreset_mode"]``, so gym and brax envs can both use it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Box, Dict, Space
from gymnasium.vector.utils import batch_space

from vecrl.arrays import ArrayType, MaskOrIndices, array_type, convert_from_torch, convert_to_torch
from vecrl.autoreset import declared_autoreset_mode
from vecrl.final_observations import observations_before_restart
from vecrl.nests import first_leaf

#: compute_reward(achieved_goal, desired_goal, action, observation, reward, terminated, truncated, info)
RewardFunction = Callable[[Any, Any, Any, Any, Any, Any, Any, Any], Any]


class GoalEnvWrapper:
    """A goal-conditioned view of a vector env: observations become dicts ``{"observation",
    "achieved_goal", "desired_goal"}``; reward and success are computed from the goals.

    Args:
        env: a vector env (e.g. ``vecrl.make_vector_env("gym::Pendulum-v1", num_envs=8)``) whose
            ``step`` returns ``(obs, reward, terminated, truncated, info)``.
        goal_space: a Box: the space of one goal. Desired goals are sampled from (a copy of) it;
            ``reset(seed=S)`` with an int S seeds the sampling too.
        compute_achieved_goal: ``f(observation) -> achieved_goal``, batched (one row per sub-env).
        compute_reward: ``f(achieved_goal, desired_goal, action, observation, reward, terminated,
            truncated, info) -> reward``, batched: one call per step for all sub-envs, on the env's own
            array type (torch tensors for a vecrl env, numpy arrays for a numpy env).
        compute_success: ``f(achieved_goal, desired_goal) -> success``, batched likewise.
        terminate_on_success: report ``terminated=True`` for the sub-envs that succeed.

    ``info["is_success"]`` holds the success of every sub-env at each step. Reward and success at an
    episode's last step are computed from that episode's last observation, also when the env resets
    in the same step (it is read from ``info`` under gymnasium's final-observation key, where the env
    reports it there).

    Call ``reset_done(done)`` after a step to start new episodes, with new goals, for the sub-envs
    where ``done`` is True (only those get new goals). How the sub-envs are reset depends on the env's
    ``metadata["autoreset_mode"]``:

    - ``same_step`` (vecrl's default; also assumed when the env declares no mode): the sub-envs whose
      episode the env ended have already been reset by the env, and are not reset again; the others
      in ``done`` (e.g. ended by ``terminate_on_success``, or by the caller's own rules) are reset with
      ``env.reset(options={"reset_mask": mask})``, which the env must then support.
    - ``next_step`` and ``disabled``: every sub-env in ``done`` is reset with ``reset_mask`` (which
      also cancels a pending next-step autoreset).

    The env must support ``reset_mask`` for those masked resets: vecrl's gym backend does in every mode,
    and so does gymnasium's SyncVectorEnv from 1.1 on (gymnasium 0.29's passes the option to every
    sub-env, resetting them all). With ``next_step`` autoreset, call ``reset_done`` after every step
    that ends episodes: otherwise the env's own reset step (which ignores the action) comes next, with
    the old goals.

    Goal arrays are never modified in place: ``set_goal`` and ``reset_done`` make new ones, so
    observations kept from earlier steps stay valid.

    Examples:
        >>> import gymnasium, torch
        >>> from gymnasium.spaces import Box
        >>> from vecrl import TorchWrapper
        >>> pendulums = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 4)
        >>> env = GoalEnvWrapper(
        ...     TorchWrapper(pendulums),  # or vecrl.make_vector_env("gym::Pendulum-v1", num_envs=4)
        ...     goal_space=Box(-3.14, 3.14, (1,)),
        ...     compute_achieved_goal=lambda obs: torch.atan2(obs[:, 1:2], obs[:, 0:1]),
        ...     compute_reward=lambda achieved, desired, *_: -(achieved - desired).abs().squeeze(-1),
        ...     compute_success=lambda achieved, desired: (achieved - desired).abs().squeeze(-1) < 0.1,
        ... )
        >>> obs, info = env.reset(seed=0)
        >>> sorted(obs), tuple(obs["desired_goal"].shape)
        (['achieved_goal', 'desired_goal', 'observation'], (4, 1))
        >>> obs, reward, terminated, truncated, info = env.step(torch.zeros(4, 1))
        >>> info["is_success"].dtype
        torch.bool
    """

    def __init__(
        self,
        env: Any,
        goal_space: Space,
        compute_achieved_goal: Callable[[Any], Any],
        compute_reward: RewardFunction,
        compute_success: Callable[[Any, Any], Any],
        terminate_on_success: bool = False,
    ) -> None:
        if not isinstance(goal_space, Box):
            raise TypeError(
                f"goal_space must be a gymnasium Box (the space of one goal), but got {goal_space!r} (of type"
                f" {type(goal_space).__qualname__}). For example: Box(-1.0, 1.0, (2,))."
            )
        single_observation_space = getattr(env, "single_observation_space", None)
        if single_observation_space is None or not hasattr(env, "num_envs"):
            raise TypeError(
                f"GoalEnvWrapper wraps a vector env (with num_envs and single_observation_space), but got"
                f" {type(env).__qualname__}. Make one with vecrl.make_vector_env(..., num_envs=N)."
            )
        for name, function in [
            ("compute_achieved_goal", compute_achieved_goal),
            ("compute_reward", compute_reward),
            ("compute_success", compute_success),
        ]:
            if not callable(function):
                raise TypeError(f"{name} must be callable (a batched function), but got {function!r}.")
        self.env = env
        self.num_envs: int = int(env.num_envs)
        self.goal_space: Box = goal_space
        self.compute_achieved_goal = compute_achieved_goal
        self.compute_reward = compute_reward
        self.compute_success = compute_success
        self.terminate_on_success = bool(terminate_on_success)
        self.single_observation_space: Dict = Dict(
            {
                "observation": single_observation_space,
                "achieved_goal": goal_space,
                "desired_goal": goal_space,
            }
        )
        self.observation_space: Space = batch_space(self.single_observation_space, self.num_envs)
        self.single_action_space: Space = env.single_action_space
        self.action_space: Space = env.action_space
        self.autoreset_mode = declared_autoreset_mode(env)

        self._sampler: Box = copy.deepcopy(goal_space)
        self._array_type: ArrayType | None = None
        self._device: torch.device | None = None
        self._observation: Any = None  # the env's observation last reported
        self._desired_goal: Any = None
        self._env_reset_rows = np.zeros(self.num_envs, dtype=bool)  # rows the env restarted (same_step)

    @property
    def desired_goal(self) -> Any:
        """The desired goal of every sub-env (None before ``reset()``)."""
        return self._desired_goal

    @property
    def metadata(self) -> dict[str, Any]:
        """The wrapped env's ``metadata``."""
        return getattr(self.env, "metadata", None) or {}

    @property
    def unwrapped(self) -> Any:
        """The innermost env."""
        return self.env.unwrapped

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
        """Reset every sub-env and sample a goal for each; returns ``(obs, info)``.

        An int ``seed`` also seeds the goal sampling, so a seeded run gets the same goals.
        """
        result = self.env.reset(seed=seed, options=options)
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError(
                "The wrapped env's reset() did not return (obs, info); GoalEnvWrapper needs the gymnasium API."
                " Make the env without force_classic_api."
            )
        observation, info = result
        if isinstance(seed, int) and not isinstance(seed, bool):
            self._sampler.seed(seed)
        self._learn_array_type(observation)
        self._observation = observation
        self._desired_goal = self._sampled_goals(self.num_envs)
        self._env_reset_rows[:] = False
        return self._goal_observation(observation), info

    def step(self, action: Any) -> tuple[dict[str, Any], Any, Any, Any, Any]:
        """Step the env; returns ``(obs, reward, terminated, truncated, info)`` with the goal-based reward
        and ``info["is_success"]`` (and, with ``terminate_on_success``, terminated where successful)."""
        if self._desired_goal is None:
            raise RuntimeError("GoalEnvWrapper.step() was called before reset(): call reset() first.")
        result = self.env.step(action)
        if len(result) != 5:
            raise TypeError(
                f"The wrapped env's step() returned {len(result)} items; GoalEnvWrapper needs (obs, reward,"
                " terminated, truncated, info). Make the env without force_classic_api."
            )
        observation, env_reward, terminated, truncated, info = result
        ended = _as_numpy_bool(terminated) | _as_numpy_bool(truncated)
        self._env_reset_rows = ended if self.autoreset_mode == "same_step" else np.zeros_like(ended)
        last_observation = self._last_observation(observation, info, ended)

        achieved_goal = self.compute_achieved_goal(last_observation)
        desired_goal = self._desired_goal
        reward = self._as_env_array(
            self.compute_reward(
                achieved_goal, desired_goal, action, last_observation, env_reward, terminated, truncated, info
            )
        )
        success = self._as_env_bool(self.compute_success(achieved_goal, desired_goal))
        if isinstance(info, dict):
            info["is_success"] = success
        if self.terminate_on_success:
            terminated = self._as_env_bool(terminated) | success
        self._observation = observation
        if last_observation is observation:
            goal_observation = self._goal_observation(observation, achieved_goal)
        else:  # the rows that started a new episode report their new episode's achieved goal
            goal_observation = self._goal_observation(observation)
        return goal_observation, reward, terminated, truncated, info

    def reset_done(
        self, done: Any, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """Start new episodes, with newly sampled goals, for the sub-envs where ``done`` is True (a bool
        array, tensor or list of length ``num_envs``); the others keep their state and goals.

        ``seed`` and ``options`` go to the env's masked reset (seeds apply only to the reset sub-envs).
        Returns ``(obs, info)``: the observations of all sub-envs, ``info`` that of the masked reset
        (``{}`` when no sub-env needed one).
        """
        if self._desired_goal is None:
            raise RuntimeError("GoalEnvWrapper.reset_done() was called before reset(): call reset() first.")
        done_rows = _as_numpy_bool(done)
        if done_rows.shape != (self.num_envs,):
            raise ValueError(
                f"reset_done(done) needs one bool per sub-env, of shape ({self.num_envs},), but got shape"
                f" {done_rows.shape}: {done!r}."
            )
        to_reset = done_rows & ~self._env_reset_rows
        info: Any = {}
        observation = self._observation
        if to_reset.any():
            observation, info = self.env.reset(seed=seed, options={**(options or {}), "reset_mask": to_reset})
        self._env_reset_rows = self._env_reset_rows & ~done_rows
        self._observation = observation
        if done_rows.any():
            self._desired_goal = self._with_rows(
                self._desired_goal, done_rows, self._sampled_goals(int(done_rows.sum()))
            )
        return self._goal_observation(observation), info

    def set_goal(self, goal: Any, indices: MaskOrIndices | None = None) -> None:
        """Set the desired goal of every sub-env, or only of the rows ``indices`` selects (a bool mask or
        a list of row indices). ``goal`` is one goal for all those rows, or one row per selected sub-env.

        Examples:
            >>> env.set_goal(torch.zeros(1), indices=[0, 2])  # doctest: +SKIP
        """
        if self._desired_goal is None:
            raise RuntimeError(
                "GoalEnvWrapper.set_goal() was called before reset(): call reset() first (it learns which"
                " array type the env uses)."
            )
        rows = np.ones(self.num_envs, dtype=bool) if indices is None else _rows_mask(indices, self.num_envs)
        goal_array = np.asarray(
            goal.detach().cpu().numpy() if isinstance(goal, torch.Tensor) else goal,
            dtype=self.goal_space.dtype,
        )
        goal_shape, count = self.goal_space.shape, int(rows.sum())
        if goal_array.shape == goal_shape:
            goal_array = np.broadcast_to(goal_array, (count, *goal_shape))
        if goal_array.shape != (count, *goal_shape):
            raise ValueError(
                f"set_goal() received a goal of shape {goal_array.shape} for {count} sub-env(s); expected one"
                f" goal of shape {goal_shape} (given to all of them) or {(count, *goal_shape)} (one row each)."
            )
        self._desired_goal = self._with_rows(self._desired_goal, rows, goal_array)

    def close(self) -> None:
        """Close the wrapped env."""
        self.env.close()

    def __repr__(self) -> str:
        return f"GoalEnvWrapper({self.env!r})"

    def _learn_array_type(self, observation: Any) -> None:
        leaf = first_leaf(observation)
        self._array_type = array_type(leaf, "numpy")
        self._device = leaf.device if isinstance(leaf, torch.Tensor) else None

    def _sampled_goals(self, count: int) -> Any:
        goals = [self._sampler.sample() for _ in range(count)]
        return self._from_numpy(np.stack(goals).astype(self.goal_space.dtype, copy=False))

    def _from_numpy(self, array: np.ndarray) -> Any:
        if self._array_type == "numpy":
            return array
        tensor = torch.from_numpy(np.ascontiguousarray(array))
        if self._device is not None:
            tensor = tensor.to(self._device)
        return tensor if self._array_type == "torch" else convert_from_torch(tensor, "jax")

    def _with_rows(self, current: Any, rows: np.ndarray, values: Any) -> Any:
        """A copy of ``current`` with the rows where ``rows`` is True replaced by ``values``."""
        if isinstance(values, np.ndarray):
            values = self._from_numpy(values)
        if self._array_type == "numpy":
            updated = np.array(current, copy=True)
            updated[rows] = values
            return updated
        if self._array_type == "torch":
            updated = current.clone()
            updated[torch.from_numpy(rows).to(updated.device)] = values.to(updated.dtype)
            return updated
        return current.at[np.flatnonzero(rows)].set(values)  # jax arrays are immutable

    def _as_env_array(self, x: Any) -> Any:
        if self._array_type == "numpy":
            return np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x)
        tensor = convert_to_torch(x)
        if self._device is not None and tensor.device != self._device:
            tensor = tensor.to(self._device)
        return tensor if self._array_type == "torch" else convert_from_torch(tensor, "jax")

    def _as_env_bool(self, x: Any) -> Any:
        array = self._as_env_array(x)
        return array.astype(bool) if self._array_type != "torch" else array.to(torch.bool)

    def _goal_observation(self, observation: Any, achieved_goal: Any = None) -> dict[str, Any]:
        if achieved_goal is None:
            achieved_goal = self.compute_achieved_goal(observation)
        return {
            "observation": observation,
            "achieved_goal": achieved_goal,
            "desired_goal": self._desired_goal,
        }

    def _last_observation(self, observation: Any, info: Any, ended: np.ndarray) -> Any:
        """``observation`` with the rows the env restarted in this same step replaced by the last
        observation of their finished episode (from ``info``), where the env reports it."""
        if self.autoreset_mode != "same_step" or not ended.any():
            return observation
        return observations_before_restart(observation, info)


def _as_numpy_bool(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy().astype(bool)
    return np.asarray(x).astype(bool)


def _rows_mask(indices: MaskOrIndices, num_envs: int) -> np.ndarray:
    """A bool mask over the rows, from a mask or from row indices."""
    if isinstance(indices, torch.Tensor):
        indices = indices.detach().cpu().numpy()
    array = np.asarray(indices)
    if array.dtype == np.bool_:
        if array.shape != (num_envs,):
            raise ValueError(
                f"A row mask needs one bool per sub-env ({num_envs}), but has shape {array.shape}."
            )
        return array
    if array.size and (array.dtype.kind not in "iu" or array.min() < -num_envs or array.max() >= num_envs):
        raise ValueError(
            f"indices must be a bool mask of length {num_envs} or row indices in [0, {num_envs}), got {indices!r}."
        )
    mask = np.zeros(num_envs, dtype=bool)
    mask[array.astype(np.int64)] = True
    return mask
