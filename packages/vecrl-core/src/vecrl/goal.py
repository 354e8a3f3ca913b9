"""GoalEnvWrapper: any vecrl vector env made goal-conditioned, a gymnasium vector env with xpag's surface,
that stable-baselines3's HER learns on through ``vecrl_sb3.SB3VecEnv``.

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
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from vecrl.arrays import ArrayType, MaskOrIndices, array_type, convert_from_torch, convert_to_torch
from vecrl.autoreset import declared_autoreset_mode
from vecrl.checks import checked_flag
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY, GYMNASIUM_1, VECTOR_WRAPPER_BASE
from vecrl.final_observations import observations_before_restart
from vecrl.nests import first_leaf

#: compute_reward(achieved_goal, desired_goal, action, observation, reward, terminated, truncated, info)
RewardFunction = Callable[[Any, Any, Any, Any, Any, Any, Any, Any], Any]


class GoalEnvWrapper(VECTOR_WRAPPER_BASE):
    """A goal-conditioned view of a vector env, itself a gymnasium vector env: observations become dicts
    ``{"observation", "achieved_goal", "desired_goal"}``; reward and success are computed from the goals.

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

    Raises:
        TypeError: ``env`` not a vector env, ``goal_space`` not a Box, a function that is not callable,
            ``terminate_on_success`` not a bool; at a step, a goal, reward or success of the wrong shape or
            type (naming the function that gave it).
        ValueError: a goal that is not finite (``set_goal``), masks of the wrong length (``reset_done``).
        RuntimeError: ``step`` or ``reset_done`` before ``reset``.

    ``info["is_success"]`` holds the success of every sub-env at each step. Reward and success at an
    episode's last step are computed from that episode's last observation.

    Episodes follow the env's ``metadata["autoreset_mode"]``, whatever ended them (the env, a success under
    ``terminate_on_success``, a time limit), and each new episode gets a new goal:

    - ``same_step`` (vecrl's default; also assumed when the env declares no mode): the step that ends an
      episode starts the next one (the env restarts what it ended; the wrapper restarts, by a masked
      ``reset``, what a success ended) and returns its first goal observation; the ended episode's last
      one, ``{"observation", "achieved_goal", "desired_goal"}``, is in ``info["final_obs"]``
      (``"final_observation"`` on gymnasium 0.29), rows masked by ``info["_final_obs"]``, as vecrl's
      layout has it (``vecrl.final_observations``).
    - ``next_step``: the step after the ending one starts the next episode, its action ignored, reward 0.
    - ``disabled``: an ended episode stays ended until ``reset`` or ``reset_done``.

    ``compute_reward(achieved_goal, desired_goal, info)`` is a GoalEnv's (gymnasium-robotics'), which HER
    calls on stored steps (through ``vecrl_sb3.SB3VecEnv.env_method``): numpy or torch batches in, the same
    type out, from your function, which then gets None for the action, observation, reward, terminated
    and truncated it has no record of.

    ``reset_done(done)`` stays for xpag-style loops that restart episodes themselves: it restarts, with new
    goals, the rows of ``done`` that the last step did not restart already. The env must support
    ``reset_mask`` for masked resets: vecrl's gym backend does in every mode, and so does gymnasium's
    SyncVectorEnv from 1.1 on (gymnasium 0.29's passes the option to every sub-env, resetting them all).

    Goal arrays are never modified in place: ``set_goal`` and new episodes make new ones, so
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

    def __new__(
        cls,
        env: Any,
        goal_space: Box,
        compute_achieved_goal: Callable[[Any], Any],
        compute_reward: RewardFunction,
        compute_success: Callable[[Any, Any], Any],
        terminate_on_success: bool = False,
    ) -> GoalEnvWrapper:
        # (checked before the object exists: a half-made vector wrapper's finalizer would look for its env)
        if not isinstance(goal_space, Box):
            raise TypeError(
                f"goal_space must be a gymnasium Box (the space of one goal), but got {goal_space!r} (of type"
                f" {type(goal_space).__qualname__}). For example: Box(-1.0, 1.0, (2,))."
            )
        if not isinstance(env, VectorEnv):
            raise TypeError(
                f"GoalEnvWrapper wraps a vector env (a gymnasium.vector.VectorEnv, with num_envs sub-envs), but"
                f" got {type(env).__qualname__}. Give num_envs to make one: vecrl.make_vector_env(name,"
                " num_envs=N)."
            )
        for name, function in [
            ("compute_achieved_goal", compute_achieved_goal),
            ("compute_reward", compute_reward),
            ("compute_success", compute_success),
        ]:
            if not callable(function):
                raise TypeError(f"{name} must be callable (a batched function), but got {function!r}.")
        checked_flag(terminate_on_success, "terminate_on_success")
        return super().__new__(cls)

    def __init__(
        self,
        env: Any,
        goal_space: Box,
        compute_achieved_goal: Callable[[Any], Any],
        compute_reward: RewardFunction,
        compute_success: Callable[[Any, Any], Any],
        terminate_on_success: bool = False,
    ) -> None:
        super().__init__(env)
        if not GYMNASIUM_1:  # (0.29's wrapper forwards num_envs with a deprecation warning)
            self.num_envs = int(env.num_envs)
        self.goal_space: Box = goal_space
        self.compute_achieved_goal = compute_achieved_goal
        self.reward_function: RewardFunction = compute_reward
        self.compute_success = compute_success
        self.terminate_on_success = bool(terminate_on_success)
        self.single_observation_space: Dict = Dict(
            {
                "observation": env.single_observation_space,
                "achieved_goal": goal_space,
                "desired_goal": goal_space,
            }
        )
        self.observation_space: Space = batch_space(self.single_observation_space, self.num_envs)
        self.autoreset_mode = declared_autoreset_mode(env)

        self._sampler: Box = copy.deepcopy(goal_space)
        self._array_type: ArrayType | None = None
        self._device: torch.device | None = None
        self._observation: Any = None  # the env's observation last reported
        self._desired_goal: Any = None
        none = np.zeros(self.num_envs, dtype=bool)
        self._restarted = none  # rows the last step started a new episode in (same_step)
        self._ended = none  # rows whose episode the last step ended (next_step: restarted by the next)
        self._env_ended = none  # of those, the rows the env ended itself (next_step: it restarts them)
        self._succeeded = none  # disabled mode: rows a success terminated, which step() refuses until reset

    @property
    def desired_goal(self) -> Any:
        """The desired goal of every sub-env (None before ``reset()``)."""
        return self._desired_goal

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
        mask = (options or {}).get("reset_mask")
        if mask is not None and self._desired_goal is not None:  # (a masked reset: new goals for those rows)
            rows = _as_numpy_bool(mask)
            self._desired_goal = self._with_rows(
                self._desired_goal, rows, self._sampled_goals(int(rows.sum()))
            )
            self._restarted, self._ended = self._restarted & ~rows, self._ended & ~rows
            self._env_ended, self._succeeded = self._env_ended & ~rows, self._succeeded & ~rows
        else:
            self._learn_array_type(observation)
            self._desired_goal = self._sampled_goals(self.num_envs)
            none = np.zeros(self.num_envs, dtype=bool)
            self._restarted = self._ended = self._env_ended = self._succeeded = none
        self._observation = observation
        return self._goal_observation(observation), info

    def step(self, action: Any) -> tuple[dict[str, Any], Any, Any, Any, Any]:
        """Step the env; returns ``(obs, reward, terminated, truncated, info)`` with the goal-based reward,
        ``info["is_success"]`` (and, with ``terminate_on_success``, terminated where successful), each
        ended episode followed by a new one with a new goal as the autoreset mode says."""
        if self._desired_goal is None:
            raise RuntimeError("GoalEnvWrapper.step() was called before reset(): call reset() first.")
        if self._succeeded.any():
            rows = np.flatnonzero(self._succeeded).tolist()
            raise RuntimeError(
                f"sub-env(s) {rows} reached their goal and terminated (terminate_on_success, autoreset disabled):"
                " start their next episode with env.reset_done(terminated) (or a masked reset) before stepping"
            )
        result = self.env.step(action)
        if len(result) != 5:
            raise TypeError(
                f"The wrapped env's step() returned {len(result)} items; GoalEnvWrapper needs (obs, reward,"
                " terminated, truncated, info). Make the env without force_classic_api."
            )
        observation, env_reward, terminated, truncated, info = result
        starting = self._ended if self.autoreset_mode == "next_step" else np.zeros(self.num_envs, dtype=bool)
        if starting.any():  # this step starts the next episodes (those the env did not end, restarted here)
            observation, info = self._restarted_rows(observation, info, starting & ~self._env_ended)
            self._desired_goal = self._with_rows(
                self._desired_goal, starting, self._sampled_goals(int(starting.sum()))
            )
        env_ended = _as_numpy_bool(terminated) | _as_numpy_bool(truncated)
        last_observation = observation
        if self.autoreset_mode == "same_step" and env_ended.any():
            last_observation = observations_before_restart(observation, info)
        achieved_goal = self._achieved_goal(last_observation)
        desired_goal = self._desired_goal
        reward = self._as_env_array(
            self.reward_function(
                achieved_goal, desired_goal, action, last_observation, env_reward, terminated, truncated, info
            )
        )
        self._check_rows("compute_reward", reward, "a number per sub-env: reduce over the goal's axes")
        success = self.compute_success(achieved_goal, desired_goal)
        self._check_rows("compute_success", success, "a bool per sub-env: compare, e.g. distance < 0.05")
        if "bool" not in str(getattr(success, "dtype", "")):
            raise TypeError(
                f"compute_success gave {getattr(success, 'dtype', type(success).__qualname__)} values; it must give"
                " a bool per sub-env (e.g. distance < 0.05), which is_success and terminate_on_success read as is"
            )
        success = self._as_env_bool(success)
        if starting.any():  # (the restarting step of next_step: no reward, no success, no end)
            rows = self._as_env_bool(starting)
            reward, success = self._where(rows, 0, reward), self._where(rows, False, success)
        if isinstance(info, dict):
            info["is_success"] = success
        if self.terminate_on_success:
            terminated = self._as_env_bool(terminated) | success
            if self.autoreset_mode == "disabled":
                self._succeeded = _as_numpy_bool(success) & ~env_ended
        ended = _as_numpy_bool(terminated) | _as_numpy_bool(truncated)
        self._ended, self._env_ended = ended, env_ended
        self._restarted = np.zeros(self.num_envs, dtype=bool)
        if self.autoreset_mode == "same_step" and ended.any():
            info[FINAL_OBS_KEY] = self._goal_observation(last_observation, achieved_goal)
            info[FINAL_OBS_MASK_KEY] = self._as_env_bool(ended)
            observation, info = self._restarted_rows(observation, info, ended & ~env_ended)
            self._desired_goal = self._with_rows(
                self._desired_goal, ended, self._sampled_goals(int(ended.sum()))
            )
            self._restarted = ended
            goal_observation = self._goal_observation(observation)
        else:
            goal_observation = self._goal_observation(observation, achieved_goal)
        self._observation = observation
        return goal_observation, reward, terminated, truncated, info

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any, *more: Any) -> Any:
        """The reward of ``achieved_goal`` against ``desired_goal`` (batches), as a GoalEnv computes it
        (gymnasium-robotics' ``compute_reward(achieved_goal, desired_goal, info)``, which HER calls): your
        ``compute_reward`` function on them in the env's array type, the action, observation, reward,
        terminated and truncated given as None; the result in the type of ``achieved_goal`` (numpy or
        torch). Called with all eight arguments, it is your function itself.

        Examples:
            >>> env.compute_reward(np.zeros((2, 1)), np.ones((2, 1)), [{}, {}])  # doctest: +SKIP
            array([-1., -1.], dtype=float32)
        """
        if more:
            return self.reward_function(achieved_goal, desired_goal, info, *more)
        numpy_in = not isinstance(achieved_goal, torch.Tensor) and self._array_type != "numpy"
        achieved, desired = (
            self._as_env_array(np.asarray(g)) if numpy_in else g for g in (achieved_goal, desired_goal)
        )
        try:
            reward = self.reward_function(achieved, desired, None, None, None, None, None, info)
        except (TypeError, AttributeError) as error:
            raise TypeError(
                "GoalEnvWrapper.compute_reward(achieved_goal, desired_goal, info) (a GoalEnv's, as HER calls it"
                " on stored steps) calls your compute_reward with None for the action, observation, reward,"
                f" terminated and truncated, which it failed on: {error}. Compute the reward from the goals"
                " (and info) alone."
            ) from error
        if not numpy_in:
            return reward
        return np.asarray(reward.detach().cpu() if isinstance(reward, torch.Tensor) else reward)

    def reset_done(
        self, done: Any, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """Start new episodes, with newly sampled goals, for the sub-envs where ``done`` is True (a bool
        array, tensor or list of length ``num_envs``) that the last step did not restart already; the others
        keep their state and goals. For loops that restart episodes themselves (xpag's).

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
        to_reset = done_rows & ~self._restarted
        info: Any = {}
        observation = self._observation
        if to_reset.any():
            observation, info = self.env.reset(seed=seed, options={**(options or {}), "reset_mask": to_reset})
            self._desired_goal = self._with_rows(
                self._desired_goal, to_reset, self._sampled_goals(int(to_reset.sum()))
            )
        self._restarted = self._restarted & ~done_rows
        self._succeeded = self._succeeded & ~to_reset
        self._ended = self._env_ended = self._ended & ~to_reset  # (a masked reset cancels a pending restart)
        self._observation = observation
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
        if not np.isfinite(goal_array).all():
            raise ValueError(f"set_goal() received a goal that is not finite: {goal!r}; give finite numbers")
        goal_shape, count = self.goal_space.shape, int(rows.sum())
        if goal_array.shape == goal_shape:  # (a copy: torch refuses to share a read-only broadcast view)
            goal_array = np.repeat(goal_array[None], count, axis=0)
        if goal_array.shape != (count, *goal_shape):
            raise ValueError(
                f"set_goal() received a goal of shape {goal_array.shape} for {count} sub-env(s); expected one"
                f" goal of shape {goal_shape} (given to all of them) or {(count, *goal_shape)} (one row each)."
            )
        self._desired_goal = self._with_rows(self._desired_goal, rows, goal_array)

    def __repr__(self) -> str:
        return f"GoalEnvWrapper({self.env!r})"

    def _restarted_rows(self, observation: Any, info: Any, rows: np.ndarray) -> tuple[Any, Any]:
        """``observation`` and ``info`` of a step, with ``rows`` (whose episodes the env did not end, or
        restart) restarted by a masked reset: their first observations; the step's info kept."""
        if not rows.any():
            return observation, info
        observation, _ = self.env.reset(options={"reset_mask": rows})
        return observation, info

    def _where(self, rows: Any, value: Any, values: Any) -> Any:
        """``values`` with ``value`` in the ``rows`` (a mask of the env's array type)."""
        if self._array_type == "torch":
            return torch.where(rows.to(values.device), torch.as_tensor(value, dtype=values.dtype), values)
        if self._array_type == "numpy":
            return np.where(rows, value, values).astype(values.dtype)
        import jax.numpy as jnp

        return jnp.where(rows, value, values)

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

    def _achieved_goal(self, observation: Any) -> Any:
        """``compute_achieved_goal(observation)``; a ValueError unless it gives one goal of the goal space's
        shape per sub-env."""
        goal = self.compute_achieved_goal(observation)
        expected = (self.num_envs, *self.goal_space.shape)
        shape = tuple(getattr(goal, "shape", ()))
        if shape != expected:
            raise ValueError(
                f"compute_achieved_goal gave shape {shape} for {self.num_envs} sub-envs; it must give one goal"
                f" of the goal space's shape {self.goal_space.shape} per sub-env, shape {expected}"
            )
        return goal

    def _check_rows(self, name: str, values: Any, what: str) -> None:
        """A ValueError unless ``values`` (what ``name`` gave) has shape ``(num_envs,)``."""
        shape = tuple(getattr(values, "shape", ()))
        if shape != (self.num_envs,):
            raise ValueError(
                f"{name} gave shape {shape} for {self.num_envs} sub-envs; it must give {what}, shape"
                f" ({self.num_envs},)"
            )

    def _goal_observation(self, observation: Any, achieved_goal: Any = None) -> dict[str, Any]:
        if achieved_goal is None:
            achieved_goal = self._achieved_goal(observation)
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
