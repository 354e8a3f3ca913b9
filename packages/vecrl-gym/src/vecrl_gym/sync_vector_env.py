"""SyncVectorEnv: gymnasium envs stepped in lockstep, with gymnasium's three autoreset modes."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

import gymnasium
import numpy as np
import torch
from gymnasium.vector.utils import iterate

from vecrl.autoreset import autoreset_metadata
from vecrl.checks import SubEnvError, check_fits_in_memory
from vecrl.compat import GYMNASIUM_1
from vecrl.host_vector_env import HostVectorEnv, StepRows
from vecrl.infos import info_to_device
from vecrl.spaces import check_supported_space
from vecrl_gym.batching import (
    TreeRows,
    allocate_observations,
    observations_to_torch,
)
from vecrl_gym.checks import (
    attribute_values,
    check_same_spaces,
    checked_env_makers,
    observation_spaces,
)
from vecrl_gym.gym_vector_env import GymOptions, GymVectorEnv, Seed
from vecrl_gym.params import ParamsWriter, default_params
from vecrl_gym.tensor_rows import TensorRows

if TYPE_CHECKING:
    from typing import Unpack

EnvMaker = Callable[[], gymnasium.Env]


class SyncVectorEnv(HostVectorEnv, GymVectorEnv):
    """Sub-environments stepped one after the other, reset as ``autoreset_mode`` says: a backend of the
    episode engine (``vecrl.HostVectorEnv``), which owns every episode rule, this class saying only how to
    step and reset a set of sub-envs.

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

    Keyword Args:
        empty_info (bool): always report ``info`` as ``{}`` and skip all per-step info work.
        num_episodes (int | None): run each sub-env for this many episodes. On the step where its last episode
            ends it reports that episode's final observation and reward; from then on, until the next
            ``reset()`` (of that sub-env), it reports terminated = truncated = True, a NaN observation (0
            for integer dtypes) and a NaN reward. In ``next_step`` mode the budget is counted the same way
            (the reset step that would start one episode too many is not taken); with ``disabled``
            autoreset it is a ValueError, since the user starts every episode.
        device (str | torch.device | None): return torch tensors on this device instead of numpy arrays.
        autoreset_mode (str): ``"same_step"``, ``"next_step"`` or ``"disabled"`` (see above).
        seed_rule (str): how ``reset(seed=S)`` seeds the sub-envs: ``"evotorch"`` (the default) draws their
            seeds from ``numpy.random.RandomState(S)``, as EvoTorch does; ``"gymnasium"`` gives sub-env
            ``i`` the seed ``S + i``, as gymnasium's vector envs do.
        observation_mode (str | tuple): as in gymnasium's vector envs (>= 1.0): ``"same"`` (the default),
            ``"different"`` (observation spaces of one shape and dtype with bounds of their own, batched by
            gymnasium's ``batch_differing_spaces``) or ``(batched space, single space)``.

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

    # gymnasium's envs give an info dict each, batched as gymnasium batches them; spent sub-envs are reset as
    # EvoTorch resets them, so that later unseeded resets draw alike
    capabilities = replace(GymVectorEnv.capabilities, infos_per_sub_env=True, resets_spent_sub_envs=True)

    def __init__(
        self,
        env_makers: Iterable[EnvMaker],
        **options: Unpack[GymOptions],
    ) -> None:
        makers = checked_env_makers(env_makers, "SyncVectorEnv")
        episode_options = self._take_options(options)
        envs = _make_sub_envs(makers)
        try:
            check_same_spaces(envs, self.observation_mode)
            single, batched = observation_spaces(
                self.observation_mode, [env.observation_space for env in envs]
            )
            super().__init__(
                len(envs),
                single,
                envs[0].action_space,
                episode_options=episode_options,
                empty_info=self._options["empty_info"],
            )
            if batched is not None:
                self.observation_space = batched
        except BaseException:
            for env in envs:
                env.close()
            raise

        self.envs: list[gymnasium.Env] = envs
        self._default_params = _shared_params(envs)
        self._params_writer: ParamsWriter | None = None  # made on the first reset with params
        self._params_varied: set[str] = set()  # the names ever given (the others are at their defaults)
        self.metadata = {**getattr(envs[0], "metadata", {}), **autoreset_metadata(self._autoreset_mode)}
        self.render_mode = getattr(envs[0], "render_mode", None)
        self._env_steps = [env.step for env in envs]
        self._env_resets = [env.reset for env in envs]
        # On the CPU, the results of a step of every sub-env are rows of tensors made many at a time
        # (TensorRows): step_rows writes the row's arrays and step_returned returns its tensors.
        self._result_rows: TensorRows | None = None
        if self._device is not None and self._device.type == "cpu" and not self._tree_observations:
            self._result_rows = TensorRows(self._no_results)
        self._row: Any = None
        # the sub-envs of the last step of some of them, as ids, indices and step functions
        self._some_ids: np.ndarray | None = None
        self._some_indices: list[int] = []
        self._some_steps: list[Any] = []
        space = self.single_observation_space
        self._observation_shape: tuple[int, ...] = tuple(space.shape or ())
        self._observation_dtype = space.dtype

    def reset(
        self, *, seed: Seed = None, options: Mapping[str, Any] | None = None
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
        return super().reset(seed=seed, options=options)

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        """The parameters ``reset(options={"params": ...})`` sets per sub-env (``vecrl_gym.params``: a MuJoCo
        env's model fields and gravity, a classic-control env's constants), with the values the sub-envs were
        made with; none where the sub-envs differ in them."""
        return self._default_params

    def set_params(self, ids: np.ndarray | None, params: dict[str, np.ndarray]) -> None:
        if self._params_writer is None:
            self._params_writer = ParamsWriter(self.envs)
        rows = range(self.num_envs) if ids is None else ids.tolist()
        # of the names not given, only those ever given go back to their defaults (the others are there)
        self._params_varied.update(params)
        columns: dict[str, list[Any]] = {}
        for name in self._params_varied:
            value = params.get(name)
            if value is None:
                default = self._default_params[name]
                value = np.broadcast_to(default, (len(rows), *default.shape))
            columns[name] = value.tolist() if value.ndim == 1 else list(value)  # (floats for constants)
        self._params_writer.write(rows, columns)

    def reset_rows(
        self, ids: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> tuple[Any, Any]:
        """Reset every sub-env (the engine resets some with ``reset_rows_into``), one after the other; their
        observations and info dicts."""
        assert ids is None, "a reset of some sub-envs is reset_rows_into's"
        observations = self._new_observations()
        return observations, self._reset_each(range(self.num_envs), seeds, options, observations)

    def reset_rows_into(
        self, ids: np.ndarray, seeds: list[Any] | None, options: dict[str, Any] | None, out: Any
    ) -> Any:
        """Reset the sub-envs ``ids``, one after the other, writing each one's observation straight into its
        row of ``out`` (the engine's array); their info dicts."""
        return self._reset_each(ids.tolist(), seeds, options, out)

    def _reset_each(
        self, indices: Sequence[int], seeds: list[Any] | None, options: dict[str, Any] | None, out: Any
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """Reset the sub-envs ``indices`` in order, with ``seeds`` (one each; None: none) and ``options``,
        writing their observations into their rows of ``out``; their info dicts in that order (``{}``: none
        has one)."""
        rows = TreeRows(out) if self._tree_observations else out
        infos: list[dict[str, Any]] | None = None
        env_resets, empty_info = self._env_resets, self.empty_info
        position = -1
        try:
            for position, index in enumerate(indices):
                seed = None if seeds is None else seeds[position]
                # options only where given: an env whose reset(seed=None) takes none still resets, as under
                # gymnasium's and stable-baselines3's vector envs
                reset = env_resets[index]
                rows[index], info = reset(seed=seed) if options is None else reset(seed=seed, options=options)
                if info and not empty_info:
                    if infos is None:
                        infos = [{}] * len(indices)
                    infos[position] = info
        except BaseException as error:
            self._fail_in(indices[max(position, 0)], error)
        return infos or {}

    def step_rows(self, actions: Any, ids: np.ndarray | None) -> StepRows:
        """Step every sub-env (the engine steps some with ``step_rows_into``), one after the other, each with
        its row of ``actions``."""
        assert ids is None, "a step of some sub-envs is step_rows_into's"
        if self._result_rows is not None:
            self._row = row = self._result_rows.next_row()
            results = row[0]
        else:
            results = self._new_results()
        observations, rewards, terminated, truncated = results
        info = self._step_each(range(self.num_envs), self._env_steps, actions, results)
        return observations, rewards, terminated, truncated, info

    def step_rows_into(self, actions: Any, ids: np.ndarray, out: tuple[Any, ...]) -> Any:
        """Step the sub-envs ``ids``, one after the other, each with its row of ``actions``, writing each
        one's results straight into its rows of ``out`` (the engine's arrays)."""
        if ids is not self._some_ids:  # (the budget's live ids stay one array from one spend to the next)
            self._some_ids, self._some_indices = ids, ids.tolist()
            self._some_steps = [self._env_steps[index] for index in self._some_indices]
        infos = self._step_each(self._some_indices, self._some_steps, actions, out)
        if isinstance(infos, list):  # (in the order of ids)
            return [infos[index] for index in self._some_indices]
        return infos

    def _step_each(
        self, indices: Sequence[int], env_steps: list[Any], actions: Any, out: tuple[Any, ...]
    ) -> list[dict[str, Any]] | dict[str, Any]:
        """Step the sub-envs ``indices`` (their step functions ``env_steps``) with the rows of ``actions``, in
        order, writing their results into their rows of ``out`` (observations, rewards, terminated,
        truncated: a row per sub-env, the flags False); a list of every sub-env's info dict (``{}``: none has
        one)."""
        if self._tree_actions:
            actions = list(iterate(self.action_space, actions))
        observations, rewards, terminated, truncated = out
        rows = TreeRows(observations) if self._tree_observations else observations
        infos: list[dict[str, Any]] | None = None
        empty_info = self.empty_info
        index = -1
        try:
            for index, env_step, action in zip(indices, env_steps, actions):  # noqa: B905 (equal lengths)
                observation, reward, term, trunc, info = env_step(action)
                if term or trunc:
                    terminated[index] = term
                    truncated[index] = trunc
                if info and not empty_info:
                    if infos is None:
                        infos = [{}] * self.num_envs
                    infos[index] = info
                rows[index] = observation
                rewards[index] = reward
        except BaseException as error:
            self._fail_in(index if index >= 0 else indices[0], error)
        return infos or {}

    def _new_results(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
        """Arrays for the observations, rewards, terminated and truncated of every sub-env, the flags False
        (a step writes them only where an episode ends)."""
        count = self.num_envs
        return (
            self._new_observations(),
            np.empty(count, self._reward_dtype),
            np.zeros(count, np.bool_),
            np.zeros(count, np.bool_),
        )

    def _new_observations(self) -> Any:
        """Uninitialised arrays for the observations of every sub-env (gymnasium's layout)."""
        if self._tree_observations:
            return allocate_observations(self.single_observation_space, self.num_envs)
        # (np.empty directly: gymnasium's create_empty_array takes 6 times as long)
        return np.empty((self.num_envs, *self._observation_shape), self._observation_dtype)

    def reset_returned(self, observation: Any, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        device = self._device
        if device is None:
            return observation, info
        return observations_to_torch(observation, device), info_to_device(info, device)

    def step_returned(
        self, observation: Any, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, info: Any
    ) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        device = self._device
        if device is None:
            return observation, reward, terminated, truncated, info
        if info:
            info = info_to_device(info, device)
        row, self._row = self._row, None
        if row is not None and observation is row[0][0] and reward is row[0][1]:  # this step's TensorRows row
            tensors = row[1]
            return tensors[0], tensors[1], tensors[2], tensors[3], info
        if device.type == "cpu":
            from_numpy = torch.from_numpy
            return (
                observations_to_torch(observation, device),
                from_numpy(reward),
                from_numpy(terminated),
                from_numpy(truncated),
                info,
            )
        return (
            observations_to_torch(observation, device),
            torch.from_numpy(reward).to(device),
            torch.from_numpy(terminated).to(device),
            torch.from_numpy(truncated).to(device),
            info,
        )

    def _fail_in(self, index: int, error: BaseException) -> NoReturn:
        """Refuse step() from now on (until a full reset) and raise: a SubEnvError naming sub-env ``index``
        and chaining ``error``, or ``error`` itself when it is no Exception (Ctrl-C)."""
        during = self._calling
        self.failure = f"sub-env {index} raised {type(error).__qualname__} in {during}"
        if not isinstance(error, Exception):
            raise error
        raise SubEnvError(index, during, error) from error

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
        self._last_observation = None
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
            # by the env within the wrappers, as stable-baselines3's DummyVecEnv checks: two Monitors of one
            # env are two objects, yet each step would step that env twice
            first = made.setdefault(id(getattr(env, "unwrapped", env)), index)
            if first != index:
                envs.pop()  # closed once below, not twice
                raise ValueError(
                    f"env_makers[{first}] and env_makers[{index}] returned the same env object (or wrappers of"
                    " one env: their .unwrapped is the same), which every step would step more than once. Each"
                    " maker must make a new env: lambda: gymnasium.make('CartPole-v1'), not a lambda returning"
                    " an env made beforehand."
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


def _shared_params(envs: Sequence[gymnasium.Env]) -> dict[str, np.ndarray]:
    """The parameters of the first sub-env, where every sub-env has the same names and shapes (else none)."""
    first = default_params(envs[0])
    shapes = {name: value.shape for name, value in first.items()}
    for env in envs[1:]:
        if {name: value.shape for name, value in default_params(env).items()} != shapes:
            return {}
    return first
