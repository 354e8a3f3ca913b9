"""VectorEnvFromBrax: a batch of brax environments as a gymnasium VectorEnv, stepped in one jitted call."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from numbers import Integral
from typing import Any, Literal, NamedTuple

import jax
import jax.dlpack
import numpy as np
import torch
from jax.sharding import SingleDeviceSharding

from vecrl import BaseVectorEnv
from vecrl.compat import FINAL_OBS_KEY
from vecrl_brax import autoreset, spaces
from vecrl_brax.brax_versions import resolve_create
from vecrl_brax.packing import Packer

#: Keywords VectorEnvFromBrax sets itself; passing them through would break its autoreset or batch size.
_RESERVED_KWARGS = {
    "batch_size": "give the number of sub-environments as num_envs=",
    "auto_reset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
    "autoreset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
}


class VectorEnvFromBrax(BaseVectorEnv):
    """``num_envs`` copies of the brax env ``env_name``, stepped together in one jitted call.

    The env is ``brax.envs.create(env_name, batch_size=num_envs, auto_reset=False, **brax_kwargs)``
    (``brax.v1.envs.create`` for ``"old::NAME"``): every other keyword (``episode_length``,
    ``action_repeat``, ``backend``, the env's constructor arguments) reaches brax unchanged.

    - Autoreset is eager (gymnasium's SAME_STEP): a sub-env whose episode ends is reset inside the
      same jitted step, from a fresh random initial state (a new key per reset, unlike brax's own
      ``AutoResetWrapper``, which replays the first state). ``info[FINAL_OBS_KEY]`` holds the last
      observation of every row (meaningful where the mask ``info["_" + FINAL_OBS_KEY]`` is True).
    - ``terminated`` and ``truncated`` come from brax's ``done`` and ``info["truncation"]``: reaching
      ``episode_length`` is a truncation.
    - ``num_episodes=n``: each sub-env runs n episodes; after its last one it reports NaN observation and
      reward, and terminated = truncated = True, until ``reset()``.
    - Seeding: ``reset(seed=S)``, or ``seed(S)`` then ``reset()``, reproduce a run exactly; a reset
      without a seed draws one from a numpy Generator the env owns.
    - Results stay on jax's device: jax arrays (``array_type="jax"``), or torch tensors viewing the jax
      buffers through DLPack without a copy (``array_type="torch"``, what ``make_brax_env`` uses). Actions
      may be jax or numpy arrays or torch tensors (a CPU tensor reaches the jitted step as a numpy
      view, the cheapest route into jax).

    Example:
        >>> env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, episode_length=100)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 4)
    """

    def __init__(
        self,
        env_name: str,
        *,
        num_envs: int,
        num_episodes: int | None = None,
        array_type: Literal["jax", "torch"] = "jax",
        **brax_kwargs: Any,
    ) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, Integral) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int (the batch size), but got {num_envs!r}.")
        if num_episodes is not None and (
            isinstance(num_episodes, bool) or not isinstance(num_episodes, Integral) or num_episodes < 1
        ):
            raise ValueError(f"num_episodes must be None or a positive int, but got {num_episodes!r}.")
        if array_type not in ("jax", "torch"):
            raise ValueError(f"array_type must be 'jax' or 'torch', but got {array_type!r}.")
        for key, reason in _RESERVED_KWARGS.items():
            if key in brax_kwargs:
                raise ValueError(f"VectorEnvFromBrax does not accept {key}={brax_kwargs[key]!r}: {reason}.")
        num_envs = int(num_envs)
        self.env_name: str = env_name
        self.num_episodes: int | None = None if num_episodes is None else int(num_episodes)
        self.array_type: Literal["jax", "torch"] = array_type
        compiled = _compiled_env(env_name, num_envs, self.num_episodes, array_type == "torch", brax_kwargs)
        self.brax_env: Any = compiled.brax_env
        self._packer: Packer = compiled.packer
        self._jit_reset: Any = compiled.reset
        self._jit_step: Any = compiled.step
        super().__init__(
            num_envs, spaces.observation_space(self.brax_env), spaces.action_space(self.brax_env)
        )
        self._action_shape: tuple[int, int] = (num_envs, int(self.brax_env.action_size))
        self._observation_size: int = int(self.brax_env.observation_size)
        self._metric_sizes: dict[str, int] = {
            name: math.prod(leaf.shape[1:])
            for name, leaf in sorted(self._packer.example.state.metrics.items())
        }
        self._seed_source: np.random.Generator = np.random.default_rng()
        self._pending_seed: int | None = None
        self._carry: dict[str, jax.Array] | None = None  # the packed autoreset.Carry
        self.closed: bool = False

    @property
    def state(self) -> Any:
        """The current brax state (batched pytree of jax arrays); None before the first ``reset()``."""
        return None if self._carry is None else self._packer.unpack(self._carry).state

    def seed(self, seed: int | None = None) -> None:
        """Make the next ``reset()`` (without a seed) use ``seed``; ``seed(None)`` cancels that."""
        self._pending_seed = None if seed is None else _check_seed(seed)

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None) -> tuple[Any, dict]:
        """Start a new episode in every sub-env; returns ``(observation, info)`` (of ``array_type``).

        ``options`` is accepted for gymnasium compatibility; brax's reset has no options, so a
        non-empty mapping is an error rather than silently ignored.
        """
        if options:
            raise ValueError(
                f"reset() got options={dict(options)!r}, but brax environments take no reset options;"
                " pass None or {}."
            )
        if seed is not None:
            seed = _check_seed(seed)
        elif self._pending_seed is not None:
            seed = self._pending_seed
        else:
            seed = int(self._seed_source.integers(0, 2**32))
        self._pending_seed = None
        self._carry = self._jit_reset(jax.random.PRNGKey(seed))
        state = self.state
        if self.array_type == "torch":
            return torch.from_dlpack(state.obs), {k: torch.from_dlpack(v) for k, v in state.metrics.items()}
        return state.obs, dict(state.metrics)

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        """Step every sub-env with ``action`` (shape ``(num_envs, action_size)``); reset ended episodes.

        Returns ``(observation, reward, terminated, truncated, info)`` (of ``array_type``); ``info`` holds
        the final observation of each row under ``FINAL_OBS_KEY`` with its mask, and brax's metrics.
        """
        if self._carry is None:
            raise RuntimeError("step() was called before reset(); call reset() first.")
        action, borrowed = self._as_jax_input(action)
        self._carry, out = self._jit_step(self._carry, action)
        if self.array_type == "torch":
            return self._split_torch(*out)
        if borrowed:  # the jitted call may read the caller's memory until it is done
            out.observation.block_until_ready()
        info = {FINAL_OBS_KEY: out.final_observation, f"_{FINAL_OBS_KEY}": out.episode_ended, **out.metrics}
        return out.observation, out.reward, out.terminated, out.truncated, info

    def _split_torch(self, floats: jax.Array, flags: jax.Array) -> tuple[Any, Any, Any, Any, dict]:
        """The results of a step as torch views of the two buffers ``autoreset.pack_output`` made."""
        floats_t = torch.from_dlpack(floats.block_until_ready())
        flags_t = torch.from_dlpack(flags.block_until_ready())
        if flags_t.dtype == torch.uint8:  # jax 0.4.20 exports bool arrays through DLPack as uint8
            flags_t = flags_t.view(torch.bool)
        n, obs_size = self._action_shape[0], self._observation_size
        observation = floats_t[: n * obs_size].view(n, obs_size)
        reward = floats_t[n * obs_size : n * (obs_size + 1)]
        offset = n * (2 * obs_size + 1)
        info = {
            FINAL_OBS_KEY: floats_t[n * (obs_size + 1) : offset].view(n, obs_size),
            f"_{FINAL_OBS_KEY}": flags_t[2 * n :],
        }
        for name, size in self._metric_sizes.items():
            info[name] = floats_t[offset : offset + n * size].view(n, *([size] if size != 1 else []))
            offset += n * size
        return observation, reward, flags_t[:n], flags_t[n : 2 * n], info

    def _as_jax_input(self, action: Any) -> tuple[Any, bool]:
        """``action`` in a form the jitted step takes, and whether it borrows the caller's memory."""
        borrowed = False
        if isinstance(action, torch.Tensor):
            action = action.detach()
            if action.dtype != torch.float32:
                action = action.to(torch.float32)
            if action.device.type == "cpu":
                action, borrowed = action.numpy(), True
            else:
                action = jax.dlpack.from_dlpack(action.contiguous())
        elif not isinstance(action, (np.ndarray, jax.Array)):
            action = np.asarray(action, dtype=np.float32)
        if tuple(action.shape) != self._action_shape:
            raise ValueError(
                f"step() got an action of shape {tuple(action.shape)}; expected {self._action_shape}"
                " (num_envs, action_size)."
            )
        if action.dtype != np.float32:
            action = action.astype(np.float32)
            borrowed = False
        return action, borrowed

    def close(self, **kwargs: Any) -> None:
        """Drop the state; calling it again is harmless."""
        self._carry = None
        self.closed = True

    def __repr__(self) -> str:
        return f"VectorEnvFromBrax({self.env_name!r}, num_envs={self.num_envs}, num_episodes={self.num_episodes})"


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, Integral) or not 0 <= int(seed) < 2**32:
        raise ValueError(
            f"seed must be an int in [0, 2**32), got {seed!r}. (Per-env seed lists are not supported by the"
            " brax backend: one key seeds the whole batch.)"
        )
    return int(seed)


class _CompiledEnv(NamedTuple):
    brax_env: Any
    packer: Packer
    reset: Any
    step: Any


def _compiled_env(
    env_name: str, num_envs: int, num_episodes: int | None, pack_outputs: bool, brax_kwargs: dict
) -> _CompiledEnv:
    """The brax env and its jitted reset/step, shared by every VectorEnvFromBrax of the same configuration.

    jax caches compilations per function object, so sharing the functions means a second env of the same
    configuration (a new evaluation, a test) starts without compiling again (seconds to tens of seconds).
    """
    key = (env_name, num_envs, num_episodes, pack_outputs, tuple(sorted(brax_kwargs.items())))
    try:
        hash(key)
    except TypeError:  # an unhashable constructor argument: build without sharing
        return _build_compiled_env(*key)
    return _cached_compiled_env(*key)


def _build_compiled_env(
    env_name: str,
    num_envs: int,
    num_episodes: int | None,
    pack_outputs: bool,
    brax_kwargs: tuple[tuple[str, Any], ...],
) -> _CompiledEnv:
    create, brax_name = resolve_create(env_name)
    brax_env = create(brax_name, batch_size=num_envs, auto_reset=False, **dict(brax_kwargs))
    # One fixed device for every input and output: otherwise jax compiles the step again for each mix of
    # committed (DLPack-imported) and uncommitted (numpy) arguments it meets.
    device = SingleDeviceSharding(jax.devices()[0])
    packed = autoreset.make_packed(brax_env, num_envs, num_episodes, pack_outputs=pack_outputs)
    reset = jax.jit(packed.reset, in_shardings=device, out_shardings=device)
    # The carry is donated: its buffers never reach the user (results are separate outputs, and
    # VectorEnvFromBrax.state unpacks copies), so XLA may update it in place instead of copying it.
    step = jax.jit(packed.step, in_shardings=device, out_shardings=device, donate_argnums=0)
    return _CompiledEnv(brax_env, packed.packer, reset, step)


_cached_compiled_env = functools.lru_cache(maxsize=16)(_build_compiled_env)
