"""SB3VecEnv: a vecrl vector env spoken to as stable-baselines3's ``VecEnv``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

from vecrl.arrays import tree_from_torch
from vecrl.autoreset import declared_autoreset_mode
from vecrl.checks import checked_seed
from vecrl.compat import FINAL_INFO_KEY, FINAL_INFO_MASK_KEY, FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl.goal import GoalEnvWrapper
from vecrl.numpy_view import check_numpy_wrappers
from vecrl.spaces import ARRAY_SPACES
from vecrl.torch_wrapper import TorchWrapper, layers

#: Keys of a vecrl step's info that SB3VecEnv turns into SB3's own per-env entries.
_FINAL_KEYS = frozenset({FINAL_OBS_KEY, FINAL_INFO_KEY, FINAL_OBS_MASK_KEY, FINAL_INFO_MASK_KEY})


class SB3VecEnv(VecEnv):
    """The vecrl vector env ``env`` (from ``vecrl.make_vector_env(..., num_envs=n)``, any backend) as a
    stable-baselines3 ``VecEnv``.

    - observations come back as numpy arrays (dicts of them for Dict spaces), rewards as float32, and
      ``dones`` as ``terminated | truncated``;
    - ``infos`` is a list of one dict per sub-env, built from vecrl's batched info; for a sub-env whose
      episode ended it holds the last step's info, ``"terminal_observation"`` (from vecrl's final
      observation) and ``"TimeLimit.truncated"``, and the info of the reset that followed is in
      ``reset_infos``, as in SB3's ``DummyVecEnv``;
    - ``seed(S)`` makes the next ``reset()`` call vecrl's ``reset(seed=S)``: make a gym env with
      ``seed_rule="gymnasium"`` to give sub-env ``i`` the seed ``S + i``, as SB3 says;
    - ``get_attr``, ``set_attr``, ``env_method`` and ``env_is_wrapped`` reach the sub-envs where the
      backend has sub-env objects (the gym backend); a batched backend such as brax has one env object,
      which they reach instead.

    The env must autoreset in the same step (vecrl's default) and run without an episode budget
    (``num_episodes``), since SB3 resets nothing itself.

    Args:
        env: a vecrl vector env (``vecrl.make_vector_env(name, num_envs=n)``, any backend; gymnasium's vector
            wrappers over it are fine, its numpy wrappers go in ``vector_wrappers=``).

    Raises:
        TypeError: ``env`` not a vector env, or gymnasium's numpy vector wrappers straight over a torch env.
        ValueError: an env that does not autoreset in the same step, made with ``force_classic_api`` or with
            an episode budget (each naming the keyword to change).

    Examples:
        >>> import vecrl
        >>> env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=4))
        >>> env.seed(0)
        [0, 1, 2, 3]
        >>> obs = env.reset()
        >>> obs, rewards, dones, infos = env.step(np.zeros(4, dtype=np.int64))
        >>> obs.shape, rewards.dtype, len(infos)
        ((4, 4), dtype('float32'), 4)
    """

    def __init__(self, env: Any) -> None:
        if not isinstance(env, gymnasium.vector.VectorEnv):
            raise TypeError(
                f"SB3VecEnv takes a vecrl vector env, but got {env!r}. Make one with"
                " vecrl.make_vector_env(name, num_envs=<number of copies>)."
            )
        check_numpy_wrappers(env, "SB3VecEnv")
        # (read from metadata, which gymnasium's wrappers forward, as they do not forward attributes)
        mode = declared_autoreset_mode(env, default=None)  # type: ignore[arg-type]
        if mode != "same_step":
            raise ValueError(
                f"SB3VecEnv needs an env that autoresets in the same step (SB3 expects the next episode's first"
                f" observation and the last one in info), but this env's autoreset mode is {mode!r}. Make it"
                " with autoreset_mode='same_step' (the default)."
            )
        if getattr(_vecrl_layer(env), "force_classic_api", False):
            raise ValueError(
                "SB3VecEnv needs terminated and truncated apart (and reset's info), but this env was made with"
                " force_classic_api=True. Make it without force_classic_api."
            )
        num_episodes = getattr(env.unwrapped, "num_episodes", None)
        if num_episodes is not None:
            raise ValueError(
                f"SB3VecEnv needs an env without an episode budget, but this one runs"
                f" num_episodes={num_episodes} per sub-env, after which it reports NaN rewards. Make"
                " it without num_episodes: SB3 counts its own timesteps."
            )
        self.env = env
        self._actions: Any = _NO_ACTIONS
        super().__init__(int(env.num_envs), env.single_observation_space, env.single_action_space)

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next ``reset()``: sub-env ``i`` gets ``seed + i`` (SB3's rule); None draws a seed."""
        return super().seed(checked_seed(seed))

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Options for every sub-env's next reset (SB3's); one dict for all, since vecrl resets all sub-envs
        with one options dict: a list of different ones is a ValueError here, before anything is kept."""
        if isinstance(options, (list, tuple)) and any(other != options[0] for other in options):
            raise ValueError(
                f"vecrl resets all sub-envs with one options dict, but set_options() got different ones: {options}."
                " Give one dict for all sub-envs."
            )
        super().set_options(options)

    def reset(self) -> VecEnvObs:
        """Reset every sub-env (seeded by the last ``seed()``, with the options of ``set_options()``)."""
        options = self._options[0]
        observation, info = self.env.reset(seed=self._seeds[0], options=options or None)
        self.reset_infos = _per_env(info, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return _numpy(observation)

    def step_async(self, actions: np.ndarray) -> None:
        """Keep ``actions`` (one row per sub-env) for ``step_wait()``; actions that are not numbers, one
        batch of them, are a clear error here (Box, Discrete, MultiDiscrete and MultiBinary spaces). For
        Dict and Tuple spaces, a list of one dict or tuple per sub-env (as SB3's ``DummyVecEnv`` takes them)
        is batched into vecrl's form: one batch per key or part."""
        if isinstance(self.action_space, ARRAY_SPACES):
            if not isinstance(actions, np.ndarray):
                actions = _checked_array(actions)
        elif _per_env_actions(self.action_space, actions, self.num_envs):
            actions = _batched(self.action_space, actions)
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        """Step every sub-env with the actions given to ``step_async()``."""
        actions, self._actions = self._actions, _NO_ACTIONS
        if actions is _NO_ACTIONS:
            raise RuntimeError(
                "step_wait() was called without step_async(actions): call step_async first, or step(actions)."
            )
        # numpy actions as they are: TorchWrapper takes them (torch.as_tensor here would cost ~10 us a step)
        observation, reward, terminated, truncated, info = self.env.step(actions)
        terminated, truncated = _numpy(terminated), _numpy(truncated)
        dones = terminated | truncated
        infos = _per_env(info, self.num_envs)
        if dones.any():
            final_observations = info.get(FINAL_OBS_KEY)
            final_infos = _final_infos(info.get(FINAL_INFO_KEY), self.num_envs)
            for index in np.flatnonzero(dones).tolist():
                self.reset_infos[index] = infos[index]
                # what vector wrappers add for the row (episode statistics, is_success) beside its last info
                infos[index] = {
                    **infos[index],
                    **final_infos[index],
                    "terminal_observation": _row(final_observations, index),
                }
        for index, time_limit in enumerate((truncated & ~terminated).tolist()):
            infos[index]["TimeLimit.truncated"] = time_limit
        return _numpy(observation), _numpy(reward).astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vecrl env."""
        self.env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One frame per sub-env (``render_mode="rgb_array"``)."""
        frames: Any = self.env.render()
        return list(frames) if isinstance(frames, (tuple, list)) else [frames]

    @property
    def envs(self) -> list[gymnasium.Env]:
        """The sub-env objects, as ``DummyVecEnv.envs`` holds them, where the backend keeps them in this
        process (the gym backend without worker processes); an AttributeError otherwise."""
        sub_envs = self._local_sub_envs()
        if sub_envs is None:
            raise AttributeError(
                f"This SB3VecEnv's {type(self.env.unwrapped).__name__} keeps no sub-env objects in this process,"
                " so it has no envs list. Reach the sub-envs with get_attr, set_attr and env_method."
            )
        return list(sub_envs)

    def _local_sub_envs(self) -> list[gymnasium.Env] | None:
        """The backend's sub-env objects in this process, or None (a batched env, or worker processes)."""
        return getattr(self.env.unwrapped, "envs", None)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute ``attr_name`` of the sub-envs ``indices`` (of the one batched env where the backend
        has no sub-env objects)."""
        return [_target_attr(target, attr_name) for target in self._targets(indices, attr_name)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the attribute ``attr_name`` of the sub-envs ``indices``."""
        for target in self._targets(indices, attr_name):
            setter = getattr(target, "set_wrapper_attr", None)
            if setter is not None:
                setter(attr_name, value)
            else:
                setattr(target, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call the method ``method_name`` of the sub-envs ``indices``; one result each."""
        return [
            _target_attr(target, method_name)(*method_args, **method_kwargs)
            for target in self._targets(indices, method_name)
        ]

    def env_is_wrapped(
        self, wrapper_class: type[gymnasium.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        """Whether each of the sub-envs ``indices`` is wrapped in ``wrapper_class``."""
        return [is_wrapped(target, wrapper_class) for target in self._targets(indices)]

    def _targets(self, indices: VecEnvIndices, name: str = "") -> list[Any]:
        """What holds the attribute ``name`` for the sub-envs ``indices``: a ``GoalEnvWrapper`` around the
        env where it has one (its ``compute_reward`` is the GoalEnv's, which HER calls), else the sub-env
        objects ``indices`` names, or the one batched env for each of them."""
        chosen = list(self._get_indices(indices))
        outside = [index for index in chosen if not -self.num_envs <= index < self.num_envs]
        if outside:
            raise IndexError(
                f"indices {outside} name no sub-env: this VecEnv has {self.num_envs} (0 to {self.num_envs - 1})."
            )
        goal_env = _goal_wrapper(self.env)
        if goal_env is not None and hasattr(goal_env, name):
            return [goal_env for _ in chosen]
        sub_envs = self._local_sub_envs()
        if sub_envs is None:
            return [self.env.unwrapped for _ in chosen]
        return [sub_envs[index] for index in chosen]


#: What ``step_wait`` finds when ``step_async`` was not called (None is an action a user may pass by mistake).
_NO_ACTIONS: Any = object()


def _per_env_actions(space: gymnasium.Space, actions: Any, num_envs: int) -> bool:
    """Whether ``actions`` for the Dict or Tuple ``space`` come as SB3 gives them, a list (or object array) of
    ``num_envs`` dicts or tuples, rather than as one batch per key or part."""
    kind = Mapping if isinstance(space, gymnasium.spaces.Dict) else tuple
    return (
        isinstance(actions, (list, np.ndarray))
        and len(actions) == num_envs
        and all(isinstance(action, kind) for action in actions)
    )


def _batched(space: gymnasium.Space, actions: Sequence[Any] | np.ndarray) -> Any:
    """The per-env ``actions`` of the Dict or Tuple ``space`` stacked into one batch per key or part."""
    if isinstance(space, gymnasium.spaces.Dict):
        keys = set(space.spaces)
        for index, action in enumerate(actions):
            if set(action) != keys:
                raise ValueError(
                    f"step() expects each sub-env's action to be a dict with the keys {sorted(keys)} of the"
                    f" action space, but sub-env {index}'s has {sorted(action)}."
                )
        return {key: _batched(sub, [action[key] for action in actions]) for key, sub in space.spaces.items()}
    if isinstance(space, gymnasium.spaces.Tuple):
        for index, action in enumerate(actions):
            if len(action) != len(space.spaces):
                raise ValueError(
                    f"step() expects each sub-env's action to be a tuple of {len(space.spaces)} parts, one per"
                    f" part of the action space, but sub-env {index}'s has {len(action)}."
                )
        return tuple(_batched(sub, [action[i] for action in actions]) for i, sub in enumerate(space.spaces))
    return _checked_array(actions)


def _checked_array(actions: Any) -> np.ndarray:
    """``actions`` as a numeric numpy array, or a clear error for ragged, missing or non-numeric ones."""
    try:
        array = np.asarray(actions)
    except ValueError as error:  # a ragged list
        raise ValueError(
            f"step() expects one action per sub-env, of one shape, but got a ragged {actions!r}."
        ) from error
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"step() expects numeric actions, one per sub-env (a numpy array), but got {actions!r} of"
            f" {type(actions).__qualname__}."
        )
    return array


def _target_attr(target: Any, name: str) -> Any:
    getter = getattr(target, "get_wrapper_attr", None)
    return getter(name) if getter is not None else getattr(target, name)


def _goal_wrapper(env: Any) -> GoalEnvWrapper | None:
    """The ``GoalEnvWrapper`` among ``env``'s vector wrappers, or None."""
    while env is not None:
        if isinstance(env, GoalEnvWrapper):
            return env
        inner = getattr(env, "env", None)
        env = inner if inner is not env else None
    return None


def _numpy(x: Any) -> Any:
    """``x`` (a tensor, or dicts and tuples of them) as numpy arrays."""
    return tree_from_torch(x, "numpy")


def _row(batched: Any, index: int) -> Any:
    """Sub-env ``index``'s entry of a batched value: an item of an object array, a row of an array or a
    tensor (as numpy), nested through dicts and tuples."""
    if isinstance(batched, Mapping):
        return {key: _row(value, index) for key, value in batched.items()}
    if isinstance(batched, tuple):
        return tuple(_row(value, index) for value in batched)
    if isinstance(batched, torch.Tensor):
        row = _numpy(batched[index])
    elif isinstance(batched, np.ndarray):
        row = batched[index]
    else:
        return batched
    # one number as a Python number, as SB3's DummyVecEnv has it (Monitor's records: json-able)
    return row.item() if isinstance(row, (np.ndarray, np.generic)) and row.ndim == 0 else row


def _per_env(info: Mapping[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """gymnasium's batched ``info`` (each key with its ``"_<key>"`` mask, nested dicts alike) as one dict
    per sub-env, holding the keys whose mask is set for it (every key that has no mask)."""
    infos: list[dict[str, Any]] = [{} for _ in range(num_envs)]
    for key, value in info.items():
        if key.startswith("_") or key in _FINAL_KEYS:
            continue
        mask = info.get(f"_{key}")
        rows = _per_env(value, num_envs) if isinstance(value, Mapping) else None
        for index in range(num_envs):
            if mask is None or bool(mask[index]):
                infos[index][key] = rows[index] if rows is not None else _row(value, index)
    return infos


def _final_infos(final_info: Any, num_envs: int) -> list[dict[str, Any]]:
    """The last info of each sub-env's finished episode: batched as any info (gymnasium >= 1.0), or an
    object array of dicts (gymnasium 0.29)."""
    if isinstance(final_info, Mapping):
        return _per_env(final_info, num_envs)
    if isinstance(final_info, np.ndarray):
        return [dict(item) if isinstance(item, Mapping) else {} for item in final_info]
    return [{} for _ in range(num_envs)]


def _vecrl_layer(env: Any) -> Any:
    """The vecrl TorchWrapper under ``env``'s gymnasium wrappers (``env`` itself where there is none)."""
    return next((layer for layer in layers(env) if isinstance(layer, TorchWrapper)), env)
