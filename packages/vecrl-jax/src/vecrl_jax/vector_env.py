"""JaxVectorEnv, the base of the jax backends: a ``JaxEnv`` (``vecrl_jax.protocol``) of ``num_envs`` sub-envs
as a gymnasium VectorEnv, stepped in one jitted call."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral
from typing import Any, ClassVar, Literal, NamedTuple, NoReturn

import jax
import numpy as np
import torch
from gymnasium.spaces import Box, Discrete, Space
from jax.sharding import SingleDeviceSharding

from vecrl import EpisodeVectorEnv
from vecrl.action_checks import ActionCheck
from vecrl.arrays import convert_from_torch, convert_to_numpy, convert_to_torch
from vecrl.autoreset import (
    AutoresetModeName,
)
from vecrl.checks import (
    check_fits_in_memory,
    check_refused_keywords,
    checked_num_envs,
    closed_env_error,
)
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl.contract import EpisodeOptions
from vecrl.episodes import acting_sub_envs
from vecrl.final_observations import final_infos
from vecrl.params import PARAMS_OPTION, with_defaults
from vecrl.rendering import NoFrames, checked_render_mode, needs_rgb_mode
from vecrl.seeding import SeedRule, checked_seeds, is_seed
from vecrl_jax import engine
from vecrl_jax.compile_ahead import CompileAhead
from vecrl_jax.keywords import JAX_REFUSALS
from vecrl_jax.packing import Packer
from vecrl_jax.protocol import JaxEnv, default_params
from vecrl_jax.spaces import observation_space

#: The most steps a jax env counts (an int32).
_MAX_STEPS = 2**31 - 1


def check_episode_keywords(kwargs: Mapping[str, Any]) -> None:
    """A ValueError for an ``episode_length`` or ``action_repeat`` that is not a positive int (brax's
    EpisodeWrapper takes anything: 0 or fewer repeats never advance the simulation, a length of 0 or less
    ends every episode at once, 2.5 is cut to 2). ``episode_length=None`` (no time limit) is brax's own.

    Examples:
        >>> check_episode_keywords({"episode_length": 0})
        Traceback (most recent call last):
        ...
        ValueError: episode_length must be a positive int (steps in an episode before it is truncated), got 0.
    """
    meanings = {
        "episode_length": "steps in an episode before it is truncated",
        "action_repeat": "physics steps per env step",
    }
    for key, meaning in meanings.items():
        value = kwargs.get(key)
        if value is None and key == "episode_length":
            continue
        if key not in kwargs:
            continue
        if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < 1:
            raise ValueError(f"{key} must be a positive int ({meaning}), got {value!r}.")
        if int(value) > _MAX_STEPS:  # (jax counts steps in int32: it would overflow)
            raise ValueError(
                f"{key} must be at most 2**31 - 1 = {_MAX_STEPS:,} ({meaning}; jax counts them in int32), got"
                f" {value!r}.{' For episodes without a time limit, give episode_length=None.' if key == 'episode_length' else ''}"
            )


class JaxVectorEnv(EpisodeVectorEnv):
    """``num_envs`` copies of a jax env, stepped together in one jitted call, with vecrl's episode rules
    inside it: the base of the jax backends (vecrl-brax's ``VectorEnvFromBrax``, vecrl-playground's
    ``PlaygroundVectorEnv``, vecrl-gymnax's ``GymnaxVectorEnv``) and of yours.

    A subclass says which env it steps, and nothing else: ``make_env(env_name, kwargs)`` returns it as a
    ``vecrl_jax.JaxEnv`` (``reset(keys)``, ``step(state, action)``, ``outcome(state)`` and one sub-env's
    ``action_space``: a ``Box``, stepped as float32, or a ``Discrete``, stepped as int32), from the
    constructor's keywords that are not vecrl's; ``reserved_kwargs`` names the keywords it refuses, each with
    why. Everything below is this class's:

    - ``autoreset_mode="same_step"`` (the default, gymnasium's SAME_STEP): a sub-env whose episode ends
      is reset inside the same jitted step, from a fresh random initial state (a new key per reset,
      unlike brax's own ``AutoResetWrapper``, which replays the first state). On a step where an episode
      ended, ``info[FINAL_OBS_KEY]`` holds the last observation of every row (meaningful where
      ``info[FINAL_OBS_MASK_KEY]`` is True), as on every backend (``vecrl.final_observations``).
    - ``"next_step"``: the step that ends an episode returns its last observation; the next step
      restarts that sub-env from a fresh state, ignores its action and reports reward 0 and
      ``terminated = truncated = False``. ``"disabled"``: no autoreset; stepping a sub-env whose episode
      ended before resetting it is a RuntimeError. The mode is declared in ``metadata["autoreset_mode"]``
      and chooses the jitted step once, at construction.
    - NaN or inf actions (of a Box), and actions out of range (of a Discrete), of sub-envs that use theirs
      are a ValueError before anything steps, as on the gym backend, for actions on the host (numpy, CPU
      tensors: one reduction a step); actions already on a device (jax arrays, CUDA tensors) are not
      checked, which would cost a sync a step. Float actions for a Discrete space are a ValueError.
    - ``reset(options={"reset_mask": mask})`` restarts only the sub-envs where ``mask`` is True (fresh
      random states: those a full ``reset`` with the same seed would give these rows; their budgets
      restart); the other rows keep their states and the observations last returned.
    - ``terminated`` and ``truncated`` come from the env's ``done`` and ``info["truncation"]``: reaching
      ``episode_length`` is a truncation.
    - ``num_episodes=n``: each sub-env runs n episodes; after its last one it reports NaN observation and
      reward, and terminated = truncated = True, until ``reset()`` (in ``next_step`` mode too, where the
      restart that would begin one episode too many is not taken; refused with ``"disabled"``).
    - Seeding: ``reset(seed=S)``, or ``seed(S)`` then ``reset()``, reproduce a run exactly; a reset
      without a seed draws one from a numpy Generator the env owns. A list of ``num_envs`` seeds starts
      sub-env ``i`` from a key of ``seeds[i]`` alone (the same state wherever in the batch that seed is),
      in a full reset and in a masked one (only the masked entries are used); the refills of autoreset
      are then seeded by the whole list. With ``seed_rule="evotorch"`` or ``"gymnasium"``, an int seed
      stands for that list, as on the gym backend and envpool (``vecrl.seeding``), so one seed gives the
      sub-envs the same seeds on every backend; without it (the default) the sub-envs start from keys
      split off one key of the seed, jax's own way.
    - Results stay on jax's device: jax arrays (``array_type="jax"``), or torch tensors viewing the jax
      buffers through DLPack without a copy (``array_type="torch"``, what ``make_brax_env`` uses). Actions
      may be jax or numpy arrays or torch tensors (a CPU tensor reaches the jitted step as a numpy
      view, the cheapest route into jax).

    Examples:
        >>> import jax.numpy as jnp
        >>> from vecrl_jax import Outcome
        >>> class Coins:  # each step flips a coin per sub-env; heads (1) ends the episode, with reward 1
        ...     action_space = Discrete(2)
        ...     def reset(self, keys):
        ...         return keys, jnp.zeros(len(keys), bool)
        ...     def step(self, state, action):
        ...         keys = jax.vmap(lambda key: jax.random.split(key)[0])(state[0])
        ...         return keys, jax.vmap(jax.random.bernoulli)(keys)
        ...     def outcome(self, state):
        ...         heads = state[1]
        ...         return Outcome(heads[:, None].astype(jnp.float32), heads.astype(jnp.float32), heads, ~heads & False)
        >>> class CoinEnvs(JaxVectorEnv):
        ...     @staticmethod
        ...     def make_env(env_name, kwargs):
        ...         return Coins()
        >>> env = CoinEnvs("coins", num_envs=4, seed_rule="gymnasium")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((4, 1), Discrete(2))
    """

    jit_compiled = True  # the first reset() and step() of a configuration compile (seconds)
    #: Keywords this class refuses, each with why (``vecrl.checks.check_refused_keywords``, before anything
    #: is built).
    reserved_kwargs: ClassVar[Mapping[str, str]] = JAX_REFUSALS

    @staticmethod
    def make_env(env_name: str, kwargs: Mapping[str, Any]) -> JaxEnv:
        """The env this class steps, a ``JaxEnv``; ``kwargs`` are the constructor's keywords that are not
        vecrl's. A subclass gives it."""
        raise NotImplementedError(
            "JaxVectorEnv steps the env that its subclass's make_env(env_name, kwargs) returns: subclass it"
            " (as vecrl-brax's VectorEnvFromBrax does), or use a jax backend's env."
        )

    def __init__(
        self,
        env_name: str,
        *,
        num_envs: int,
        num_episodes: int | None = None,
        array_type: Literal["jax", "torch"] = "jax",
        autoreset_mode: Any = EpisodeOptions.autoreset_mode,
        seed_rule: SeedRule | None = None,
        render_mode: str | None = None,
        **env_kwargs: Any,
    ) -> None:
        num_envs = checked_num_envs(num_envs)
        #: ``"rgb_array"``: ``render_frames`` draws (its env's library draws from states, so nothing is set up).
        self.render_mode: str | None = checked_render_mode(render_mode, type(self).__name__)
        if array_type not in ("jax", "torch"):
            raise ValueError(f"array_type must be 'jax' or 'torch', but got {array_type!r}.")
        options = EpisodeOptions(
            num_episodes=num_episodes, autoreset_mode=autoreset_mode, seed_rule=seed_rule
        )
        mode = options.autoreset_mode
        check_refused_keywords(f"{type(self).__name__}(...)", env_kwargs, self.reserved_kwargs)
        check_episode_keywords(env_kwargs)
        self.env_name: str = env_name
        self.array_type: Literal["jax", "torch"] = array_type
        compiled = _compiled_env(
            _Config(
                self.make_env,
                env_name,
                num_envs,
                options.num_episodes,
                array_type == "torch",
                mode,
                tuple(sorted(env_kwargs.items())),
            )
        )
        #: The env stepped (``vecrl_jax.JaxEnv``), which evaluate's fused rollout steps too.
        self.jax_env: JaxEnv = compiled.env
        self._packer: Packer = compiled.packed.packer
        self._jit: engine.PackedEnv = compiled.packed
        self._step_ahead: CompileAhead = compiled.step_ahead
        outcome = compiled.outcome
        super().__init__(
            num_envs,
            observation_space(outcome.observation),
            compiled.action_space,
            episode_options=options,
            reward_dtype=np.float32,
        )
        self._actions: jax.ShapeDtypeStruct = compiled.packed.step_args[1]
        self._discrete: bool = isinstance(compiled.action_space, Discrete)
        self._action_check = ActionCheck(compiled.action_space, num_envs, type(self).__name__)
        obs_leaves, obs_treedef = jax.tree_util.tree_flatten(outcome.observation)
        self._obs_treedef: Any = obs_treedef
        # per sub-env shape of each observation leaf (one leaf: a flat observation; several: a dict)
        self._obs_shapes: list[tuple[int, ...]] = [tuple(leaf.shape[1:]) for leaf in obs_leaves]
        self._observation_size: int = sum(math.prod(shape) for shape in self._obs_shapes)
        self._dict_observations: bool = isinstance(outcome.observation, Mapping)
        self._metric_sizes: dict[str, int] = {
            name: math.prod(leaf.shape[1:]) for name, leaf in sorted(outcome.info.items())
        }
        self._seed_source: np.random.Generator = np.random.default_rng()
        self._carry: engine.Carry | None = None  # its state packed
        # fresh initial states for autoreset (two packed batches end to end), and the source of the keys of its
        # refills (seeded by reset(), so that a seed reproduces a run)
        self._pool: dict[str, jax.Array] | None = None
        self._refill_seeds: np.random.Generator = np.random.default_rng()
        self._last_observation: Any = None  # what the last reset() or step() returned, for masked resets
        self.closed: bool = False

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        """The parameters the env lets vary per sub-env (``vecrl.params``), with their defaults: MuJoCo model
        fields on brax and playground, the ``EnvParams`` fields on gymnax."""
        return {name: value.copy() for name, value in default_params(self.jax_env).items()}

    @property
    def state(self) -> Any:
        """The current state of the env (batched pytree of jax arrays); None before the first ``reset()``."""
        return None if self._carry is None else self._packer.unpack(self._carry.state)

    def render_snapshot(self, index: int) -> Any:
        """The state of sub-env ``index`` now (``vecrl.rendering``), which ``render_frames`` draws."""
        needs_rgb_mode(self, index)
        if self._carry is None:
            raise NoFrames(f"{type(self).__name__} has no state to draw yet: reset() it first")
        return jax.tree_util.tree_map(lambda leaf: leaf[index], self.state)

    def render_frames(self, snapshots: Sequence[Any]) -> list[Any]:
        """The frames of the states ``snapshots``, as the env's library draws them: its ``JaxEnv``'s
        ``render(states)`` (``vecrl_jax.protocol``)."""
        render = getattr(self.jax_env, "render", None)
        if render is None:
            raise NoFrames(
                f"{type(self).__name__}'s env ({type(self.jax_env).__name__}) draws no frames: a JaxEnv that can"
                " gives render(states) (vecrl_jax.protocol)"
            )
        return list(render(list(snapshots)))

    def _checked_seeds(self, seed: Any) -> int | np.ndarray:
        """``seed`` as an int (without a ``seed_rule``: split into keys jax's way), or as a uint32 array of
        one seed per sub-env (``vecrl.seeding.checked_seeds``; a None in a list: a seed drawn at random,
        as an unseeded reset draws one); a ValueError otherwise."""
        if is_seed(seed) and self._seed_rule is None:
            return int(seed)
        seeds = checked_seeds(seed, self.num_envs, self._seed_rule or "evotorch")
        assert seeds is not None  # (reset() takes a seed of None as no seed before asking)
        drawn = [int(self._seed_source.integers(0, 2**32)) if s is None else s for s in seeds]
        return np.asarray(drawn, dtype=np.uint32)

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict]:
        """Start a new episode in every sub-env, or in those chosen by ``options["reset_mask"]``.

        Returns ``(observation, info)`` (of ``array_type``). ``options`` may hold ``"reset_mask"``
        (a bool array, tensor or list of length ``num_envs``), gymnasium's convention: then only the masked
        sub-envs restart (from fresh random states, seeded by ``seed`` if given) and the other rows of the
        returned observation are those last returned; and ``"params"`` (``vecrl.params``: the reset
        sub-envs' parameters, which hold until their next reset with params). A jax env's reset takes no
        other option, so any other key is an error rather than silently ignored.
        """
        mask, requested, rest = self._reset_request(seed, options, started=self._carry is not None)
        params = None if rest is None else rest.get(PARAMS_OPTION)
        if params is not None:  # (the step carries every name: the others back to their defaults)
            params = with_defaults(params, default_params(self.jax_env), self.num_envs)
        # (a full reset without params keeps the sub-envs' params)
        kept = None if self._carry is None or mask is not None or params is not None else self._carry.params
        chosen: int | np.ndarray = (
            int(self._seed_source.integers(0, 2**32)) if requested is None else requested
        )
        seeds = np.random.default_rng(chosen)
        if isinstance(chosen, np.ndarray):  # one seed per sub-env: each starts from its own key
            rows = self._jit.fresh_rows(chosen)
        else:
            rows = self._jit.fresh(_next_seed(seeds))
        # the step compiles on a worker thread while jax runs the env's reset (the first time only)
        self._step_ahead.start()
        if mask is None:
            self._carry = self._jit.start(rows)
            self._refill_seeds = seeds
        else:
            assert self._carry is not None  # a masked reset before the first reset was refused above
            self._carry = self._jit.masked_reset(self._carry, rows, mask)
        if self._jit.set_params is not None and (params is not None or kept is not None):
            given = kept if params is None else {name: jax.numpy.asarray(v) for name, v in params.items()}
            which = np.ones(self.num_envs, dtype=bool) if mask is None else mask
            self._carry = self._jit.set_params(self._carry, given, which)
        self._note_reset(mask)
        observation: Any
        info: dict[str, Any]
        observation, info = self._jit.observe(self._carry)
        if self.array_type == "torch":
            observation = jax.tree_util.tree_map(convert_to_torch, observation)
            info = {k: convert_to_torch(v) for k, v in info.items()}
            where: Any = torch.where
            # (on the device of the observations: jax's, a GPU's too)
            device = jax.tree_util.tree_leaves(observation)[0].device
            mask_rows: Any = None if mask is None else torch.from_numpy(mask).to(device)
        else:
            where, mask_rows = jax.numpy.where, mask
        if mask is not None:
            observation = jax.tree_util.tree_map(
                lambda new, old: where(mask_rows.reshape(-1, *([1] * (new.ndim - 1))), new, old),
                observation,
                self._last_observation,
            )
        self._last_observation = observation
        if mask is None and self._autoreset_mode != "disabled":
            # The episodes start from the first rows of the pool's first half. Its second half is made now
            # only if the first step could reach it (else a step asks for it in time), and after the
            # observation is out: jax computes it (seconds for some envs) while the caller goes on.
            at_reset = engine.second_half_at_reset(self.num_envs)
            # (a masked reset of rows seeded one by one, evaluate's refill, makes no pool: no fresh batch)
            fresh = self._jit.fresh(_next_seed(seeds)) if isinstance(chosen, np.ndarray) else rows
            second = self._jit.fresh(_next_seed(self._refill_seeds)) if at_reset else fresh
            self._pool = self._jit.pool(fresh, second)
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        """Step every sub-env with ``action`` (``num_envs`` rows of the single action space); reset ended
        episodes.

        Returns ``(observation, reward, terminated, truncated, info)`` (of ``array_type``); ``info`` holds
        the final observation of each row under ``FINAL_OBS_KEY`` with its mask, and the outcome's info
        (brax's metrics).
        """
        if self._carry is None:
            if self.closed:
                raise closed_env_error("step", self)
            raise RuntimeError(
                "step() was called before reset(), or after a step that raised (which leaves no state to"
                " step from); call reset() first."
            )
        self._refuse_finished()
        action, borrowed = self._as_jax_input(action)
        self._step_ahead.wait()  # the compile reset() started
        carry, self._carry = self._carry, None  # donated to the step: if it raises, only reset() helps
        self._carry, out = self._jit.step(carry, action, self._pool)
        if self.array_type == "torch":
            result, refill = self._split_torch(*out)
        else:
            if borrowed:  # the jitted call may read the caller's memory until it is done
                out.reward.block_until_ready()
            info = dict(out.metrics)
            if out.final_observation is not None and bool(out.episode_ended.any()):
                info = {**info, **self._finals(out.final_observation, out.episode_ended, info)}
            result = (out.observation, out.reward, out.terminated, out.truncated, info)
            refill = -1 if out.refill is None else int(out.refill)
        if refill >= 0 and self._pool is not None:  # this step used up that half of the pool: refill it
            self._pool = self._jit.refill(self._pool, self._jit.fresh(_next_seed(self._refill_seeds)), refill)
        self._last_observation = result[0]
        if self._autoreset_mode == "disabled":
            self._note_ended(result[2] | result[3])
        return result

    def _split_torch(
        self, floats: jax.Array, flags: jax.Array
    ) -> tuple[tuple[Any, Any, Any, Any, dict], int]:
        """The results of a step as torch views of the two buffers ``engine.pack_output`` made, and the
        half of the pool to refill (or -1)."""
        floats_t = convert_to_torch(floats.block_until_ready())
        flags_t = convert_to_torch(flags.block_until_ready())
        n, obs_size = self.num_envs, self._observation_size
        observation = self._observation_views(floats_t, 0)
        reward = floats_t[n * obs_size : n * (obs_size + 1)]
        offset = n * (obs_size + 1)
        final_observation = None
        if self._autoreset_mode == "same_step":
            final_observation = self._observation_views(floats_t, offset)
            offset += n * obs_size
        info: dict[str, Any] = {}
        for name, size in self._metric_sizes.items():
            info[name] = floats_t[offset : offset + n * size].view(n, *([size] if size != 1 else []))
            offset += n * size
        ended = flags_t[2 * n : 3 * n]
        if final_observation is not None and bool(ended.any()):  # (the flags are read on the host anyway)
            info.update(self._finals(final_observation, ended, info))
        refill = -1
        if self._autoreset_mode != "disabled":
            refill_first, refill_second = flags_t[-2:].tolist()
            refill = 0 if refill_first else 1 if refill_second else -1
        return (observation, reward, flags_t[:n], flags_t[n : 2 * n], info), refill

    def _finals(self, final_observation: Any, ended: Any, info: dict[str, Any]) -> dict[str, Any]:
        """The same_step info keys of the episodes that ``ended``: their last observations and their last
        infos (the step's ``info``, which the outcome of the states before their restarts gave), each with
        its mask, as the host backends give them (``vecrl.final_observations.final_infos``)."""
        finals = {FINAL_OBS_KEY: final_observation, FINAL_OBS_MASK_KEY: ended}
        return {**finals, **final_infos(info, ended, self._add_info)}

    def _observation_views(self, floats: torch.Tensor, offset: int) -> Any:
        """The batched observation laid out in ``floats`` from ``offset`` on, as views (a dict of them for
        dict observations, in the order of jax's flattening, sorted keys)."""
        n = self.num_envs
        if not self._dict_observations:
            return floats[offset : offset + n * self._observation_size].view(n, *self._obs_shapes[0])
        views = []
        for shape in self._obs_shapes:
            size = n * math.prod(shape)
            views.append(floats[offset : offset + size].view(n, *shape))
            offset += size
        return jax.tree_util.tree_unflatten(self._obs_treedef, views)

    def _refuse_bad_actions(self, action: np.ndarray) -> None:
        """The ValueError for bad actions (NaN or inf of a Box, out of range of a Discrete) of sub-envs that use
        theirs (actions of a spent budget's sub-envs, or of those a next_step autoreset resets, are ignored: a
        policy turns a spent sub-env's NaN observation into NaN actions). Reads the carried budget from the
        device: only on this rare path."""
        carry = self._carry
        assert carry is not None
        acting = acting_sub_envs(
            None if self.num_episodes is None else np.asarray(carry.episodes_left),
            None if carry.needs_reset is None else np.asarray(carry.needs_reset),
        )
        self._action_check(action, None if acting is None else np.flatnonzero(acting).tolist())

    def _as_jax_input(self, action: Any) -> tuple[Any, bool]:
        """``action`` in a form the jitted step takes (checked where it is on the host), and whether it
        borrows the caller's memory."""
        expected = self._actions
        borrowed = False
        if isinstance(action, torch.Tensor):
            action = action.detach()
            if self._discrete and (action.is_floating_point() or action.is_complex()):
                self._refuse_bad_actions(convert_to_numpy(action))
            if action.device.type == "cpu":
                action, borrowed = convert_from_torch(action, "numpy"), True  # (bfloat16 widened to float32)
            else:
                action = convert_from_torch(action.to(_TORCH_DTYPES[expected.dtype.name]), "jax")
        elif not isinstance(action, (np.ndarray, jax.Array)):
            action = np.asarray(action, dtype=None if self._discrete else expected.dtype)
        if tuple(action.shape) != expected.shape:
            raise ValueError(
                f"step() got an action of shape {tuple(action.shape)}; expected {expected.shape} (num_envs"
                f" rows of the action space {self.single_action_space})."
            )
        if self._discrete and np.dtype(action.dtype).kind not in "iu":
            self._refuse_bad_actions(np.asarray(action))
        # bad values: one reduction, for actions on the host only (a device's would cost a sync)
        if isinstance(action, np.ndarray) and not self._action_check.valid(action):
            self._refuse_bad_actions(action)
        if action.dtype != expected.dtype:
            action, borrowed = action.astype(expected.dtype), False
        return action, borrowed

    def __reduce__(self) -> NoReturn:
        raise TypeError(
            f"{self!r} cannot be pickled: it holds compiled jax functions and device buffers. Pickle what"
            " made it instead (the name and keyword arguments of vecrl.make_vector_env) and make it again."
        )

    def close(self, **kwargs: Any) -> None:
        """Drop the state; ``step()`` and ``reset()`` raise from now on; calling it again is harmless."""
        self._carry = self._pool = None
        self._last_observation = None
        self.closed = True

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.env_name!r}, num_envs={self.num_envs}, num_episodes={self.num_episodes},"
            f" autoreset_mode={self._autoreset_mode!r})"
        )


#: The torch dtype of each dtype the jitted step takes actions in (``jax_actions``).
_TORCH_DTYPES = {"float32": torch.float32, "int32": torch.int32}


def jax_actions(space: Space, num_envs: int) -> jax.ShapeDtypeStruct:
    """The batched actions a jitted step takes for the single action space ``space``: ``num_envs`` rows,
    float32 for a Box, int32 (jax's default int) for a Discrete; a TypeError for another space.

    Examples:
        >>> jax_actions(Discrete(3), 8)
        ShapeDtypeStruct(shape=(8,), dtype=int32)
    """
    if isinstance(space, Box):
        return jax.ShapeDtypeStruct((num_envs, *space.shape), np.float32)
    if isinstance(space, Discrete):
        return jax.ShapeDtypeStruct((num_envs,), np.int32)
    raise TypeError(
        f"a JaxVectorEnv steps Box or Discrete actions, but its env's action_space is {space}: give one of"
        " these."
    )


def _next_seed(seeds: np.random.Generator) -> np.uint32:
    """The next seed from ``seeds``, for ``engine.PackedEnv.fresh``."""
    return np.uint32(seeds.integers(0, 2**32))


class _CompiledEnv(NamedTuple):
    env: JaxEnv
    action_space: Box | Discrete  # one sub-env's
    outcome: Any  # of num_envs states: shapes and dtypes (jax.ShapeDtypeStruct leaves)
    packed: engine.PackedEnv  # with every function jitted
    step_ahead: CompileAhead  # of packed.step


class _Config(NamedTuple):
    """What an env's compiled functions depend on (hashable: the key of their cache)."""

    make_env: Callable[[str, Mapping[str, Any]], JaxEnv]
    env_name: str
    num_envs: int
    num_episodes: int | None
    pack_outputs: bool
    mode: AutoresetModeName
    env_kwargs: tuple[tuple[str, Any], ...]


def _compiled_env(config: _Config) -> _CompiledEnv:
    """The env (``make_env``'s), its action space and its jitted reset/step, shared by every env of the same
    configuration.

    jax caches compilations per function object, so sharing the functions means a second env of the same
    configuration (a new evaluation, a test) starts without compiling again (seconds to tens of seconds).
    """
    try:
        hash(config)
    except TypeError:  # an unhashable constructor argument: build without sharing
        return _build_compiled_env(config)
    return _cached_compiled_env(config)


def _build_compiled_env(config: _Config) -> _CompiledEnv:
    make_env, env_name, num_envs, num_episodes, pack_outputs, mode, env_kwargs = config
    env = make_env(env_name, dict(env_kwargs))
    if num_envs >= _CHECK_MEMORY_FROM:
        _check_states_fit(env, env_name, num_envs)
    # One fixed device for every input and output: otherwise jax compiles the step again for each mix of
    # committed (DLPack-imported) and uncommitted (numpy) arguments it meets.
    device = SingleDeviceSharding(jax.devices()[0])
    action_spec = jax_actions(env.action_space, num_envs)
    packed = engine.make_packed(
        env, num_envs, num_episodes, action_spec=action_spec, pack_outputs=pack_outputs, mode=mode
    )
    jitted = {
        name: jax.jit(getattr(packed, name), in_shardings=device, out_shardings=device)
        for name in ("fresh", "fresh_rows", "start", "pool", "observe")
    }
    # The carry and the pool are donated where they are updated: their buffers never reach the user
    # (results are separate outputs, and JaxVectorEnv.state unpacks copies), so XLA may update them
    # in place instead of copying them.
    names = ("step", "refill", "masked_reset") + (() if packed.set_params is None else ("set_params",))
    for name in names:
        jitted[name] = jax.jit(
            getattr(packed, name), in_shardings=device, out_shardings=device, donate_argnums=0
        )
    step_ahead = CompileAhead(jitted["step"], packed.step_args)
    outcome = jax.eval_shape(env.outcome, packed.packer.example)
    return _CompiledEnv(env, env.action_space, outcome, packed._replace(**jitted), step_ahead)  # type: ignore[arg-type]


_cached_compiled_env = functools.lru_cache(maxsize=16)(_build_compiled_env)

# Below this many sub-envs the states of any jax env take a few hundred MB at most: not worth a trace.
_CHECK_MEMORY_FROM = 65_536
# Batches of states alive at once: the carry, the pool's two halves, a fresh batch and the step's outputs.
_STATE_COPIES = 5


def _check_states_fit(env: JaxEnv, env_name: str, num_envs: int) -> None:
    """A MemoryError with the size needed when the batched states cannot fit; shapes only, nothing runs."""
    state = jax.eval_shape(env.reset, jax.random.split(jax.random.PRNGKey(0), 1))
    size = sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(state))
    check_fits_in_memory(f"jax env {env_name!r}", num_envs, _STATE_COPIES * size)
