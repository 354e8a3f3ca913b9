"""TorchWrapper: any gymnasium env or vector env, spoken to in torch tensors."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NoReturn

import gymnasium
import numpy as np
import torch
from gymnasium.spaces import Box, Discrete, Space

from vecrl.arrays import (
    ArrayType,
    array_type,
    convert_from_torch,
    convert_to_torch,
    convert_to_torch_bool,
    tree_from_torch,
    tree_to_torch,
)
from vecrl.autoreset import autoreset_mode_value
from vecrl.checks import checked_device, checked_flag, closed_env_error
from vecrl.compat import (
    FINAL_INFO_KEY,
    FINAL_INFO_MASK_KEY,
    FINAL_OBS_KEY,
    FINAL_OBS_MASK_KEY,
    GYMNASIUM_1,
    VECTOR_WRAPPER_BASE,
)
from vecrl.episode_vector_env import EpisodeVectorEnv
from vecrl.nests import first_leaf
from vecrl.spaces import ARRAY_SPACES, check_supported_space, unbatched_space


class TorchWrapper:
    """Wrap a single or vector env so that observations, rewards and episode-end flags are torch tensors.

    Actions may be given as torch tensors; they are converted to what the env expects (numpy, jax or
    torch), which is learnt from the first observation ``reset()`` returns. Tuple and Dict observations
    come back as tuples and dicts of tensors, nested as the space is (gymnasium's batched layout), and
    actions in such spaces are given alike, as torch tensors or numpy arrays; the array type is learnt
    from the first leaf.

    Wrapping a ``gymnasium.vector.VectorEnv`` makes a ``gymnasium.vector.VectorWrapper`` (a
    ``VectorEnvWrapper`` on gymnasium 0.29), as gymnasium's own ``NumpyToTorch`` is, so gymnasium's vector
    wrappers, TorchRL and the like accept it; it has the single and batched spaces, ``num_envs``,
    ``metadata``, ``autoreset_mode``, ``render``, ``call``, ``get_attr`` and ``set_attr``. gymnasium's
    wrappers that compute on the results with numpy (``RecordEpisodeStatistics``,
    ``NormalizeObservation``) take numpy arrays, not tensors: give them to
    ``make_vector_env(..., vector_wrappers=[...])``, which applies them beneath the conversion to torch.

    Args:
        env: a ``gymnasium.Env``, a ``gymnasium.vector.VectorEnv``, or an env with the old API
            (``reset`` returning only the observation, ``step`` returning 4 items).
        force_classic_api: ``reset`` returns only the observation and ``step`` returns
            ``(obs, reward, done, info)`` with ``done = terminated | truncated``.
        discrete_to_continuous_act: a ``Discrete(n)`` action space becomes ``Box(-inf, inf, (n,))`` and
            the argmax of the given action is applied. Other action spaces are left as they are, so one
            setting serves every env (EvoTorch's rule, which its ``VecGymNE`` relies on).
        clip_actions: clip Box actions to the action space's bounds; other action spaces are left as they
            are, as above.
        device: move the observations, rewards and flags to this device (by default they stay where the
            env made them: on the CPU for numpy, on the jax array's device for jax).
        dtype: cast floating observations (final ones included) and rewards to this torch dtype once, here,
            and say it in the observation and reward spaces (``torch.float32`` for a float32 network on
            MuJoCo's float64 observations); by default they keep the env's dtypes.

    Examples:
        >>> import gymnasium
        >>> env = TorchWrapper(gymnasium.make("CartPole-v1"), discrete_to_continuous_act=True)
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(torch.tensor([0.2, 0.9]))
        >>> obs.dtype, reward.item()
        (torch.float32, 1.0)
    """

    #: How ``make_vector_env`` made this env (a ``vecrl.make.VectorEnvRecipe``), or None.
    recipe: Any = None

    def __new__(cls, env: Any = None, *args: Any, **kwargs: Any) -> TorchWrapper:
        # A gymnasium vector env gets the subclass that is a gymnasium vector wrapper too.
        if cls is TorchWrapper and isinstance(env, gymnasium.vector.VectorEnv):
            cls = TorchVectorWrapper
        return super().__new__(cls)

    def __init__(
        self,
        env: Any,
        *,
        force_classic_api: bool = False,
        discrete_to_continuous_act: bool = False,
        clip_actions: bool = False,
        device: str | torch.device | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        self.env = env
        self._vectorized = hasattr(env.unwrapped, "single_observation_space")
        if self._vectorized:
            if not isinstance(self, gymnasium.vector.VectorEnv):  # a vector wrapper reads the env's
                self.num_envs: int = int(env.num_envs)
            single_obs = _single_space(env, "observation")
            single_act = _single_space(env, "action")
        else:
            single_obs, single_act = env.observation_space, env.action_space
        check_supported_space(single_obs, "observation space")
        check_supported_space(single_act, "action space")
        self._device = None if device is None else checked_device(device)

        self._dtype = _checked_float_dtype(dtype)
        self.observation_space: Space = _with_float_dtype(env.observation_space, self._dtype)
        self.action_space: Space = env.action_space
        if self._vectorized:
            self.single_observation_space: Space = _with_float_dtype(single_obs, self._dtype)
            self.single_action_space: Space = single_act
        # (TorchRL types its reward spec from the reward space: the rewards' dtype, cast or not)
        reward_space = getattr(env, "reward_space", None)
        if reward_space is not None:
            self.reward_space: Space = _with_float_dtype(reward_space, self._dtype)

        self._force_classic_api = checked_flag(force_classic_api, "force_classic_api")
        checked_flag(discrete_to_continuous_act, "discrete_to_continuous_act")
        checked_flag(clip_actions, "clip_actions")
        self._closed = False
        self._tree_observations = not isinstance(single_obs, ARRAY_SPACES)
        self._array_type: ArrayType | None = None
        # vecrl's own envs give final observations in vecrl's layout (vecrl.final_observations), which become
        # tensors with the observations; gymnasium's keep theirs (before 1.1 a numeric batch, zeros where no
        # episode ended, that would read as vecrl's layout once a tensor).
        self._final_observations_in_layout = isinstance(env.unwrapped, EpisodeVectorEnv)

        self._discrete_dtype: torch.dtype | None = None
        if discrete_to_continuous_act and isinstance(single_act, Discrete):
            self._discrete_dtype = torch.from_numpy(np.empty(0, dtype=single_act.dtype)).dtype
            self._discrete_start = int(single_act.start)
            self._discrete_n = int(single_act.n)
            box = Box(-np.inf, np.inf, shape=(int(single_act.n),), dtype=np.float32)
            if self._vectorized:
                self.single_action_space = box
                self.action_space = Box(
                    -np.inf, np.inf, shape=(self.num_envs, int(single_act.n)), dtype=np.float32
                )
            else:
                self.action_space = box

        self._clip_bounds: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] | None = None
        if clip_actions and isinstance(single_act, Box):
            low, high = torch.from_numpy(single_act.low), torch.from_numpy(single_act.high)
            self._clip_bounds = {low.device: (low, high)}

    @property
    def array_type(self) -> ArrayType | None:
        """The array type the wrapped env works with ("numpy", "torch" or "jax"); None before ``reset()``."""
        return self._array_type

    @property
    def force_classic_api(self) -> bool:
        """Whether ``reset`` returns only the observation and ``step`` returns ``(obs, reward, done, info)``."""
        return self._force_classic_api

    @property
    def changes_actions(self) -> bool:
        """Whether ``step()`` changes the actions it is given before the env sees them
        (``discrete_to_continuous_act``, ``clip_actions``), beyond converting their array type."""
        return self._discrete_dtype is not None or self._clip_bounds is not None

    @property
    def metadata(self) -> dict[str, Any]:
        """The wrapped env's ``metadata`` (e.g. its ``"autoreset_mode"``); ``{}`` when it has none."""
        return getattr(self.env, "metadata", None) or {}

    @property
    def autoreset_mode(self) -> Any:
        """The wrapped vector env's autoreset mode, as gymnasium's ``AutoresetMode`` where gymnasium has it
        (>= 1.1), else its name (``"same_step"``, ...); None when the env declares none.

        Examples:
            >>> from vecrl.compat import AutoresetMode
            >>> env = TorchWrapper(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")]))
            >>> env.autoreset_mode == (AutoresetMode.NEXT_STEP if AutoresetMode else None)
            True
        """
        mode = getattr(self.env, "autoreset_mode", None)
        if mode is None:
            mode = self.metadata.get("autoreset_mode")
        return None if mode is None else autoreset_mode_value(mode)

    @property
    def unwrapped(self) -> Any:
        """The innermost env."""
        return self.env.unwrapped

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Reset the env; returns ``(obs, info)``, or only ``obs`` under the classic API or an old-API env."""
        if self._closed:
            raise closed_env_error("reset", self)
        result = self.env.reset(*args, **kwargs)
        got_info = isinstance(result, tuple)
        observation, info = result if got_info else (result, {})
        if self._array_type is None:
            self._array_type = array_type(first_leaf(observation), "numpy")
        observation = tree_to_torch(observation) if self._tree_observations else convert_to_torch(observation)
        if self._device is not None:
            observation = _to_device(observation, self._device)
        if self._dtype is not None:
            observation = _floating_as(observation, self._dtype)
        if self._force_classic_api or not got_info:
            return observation
        return observation, info

    def step(self, action: Any) -> tuple[Any, ...]:
        """Step with a torch (or numpy) action; returns ``(obs, reward, terminated, truncated, info)`` as
        tensors, or ``(obs, reward, done, info)`` under the classic API or for an old-API env."""
        if self._array_type is None or self._closed:
            self._refuse_before_reset("step")
        return self._result(self.env.step(self._env_action(action)))

    def async_reset(self, seed: Any = None, options: Any = None) -> None:
        """Start a reset of every sub-env of an env with async batches (made with ``batch_size``); ``recv()``
        returns their observations a batch at a time (envpool's API).

        Examples:
            >>> import vecrl
            >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, batch_size=2, num_workers=2)
            >>> env.async_reset(seed=0)
            >>> obs, reward, terminated, truncated, info = env.recv()
            >>> env.send(torch.zeros(2, dtype=torch.int64), info["env_id"])
            >>> env.recv()[0].shape
            torch.Size([2, 4])
            >>> env.close()
        """
        if self._closed:
            raise closed_env_error("async_reset", self)
        self._async_env("async_reset").async_reset(seed=seed, options=options)

    def send(self, action: Any, env_id: Any = None) -> None:
        """Start the next step of the sub-envs ``env_id`` (those ``recv()`` returned) with ``action``, converted
        as ``step()`` converts it (example: ``async_reset``)."""
        if self._array_type is None or self._closed:
            self._refuse_before_reset("send")
        self._async_env("send").send(self._env_action(action), env_id)

    def recv(self) -> tuple[Any, ...]:
        """The results of the next batch of sub-envs whose step is done, as ``step()`` returns them, their ids
        in ``info["env_id"]`` (example: ``async_reset``)."""
        if self._closed:
            raise closed_env_error("recv", self)
        result = self._async_env("recv").recv()
        if self._array_type is None:
            self._array_type = array_type(first_leaf(result[0]), "numpy")
        return self._result(result)

    def _async_env(self, method: str) -> Any:
        """The wrapped env, where it has ``method`` (async batches); else why not, and what has it."""
        if not hasattr(self.env, method):
            raise AttributeError(
                f"{method}() steps async batches of sub-envs, which {type(self.env.unwrapped).__name__} does not"
                " have (or a wrapper in between hides them). Make the env with batch_size=k on a backend that"
                " has them: make_vector_env('gym::...', num_envs=n, batch_size=k) (worker processes) or"
                " 'envpool::...'; step() steps every sub-env on any backend."
            )
        return self.env

    def _refuse_before_reset(self, method: str) -> NoReturn:
        if self._closed:
            raise closed_env_error(method, self)
        raise RuntimeError(
            f"{method}() was called before reset(): the wrapper learns from the first observation which array"
            " type the env expects. Call reset() (or async_reset() and recv()) first."
        )

    def _env_action(self, action: Any) -> Any:
        """``action`` as the env takes it: a tensor converted to the env's array type, after
        ``discrete_to_continuous_act`` and ``clip_actions``."""
        array_type = self._array_type
        assert array_type is not None
        if type(action) is not torch.Tensor:  # (a tensor, the usual action, skips the ABC check of Mapping)
            if isinstance(action, (tuple, Mapping)):  # an action of a Tuple or Dict space
                return _tree_for(action, array_type)
            if not isinstance(action, torch.Tensor):
                try:
                    action = convert_to_torch(action)
                except (RuntimeError, TypeError, ValueError) as error:
                    raise self._unreadable_action(action, error) from None
        if action.is_complex():
            raise ValueError(
                f"step() received complex actions (dtype {action.dtype}), but the action space"
                f" {self.action_space} takes real numbers. Pass action.real if the imaginary part means nothing."
            )
        if self._discrete_dtype is not None:
            if not torch.isfinite(action).all():  # (the argmax of NaN scores would pick an action silently)
                raise ValueError(
                    "With discrete_to_continuous_act=True, step() takes scores whose argmax is the action, but"
                    " some scores are NaN or inf. No sub-env was stepped; look for them where the scores are made"
                    " (torch.isfinite(scores)), e.g. a policy whose parameters are not finite."
                )
            if action.ndim == 0 or action.shape[-1] != self._discrete_n:
                raise ValueError(
                    f"With discrete_to_continuous_act=True, step() takes one score per discrete action:"
                    f" {self._discrete_n} columns for Discrete({self._discrete_n}), whose argmax is the action;"
                    f" got an action of shape {tuple(action.shape)}."
                )
            action = torch.argmax(action, dim=-1).to(self._discrete_dtype)
            if self._discrete_start:
                action = action + self._discrete_start
        if self._clip_bounds is not None:
            low, high = self._bounds_on(action.device)
            action = torch.clamp(action, low, high)
        return action if array_type == "torch" else convert_from_torch(action, array_type)

    def _final_observations_as_tensors(self, info: Any) -> Any:
        """``info`` with the final observations and their mask (``vecrl.final_observations``), and the final
        infos' masks, as tensors on the device, as the observations are, where the env gave them as numpy or
        jax arrays."""
        final = info[FINAL_OBS_KEY]
        if isinstance(first_leaf(final), torch.Tensor):
            return info
        final = tree_to_torch(final) if self._tree_observations else convert_to_torch(final)
        mask = convert_to_torch_bool(info[FINAL_OBS_MASK_KEY])
        if self._device is not None:
            final, mask = _to_device(final, self._device), mask.to(self._device)
        info = {**info, FINAL_OBS_KEY: final, FINAL_OBS_MASK_KEY: mask}
        info_mask = info.get(FINAL_INFO_MASK_KEY)
        if info_mask is not None and not isinstance(info_mask, torch.Tensor):
            # the final infos' masks, the same array as the final observations' (vecrl.host_vector_env)
            finals = info.get(FINAL_INFO_KEY)
            if isinstance(finals, dict):
                info[FINAL_INFO_KEY] = {k: mask if v is info_mask else v for k, v in finals.items()}
            info[FINAL_INFO_MASK_KEY] = mask
        return info

    def _unreadable_action(self, action: Any, error: Exception) -> Exception:
        """The error for an action that is no array of numbers (None, text, ragged lists): what ``step()``
        expected, what it got, and torch's words."""
        space = self.action_space
        expected = (
            f"an array or tensor of numbers of shape {space.shape}" if space.shape else f"actions of {space}"
        )
        error_type = ValueError if isinstance(action, (list, np.ndarray)) else TypeError
        return error_type(
            f"step() expects {expected} (one row per sub-env for a vector env), but got {action!r} of"
            f" {type(action).__qualname__}, which is no array of numbers ({error})."
        )

    def _result(self, result: Any) -> tuple[Any, ...]:
        """The wrapped env's step ``result``, its items as tensors."""
        if type(result) is not tuple or len(result) not in (4, 5):
            raise TypeError(
                f"The wrapped env's step() returned {type(result).__qualname__}"
                f"{f' of length {len(result)}' if isinstance(result, tuple) else ''}; expected a tuple"
                " (obs, reward, terminated, truncated, info) or, for the old API, (obs, reward, done, info)."
            )
        # Each item is converted only when it is not already what we return (a backend that builds
        # tensors itself pays nothing here): this is the hot path of every step.
        observation, reward, terminated = result[0], result[1], result[2]
        if type(observation) is not torch.Tensor:
            observation = (
                tree_to_torch(observation) if self._tree_observations else convert_to_torch(observation)
            )
        if type(reward) is not torch.Tensor:
            reward = convert_to_torch(reward)
        if type(terminated) is not torch.Tensor or terminated.dtype is not torch.bool:
            terminated = convert_to_torch_bool(terminated)
        device = self._device
        if device is not None:
            observation, reward, terminated = _to_device((observation, reward, terminated), device)
        info = result[-1]
        if (
            self._final_observations_in_layout
            and FINAL_OBS_KEY in info
            and type(info[FINAL_OBS_KEY]) is not torch.Tensor  # (what torch backends give: nothing to do)
        ):
            info = self._final_observations_as_tensors(info)
        if self._dtype is not None:
            observation, reward = _floating_as((observation, reward), self._dtype)
            if self._final_observations_in_layout and FINAL_OBS_KEY in info:
                info = {**info, FINAL_OBS_KEY: _floating_as(info[FINAL_OBS_KEY], self._dtype)}
        if len(result) == 4:
            return observation, reward, terminated, info
        truncated = result[3]
        if type(truncated) is not torch.Tensor or truncated.dtype is not torch.bool:
            truncated = convert_to_torch_bool(truncated)
        if device is not None:
            truncated = truncated.to(device)
        if self._force_classic_api:
            return observation, reward, terminated | truncated, info
        return observation, reward, terminated, truncated, info

    def _bounds_on(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        assert self._clip_bounds is not None
        bounds = self._clip_bounds.get(device)
        if bounds is None:
            low, high = next(iter(self._clip_bounds.values()))
            bounds = self._clip_bounds[device] = (low.to(device), high.to(device))
        return bounds

    def seed(self, *args: Any, **kwargs: Any) -> Any:
        """Seed the wrapped env through its own ``seed()``."""
        seed = getattr(self.env, "seed", None)
        if seed is None:
            raise AttributeError(
                f"The wrapped env ({type(self.env).__qualname__}) has no seed() method; seed it with"
                " reset(seed=...) instead."
            )
        return seed(*args, **kwargs)

    def render(self, *args: Any, **kwargs: Any) -> Any:
        """Render the wrapped env."""
        return self.env.render(*args, **kwargs)

    def close(self, *args: Any, **kwargs: Any) -> Any:
        """Close the wrapped env and what was tied to it (``close_with_env``); ``step()`` and ``reset()``
        raise from now on (closing again is harmless)."""
        self._closed = True
        for companion in self.__dict__.pop("_companions", ()):
            companion.close()
        return self.env.close(*args, **kwargs)

    def close_with_env(self, companion: Any) -> None:
        """Close ``companion`` (anything with ``close()``, such as worker processes serving this env) when
        this env is closed.

        Examples:
            >>> import io
            >>> env = TorchWrapper(gymnasium.make("CartPole-v1"))
            >>> log = io.StringIO(); env.close_with_env(log); env.close()
            >>> log.closed
            True
        """
        self.__dict__.setdefault("_companions", []).append(companion)

    def __repr__(self) -> str:
        return f"TorchWrapper({self.env!r})"


class SubEnvAccess:
    """gymnasium's sub-env access (``call``, ``get_attr``, ``set_attr``) for a vector wrapper, passed to the
    wrapped vector env ``self.env`` (gymnasium 1.x's ``VectorWrapper`` does not forward them)."""

    env: Any
    #: The first change made to the sub-envs since they were made (``set_attr``), which the env's ``recipe``
    #: does not hold (an env made again from it is the env as it was made); None while there is none.
    changed_since_made: str | None = None

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env (or read the attribute ``name``); one result each."""
        return self.env.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env."""
        return self.env.get_attr(name)

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env (a list or tuple: one value each); the env's
        ``changed_since_made`` names the first such change, which its ``recipe`` does not hold."""
        self.env.set_attr(name, values)
        if self.changed_since_made is None:
            self.changed_since_made = f"set_attr({name!r}, {values!r})"


class TorchVectorWrapper(SubEnvAccess, TorchWrapper, VECTOR_WRAPPER_BASE):
    """The ``TorchWrapper`` of a ``gymnasium.vector.VectorEnv``: a gymnasium vector wrapper as well.

    ``TorchWrapper(vector_env)`` makes one; there is no need to name this class.

    Examples:
        >>> env = TorchWrapper(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2))
        >>> isinstance(env, gymnasium.vector.VectorEnv), env.get_attr("gravity")
        (True, (9.8, 9.8))
    """

    def __init__(self, env: Any, **kwargs: Any) -> None:
        VECTOR_WRAPPER_BASE.__init__(self, env)  # type: ignore[misc]
        if not GYMNASIUM_1:  # 0.29's VectorEnvWrapper forwards missing attributes but keeps none itself
            self.num_envs = int(env.num_envs)
        TorchWrapper.__init__(self, env, **kwargs)


def layers(env: Any) -> Iterator[Any]:
    """``env`` and each env it wraps (``.env``), outermost first: gymnasium's wrappers, vecrl's own
    (``TorchWrapper``, ``NumpyView``) and the env within.

    Examples:
        >>> import vecrl
        >>> [type(layer).__name__ for layer in layers(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))]
        ['TorchVectorWrapper', 'SyncVectorEnv']
    """
    layer = env
    while layer is not None:
        yield layer
        inner = getattr(layer, "env", None)
        layer = None if inner is layer else inner


def _tree_for(action: Any, array_type: ArrayType) -> Any:
    """The action ``action`` of a Tuple or Dict space with its leaves as ``array_type`` arrays."""
    if array_type == "torch":
        return tree_to_torch(action)
    return tree_from_torch(action, array_type)


#: The dtypes ``dtype=`` takes: torch's floating dtypes that numpy has too (the spaces say them).
FLOAT_DTYPES = (torch.float16, torch.float32, torch.float64)


def _checked_float_dtype(dtype: Any) -> torch.dtype | None:
    if dtype is None or dtype in FLOAT_DTYPES:
        return dtype
    raise ValueError(
        f"dtype must be None or a torch floating dtype, {', '.join(map(str, FLOAT_DTYPES))} (what floating"
        f" observations and rewards are cast to), got {dtype!r}."
    )


def _with_float_dtype(space: Space, dtype: torch.dtype | None) -> Space:
    """``space`` with its floating Box spaces (nested in Dict and Tuple spaces) of ``dtype``."""
    if dtype is None:
        return space
    if isinstance(space, Box) and np.issubdtype(space.dtype, np.floating):
        numpy_dtype = torch.empty(0, dtype=dtype).numpy().dtype
        return Box(space.low.astype(numpy_dtype), space.high.astype(numpy_dtype), space.shape, numpy_dtype)
    if isinstance(space, gymnasium.spaces.Dict):
        return gymnasium.spaces.Dict(
            {key: _with_float_dtype(sub, dtype) for key, sub in space.spaces.items()}
        )
    if isinstance(space, gymnasium.spaces.Tuple):
        return gymnasium.spaces.Tuple(tuple(_with_float_dtype(sub, dtype) for sub in space.spaces))
    return space


def _floating_as(x: Any, dtype: torch.dtype) -> Any:
    """``x`` (a tensor, or tuples and dicts of them) with its floating tensors of ``dtype``."""
    if isinstance(x, torch.Tensor):
        return x.to(dtype) if x.is_floating_point() else x
    if isinstance(x, tuple):
        return tuple(_floating_as(item, dtype) for item in x)
    return {key: _floating_as(value, dtype) for key, value in x.items()}


def _to_device(x: Any, device: torch.device) -> Any:
    """``x`` (a tensor, or tuples and dicts of tensors) on ``device``."""
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, tuple):
        return tuple(_to_device(item, device) for item in x)
    return {key: _to_device(value, device) for key, value in x.items()}


def _single_space(env: Any, kind: str) -> Space:
    """The space of one sub-env of the vector env ``env`` (its own attribute, else unbatched)."""
    single = getattr(env, f"single_{kind}_space", None)
    if single is not None:
        return single
    return unbatched_space(getattr(env, f"{kind}_space"), f"{kind} space")
