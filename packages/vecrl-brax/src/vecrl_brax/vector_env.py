"""JaxVectorEnv, the base of the jax backends, and VectorEnvFromBrax: a batch of jax (brax) environments as a
gymnasium VectorEnv, stepped in one jitted call."""

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
    check_reserved_kwargs,
    checked_num_envs,
    closed_env_error,
    did_you_mean,
)
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl.seeding import SeedRule, checked_seeds, is_seed
from vecrl_brax import autoreset, spaces
from vecrl_brax.brax_versions import env_keywords, resolve_create
from vecrl_brax.compile_ahead import CompileAhead
from vecrl_brax.episodes import BraxEpisodes
from vecrl_brax.packing import Packer
from vecrl_brax.plugin import JAX_REFUSALS

#: make_vector_env keywords of other backends that a jax env does not take, each with why (vecrl-playground's
#: env refuses them too).
OTHER_BACKENDS_KWARGS = {key: JAX_REFUSALS[key] for key in ("device", "num_workers")}
#: Keywords every JaxVectorEnv sets itself, and those of other backends.
JAX_RESERVED_KWARGS = {
    "batch_size": "give the number of sub-environments as num_envs=",
    **OTHER_BACKENDS_KWARGS,
}
#: Keywords VectorEnvFromBrax sets itself (passing them through would break its autoreset or batch size),
#: and those of other backends.
_RESERVED_KWARGS = {
    **JAX_RESERVED_KWARGS,
    "auto_reset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
    "autoreset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
}


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
        if key in kwargs and (isinstance(value, bool) or not isinstance(value, Integral) or int(value) < 1):
            raise ValueError(f"{key} must be a positive int ({meaning}), got {value!r}.")


class JaxVectorEnv(EpisodeVectorEnv):
    """``num_envs`` copies of a jax env, stepped together in one jitted call, with vecrl's episode rules
    inside it: the base of the jax backends (``VectorEnvFromBrax``, vecrl-playground's
    ``PlaygroundVectorEnv``) and of yours.

    A subclass says which env it steps, and nothing else: ``make_batch(env_name, batch_size, kwargs)``
    returns ``batch_size`` copies of the env as one brax-style env without autoreset (``reset(key)`` and
    ``step(state, action)`` giving states with ``obs``, ``reward``, ``done``, ``metrics`` and
    ``info["truncation"]``; brax's ``VmapWrapper`` of one env lets each sub-env start from a seed of its
    own); ``action_space_of(env)`` gives one sub-env's action space (a ``Box``, stepped as float32, or a
    ``Discrete``, stepped as int32: see ``jax_actions``); ``reserved_kwargs``
    names the keywords it sets itself. The constructor's other keywords reach ``make_batch``. Everything
    below is this class's:

    - ``autoreset_mode="same_step"`` (the default, gymnasium's SAME_STEP): a sub-env whose episode ends
      is reset inside the same jitted step, from a fresh random initial state (a new key per reset,
      unlike brax's own ``AutoResetWrapper``, which replays the first state). ``info[FINAL_OBS_KEY]``
      holds the last observation of every row (meaningful where ``info[FINAL_OBS_MASK_KEY]`` is True).
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
        >>> import brax.envs
        >>> class FastEnvs(JaxVectorEnv):  # brax's "fast" env, batched by brax, in [-1, 1]
        ...     @staticmethod
        ...     def make_batch(env_name, batch_size, kwargs):
        ...         return brax.envs.create(env_name, batch_size=batch_size, auto_reset=False, **kwargs)
        ...
        ...     @staticmethod
        ...     def action_space_of(env):
        ...         return Box(-1.0, 1.0, (env.action_size,), np.float32)
        >>> env = FastEnvs("fast", num_envs=4, episode_length=10, autoreset_mode="next_step", seed_rule="gymnasium")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((4, 2), Box(-1.0, 1.0, (1,), float32))
    """

    jit_compiled = True  # the first reset() and step() of a configuration compile (seconds)
    #: Keywords this class sets itself, each with why (refused before anything is built).
    reserved_kwargs: ClassVar[Mapping[str, str]] = JAX_RESERVED_KWARGS

    @staticmethod
    def make_batch(env_name: str, batch_size: int, kwargs: Mapping[str, Any]) -> Any:
        """The batched env this class steps: ``batch_size`` copies of ``env_name`` as one brax-style env
        (``reset(key)``, ``step(state, action)``, ``done`` and ``info["truncation"]``), without autoreset;
        ``kwargs`` are the constructor's keywords that are not vecrl's. A subclass gives it."""
        raise NotImplementedError(
            "JaxVectorEnv steps the env that its subclass's make_batch(env_name, batch_size, kwargs) returns:"
            " subclass it (as VectorEnvFromBrax does for brax), or use VectorEnvFromBrax."
        )

    @staticmethod
    def action_space_of(env: Any) -> Box | Discrete:
        """The single action space of the batched env ``env``. A subclass gives it."""
        raise NotImplementedError(
            "a JaxVectorEnv subclass gives action_space_of(env), one sub-env's action space (a gymnasium Box"
            " or Discrete)."
        )

    def __init__(
        self,
        env_name: str,
        *,
        num_envs: int,
        num_episodes: int | None = None,
        array_type: Literal["jax", "torch"] = "jax",
        autoreset_mode: Any = "same_step",
        seed_rule: SeedRule | None = None,
        **brax_kwargs: Any,
    ) -> None:
        num_envs = checked_num_envs(num_envs)
        if array_type not in ("jax", "torch"):
            raise ValueError(f"array_type must be 'jax' or 'torch', but got {array_type!r}.")
        self._take_episode_options(
            num_episodes=num_episodes, autoreset_mode=autoreset_mode, seed_rule=seed_rule
        )
        mode = self._autoreset_mode
        check_reserved_kwargs(type(self).__name__, brax_kwargs, self.reserved_kwargs)
        check_episode_keywords(brax_kwargs)
        self.env_name: str = env_name
        self.array_type: Literal["jax", "torch"] = array_type
        compiled = _compiled_env(
            self.make_batch,
            self.action_space_of,
            env_name,
            num_envs,
            self.num_episodes,
            array_type == "torch",
            mode,
            brax_kwargs,
        )
        self.brax_env: Any = compiled.brax_env
        self._packer: Packer = compiled.packed.packer
        self._jit: autoreset.PackedEnv = compiled.packed
        self._step_ahead: CompileAhead = compiled.step_ahead
        if seed_rule is not None and self._jit.fresh_rows is None:
            raise ValueError(self._no_seeds_per_sub_env(f"seed_rule={seed_rule!r}"))
        super().__init__(
            num_envs,
            spaces.observation_space(self._packer.example.obs),
            compiled.action_space,
            reward_dtype=np.float32,
        )
        self._actions: jax.ShapeDtypeStruct = compiled.packed.step_args[1]
        self._discrete: bool = isinstance(compiled.action_space, Discrete)
        self._action_check = ActionCheck(compiled.action_space, num_envs, type(self).__name__)
        obs_leaves, obs_treedef = jax.tree_util.tree_flatten(self._packer.example.obs)
        self._obs_treedef: Any = obs_treedef
        # per sub-env shape of each observation leaf (one leaf: a flat observation; several: a dict)
        self._obs_shapes: list[tuple[int, ...]] = [tuple(leaf.shape[1:]) for leaf in obs_leaves]
        self._observation_size: int = sum(math.prod(shape) for shape in self._obs_shapes)
        self._dict_observations: bool = isinstance(self._packer.example.obs, Mapping)
        self._metric_sizes: dict[str, int] = {
            name: math.prod(leaf.shape[1:]) for name, leaf in sorted(self._packer.example.metrics.items())
        }
        self._seed_source: np.random.Generator = np.random.default_rng()
        self._carry: autoreset.Carry | None = None  # its state packed
        # fresh initial states for autoreset (two packed batches end to end), and the source of the keys of its
        # refills (seeded by reset(), so that a seed reproduces a run)
        self._pool: dict[str, jax.Array] | None = None
        self._refill_seeds: np.random.Generator = np.random.default_rng()
        self._last_observation: Any = None  # what the last reset() or step() returned, for masked resets
        self.closed: bool = False

    @property
    def state(self) -> Any:
        """The current brax state (batched pytree of jax arrays); None before the first ``reset()``."""
        return None if self._carry is None else self._packer.unpack(self._carry.state)

    def jax_episodes(self) -> BraxEpisodes | None:
        """This env's episodes as pure jax functions, for ``evaluate``'s fused rollout
        (``vecrl_policy.fused``); None where its sub-envs cannot start from keys of their own (a batched
        env that is not brax's ``VmapWrapper`` of one env) or its observations are a dict."""
        if self._jit.fresh_rows is None or self._dict_observations:
            return None
        return BraxEpisodes(self.brax_env)

    def _checked_seeds(self, seed: Any) -> int | np.ndarray:
        """``seed`` as an int (without a ``seed_rule``: split into keys jax's way), or as a uint32 array of
        one seed per sub-env (``vecrl.seeding.checked_seeds``; a None in a list: a seed drawn at random,
        as an unseeded reset draws one); a ValueError otherwise."""
        if is_seed(seed) and self._seed_rule is None:
            return int(seed)
        seeds = checked_seeds(seed, self.num_envs, self._seed_rule or "evotorch")
        assert seeds is not None  # (reset() takes a seed of None as no seed before asking)
        if self._jit.fresh_rows is None:
            raise ValueError(self._no_seeds_per_sub_env(f"seed={seed!r}"))
        drawn = [int(self._seed_source.integers(0, 2**32)) if s is None else s for s in seeds]
        return np.asarray(drawn, dtype=np.uint32)

    def _no_seeds_per_sub_env(self, given: str) -> str:
        return (
            f"{given}: this env ({type(self.brax_env).__name__}) is not brax's VmapWrapper of one env, so its"
            " sub-envs cannot start from seeds of their own; pass one int seed (and no seed_rule)."
        )

    def reset(
        self, *, seed: int | Sequence[int] | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict]:
        """Start a new episode in every sub-env, or in those chosen by ``options["reset_mask"]``.

        Returns ``(observation, info)`` (of ``array_type``). ``options`` may hold only ``"reset_mask"``
        (a bool array, tensor or list of length ``num_envs``), gymnasium's convention: then only the masked
        sub-envs restart (from fresh random states, seeded by ``seed`` if given) and the other rows of the
        returned observation are those last returned. brax's reset takes no other option, so any other
        key is an error rather than silently ignored.

        Examples:
            >>> env = VectorEnvFromBrax("fast", num_envs=3, episode_length=10)
            >>> _ = env.reset(seed=0); _ = env.step(np.ones((3, 1), np.float32))
            >>> obs, _ = env.reset(options={"reset_mask": [True, False, False]})
            >>> (np.asarray(obs)[:, 0] == 0).tolist()  # only row 0 is back at the start
            [True, False, False]
        """
        mask, requested, _ = self._reset_request(seed, options, started=self._carry is not None)
        chosen: int | np.ndarray = (
            int(self._seed_source.integers(0, 2**32)) if requested is None else requested
        )
        seeds = np.random.default_rng(chosen)
        if isinstance(chosen, np.ndarray):  # one seed per sub-env: each starts from its own key
            assert self._jit.fresh_rows is not None  # _checked_seeds refused a list otherwise
            rows = self._jit.fresh_rows(chosen)
        else:
            rows = self._jit.fresh(_next_seed(seeds))
        # the step compiles on a worker thread while jax runs brax's reset (the first time only)
        self._step_ahead.start()
        if mask is None:
            self._carry = self._jit.start(rows)
            self._refill_seeds = seeds
        else:
            assert self._carry is not None  # a masked reset before the first reset was refused above
            self._carry = self._jit.masked_reset(self._carry, rows, mask)
        self._note_reset(mask)
        observation: Any
        info: dict[str, Any]
        observation, info = self._jit.observe(self._carry)
        if self.array_type == "torch":
            observation = jax.tree_util.tree_map(convert_to_torch, observation)
            info = {k: convert_to_torch(v) for k, v in info.items()}
            where: Any = torch.where
            mask_rows: Any = None if mask is None else torch.from_numpy(mask)
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
            at_reset = autoreset.second_half_at_reset(self.num_envs)
            # (a masked reset of rows seeded one by one, evaluate's refill, makes no pool: no fresh batch)
            fresh = self._jit.fresh(_next_seed(seeds)) if isinstance(chosen, np.ndarray) else rows
            second = self._jit.fresh(_next_seed(self._refill_seeds)) if at_reset else fresh
            self._pool = self._jit.pool(fresh, second)
        return observation, info

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        """Step every sub-env with ``action`` (``num_envs`` rows of the single action space); reset ended
        episodes.

        Returns ``(observation, reward, terminated, truncated, info)`` (of ``array_type``); ``info`` holds
        the final observation of each row under ``FINAL_OBS_KEY`` with its mask, and brax's metrics.
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
            if out.final_observation is not None:
                info = {FINAL_OBS_KEY: out.final_observation, FINAL_OBS_MASK_KEY: out.episode_ended, **info}
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
        """The results of a step as torch views of the two buffers ``autoreset.pack_output`` made, and the
        half of the pool to refill (or -1)."""
        floats_t = convert_to_torch(floats.block_until_ready())
        flags_t = convert_to_torch(flags.block_until_ready())
        n, obs_size = self.num_envs, self._observation_size
        observation = self._observation_views(floats_t, 0)
        reward = floats_t[n * obs_size : n * (obs_size + 1)]
        offset = n * (obs_size + 1)
        info: dict[str, Any] = {}
        if self._autoreset_mode == "same_step":
            info[FINAL_OBS_KEY] = self._observation_views(floats_t, offset)
            info[FINAL_OBS_MASK_KEY] = flags_t[2 * n : 3 * n]
            offset += n * obs_size
        for name, size in self._metric_sizes.items():
            info[name] = floats_t[offset : offset + n * size].view(n, *([size] if size != 1 else []))
            offset += n * size
        refill = -1
        if self._autoreset_mode != "disabled":
            refill_first, refill_second = flags_t[-2:].tolist()
            refill = 0 if refill_first else 1 if refill_second else -1
        return (observation, reward, flags_t[:n], flags_t[n : 2 * n], info), refill

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
        acting = np.ones(self.num_envs, np.bool_)
        carry = self._carry
        assert carry is not None
        if self.num_episodes is not None:
            acting &= np.asarray(carry.episodes_left) > 0
        if carry.needs_reset is not None:
            acting &= ~np.asarray(carry.needs_reset)
        self._action_check(action, np.flatnonzero(acting).tolist())

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


class VectorEnvFromBrax(JaxVectorEnv):
    """``num_envs`` copies of the brax env ``env_name``, stepped together in one jitted call, with the
    episode rules of ``JaxVectorEnv`` (autoreset modes, masked resets, budgets, seeding, results).

    The env is ``brax.envs.create(env_name, batch_size=num_envs, auto_reset=False, **brax_kwargs)``
    (``brax.v1.envs.create`` for ``"old::NAME"``): every other keyword (``episode_length``,
    ``action_repeat``, ``backend``, the env's constructor arguments) reaches brax unchanged. Its action
    space is the actuators' control range; a new episode starts from a fresh random state (a new key per
    reset, unlike brax's own ``AutoResetWrapper``, which replays the first state).

    Examples:
        >>> env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, episode_length=100)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 4)
    """

    reserved_kwargs: ClassVar[Mapping[str, str]] = _RESERVED_KWARGS

    @staticmethod
    def make_batch(env_name: str, batch_size: int, kwargs: Mapping[str, Any]) -> Any:
        """``brax.envs.create(env_name, batch_size=batch_size, auto_reset=False, **kwargs)``; a keyword the env
        does not take is a TypeError listing those it takes."""
        create, brax_name = resolve_create(env_name)
        try:
            return create(brax_name, batch_size=batch_size, auto_reset=False, **kwargs)
        except TypeError as error:
            if "unexpected keyword argument" not in str(error):
                raise
            known = env_keywords(create, brax_name)
            unknown = [key for key in kwargs if key not in known]
            raise TypeError(
                f"brax's {env_name!r} does not take a keyword given ({error}). It takes: {', '.join(sorted(known))}."
                f"{did_you_mean(unknown[0], known) if unknown else ''}"
            ) from None

    @staticmethod
    def action_space_of(env: Any) -> Box:
        """The single action space of the batched env ``env`` (brax: its actuators' control range)."""
        return spaces.action_space(env)


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
        f"a JaxVectorEnv steps Box or Discrete actions, but its action_space_of gave {space}: return one of"
        " these."
    )


def _next_seed(seeds: np.random.Generator) -> np.uint32:
    """The next seed from ``seeds``, for ``autoreset.PackedEnv.fresh``."""
    return np.uint32(seeds.integers(0, 2**32))


class _CompiledEnv(NamedTuple):
    brax_env: Any
    action_space: Box | Discrete  # one sub-env's
    packed: autoreset.PackedEnv  # with every function jitted
    step_ahead: CompileAhead  # of packed.step


def _compiled_env(
    make_batch: Callable[[str, int, Mapping[str, Any]], Any],
    action_space_of: Callable[[Any], Box | Discrete],
    env_name: str,
    num_envs: int,
    num_episodes: int | None,
    pack_outputs: bool,
    mode: AutoresetModeName,
    brax_kwargs: dict,
) -> _CompiledEnv:
    """The batched env (``make_batch``'s), its action space (``action_space_of``'s) and its jitted reset/step, shared by every env of the same
    configuration.

    jax caches compilations per function object, so sharing the functions means a second env of the same
    configuration (a new evaluation, a test) starts without compiling again (seconds to tens of seconds).
    """
    key = (
        make_batch,
        action_space_of,
        env_name,
        num_envs,
        num_episodes,
        pack_outputs,
        mode,
        tuple(sorted(brax_kwargs.items())),
    )
    try:
        hash(key)
    except TypeError:  # an unhashable constructor argument: build without sharing
        return _build_compiled_env(*key)
    return _cached_compiled_env(*key)


def _build_compiled_env(
    make_batch: Callable[[str, int, Mapping[str, Any]], Any],
    action_space_of: Callable[[Any], Box | Discrete],
    env_name: str,
    num_envs: int,
    num_episodes: int | None,
    pack_outputs: bool,
    mode: AutoresetModeName,
    brax_kwargs: tuple[tuple[str, Any], ...],
) -> _CompiledEnv:
    brax_env = make_batch(env_name, num_envs, dict(brax_kwargs))
    if num_envs >= _CHECK_MEMORY_FROM:
        _check_states_fit(brax_env, env_name, num_envs)
    # One fixed device for every input and output: otherwise jax compiles the step again for each mix of
    # committed (DLPack-imported) and uncommitted (numpy) arguments it meets.
    device = SingleDeviceSharding(jax.devices()[0])
    fresh_env = None  # the env makes the fresh states itself, unless the pool wants larger batches
    pool_half = autoreset.pool_half(num_envs)
    if mode != "disabled" and pool_half != num_envs:
        fresh_env = make_batch(env_name, pool_half, dict(brax_kwargs))
    action_space = action_space_of(brax_env)
    packed = autoreset.make_packed(
        brax_env,
        num_envs,
        num_episodes,
        action_spec=jax_actions(action_space, num_envs),
        pack_outputs=pack_outputs,
        mode=mode,
        fresh_env=fresh_env,
    )
    jitted = {
        name: jax.jit(getattr(packed, name), in_shardings=device, out_shardings=device)
        for name in ("fresh", "fresh_rows", "start", "pool", "observe")
        if getattr(packed, name) is not None
    }
    # The carry and the pool are donated where they are updated: their buffers never reach the user
    # (results are separate outputs, and VectorEnvFromBrax.state unpacks copies), so XLA may update them
    # in place instead of copying them.
    for name in ("step", "refill", "masked_reset"):
        jitted[name] = jax.jit(
            getattr(packed, name), in_shardings=device, out_shardings=device, donate_argnums=0
        )
    step_ahead = CompileAhead(jitted["step"], packed.step_args)
    return _CompiledEnv(brax_env, action_space, packed._replace(**jitted), step_ahead)  # type: ignore[arg-type]


_cached_compiled_env = functools.lru_cache(maxsize=16)(_build_compiled_env)

# Below this many sub-envs the states of any brax env take a few hundred MB at most: not worth a trace.
_CHECK_MEMORY_FROM = 65_536
# Batches of states alive at once: the carry, the pool's two halves, a fresh batch and the step's outputs.
_STATE_COPIES = 5


def _check_states_fit(brax_env: Any, env_name: str, num_envs: int) -> None:
    """A MemoryError with the size needed when the batched states cannot fit; shapes only, nothing runs."""
    state = jax.eval_shape(brax_env.reset, jax.random.PRNGKey(0))
    size = sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(state))
    check_fits_in_memory(f"brax env {env_name!r}", num_envs, _STATE_COPIES * size // num_envs)
