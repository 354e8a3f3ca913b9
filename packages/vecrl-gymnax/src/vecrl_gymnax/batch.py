"""gymnax envs as the batched brax-style envs that vecrl-brax's jitted machinery steps.

A gymnax env is functional: ``reset_env(key, params)`` and ``step_env(key, state, action, params)`` on one
state, ``step_env`` saying whether the episode terminated and ``is_truncated(state, params)`` whether it reached
the params' time limit (gymnax's ``step`` adds an autoreset of its own, which vecrl's jitted step replaces with
a fresh state per episode). ``GymnaxEnv`` is one env and its params as a brax ``Env`` (the key of the next step
carried in the state's info), and brax's ``VmapWrapper`` batches it, as brax batches its own envs, so that
each sub-env can start from a seed of its own.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from brax.envs.base import Env, State
from brax.envs.wrappers.training import VmapWrapper
from gymnasium.spaces import Box, Discrete

from vecrl import checks
from vecrl.checks import did_you_mean

#: The params field that sets an episode's time limit, given as ``episode_length=`` (as on brax and playground).
TIME_LIMIT = "max_steps_in_episode"
# The time limit of ``episode_length=None``: one no episode reaches.
_NO_TIME_LIMIT = 2**30


class GymnaxEnv(Env):
    """The gymnax env ``env`` with ``params`` as one brax env without autoreset: observations as float32,
    ``reward`` and ``done`` as float32, ``info["truncation"]`` 1 where the params' time limit ended an episode
    that did not terminate (a terminal state reached on the last step is a termination, as on brax).

    Examples:
        >>> import gymnax
        >>> env = GymnaxEnv(*gymnax.make("CartPole-v1"))
        >>> state = env.step(env.reset(jax.random.PRNGKey(0)), jnp.int32(1))
        >>> state.obs.shape, float(state.reward), float(state.done)
        ((4,), 1.0, 0.0)
    """

    def __init__(self, env: Any, params: Any) -> None:
        self.env, self.params = env, params

    def reset(self, rng: jax.Array) -> State:
        key, reset_key = jax.random.split(rng)
        obs, env_state = self.env.reset_env(reset_key, self.params)
        zero = jnp.zeros((), jnp.float32)
        info = {"key": key, "truncation": zero}
        return State(env_state, obs.astype(jnp.float32), zero, zero, {}, info)

    def step(self, state: State, action: jax.Array) -> State:
        key, step_key = jax.random.split(state.info["key"])
        obs, env_state, reward, terminated, _ = self.env.step_env(
            step_key, state.pipeline_state, action, self.params
        )
        terminated = jnp.asarray(terminated, bool)
        truncation = jnp.asarray(self.env.is_truncated(env_state, self.params), bool) & ~terminated
        done = terminated | truncation
        info = {"key": key, "truncation": truncation.astype(jnp.float32)}
        return State(
            env_state,
            obs.astype(jnp.float32),
            jnp.asarray(reward, jnp.float32),
            done.astype(jnp.float32),
            {},
            info,
        )

    @property
    def observation_size(self) -> int:
        return math.prod(self.env.observation_space(self.params).shape)

    @property
    def action_size(self) -> int:
        space = self.env.action_space(self.params)
        return 1 if isinstance(space, Discrete) or not space.shape else math.prod(space.shape)

    @property
    def backend(self) -> str:
        return "gymnax"


def checked_env_name(env_name: str) -> str:
    """``env_name`` if gymnax registers it; else an UnknownEnvError listing its envs, with a close match.

    Examples:
        >>> checked_env_name("CartPole-v1")
        'CartPole-v1'
    """
    import gymnax

    return checks.checked_env_name(env_name, list(gymnax.registered_envs), "gymnax")


def make_gymnax_batch(env_name: str, batch_size: int, kwargs: Mapping[str, Any]) -> VmapWrapper:
    """``batch_size`` copies of the gymnax env ``env_name`` as one batched env without autoreset.

    ``kwargs`` holds ``episode_length`` (the params' ``max_steps_in_episode``; default, the env's), fields
    of the env's params (``gravity=9.8``: they replace the default params) and arguments of the env's
    constructor (``use_minimal_action_set=False`` for MinAtar); anything else is a TypeError listing them.
    """
    env, params = _made(env_name, tuple(sorted(_constructor_arguments(env_name, kwargs).items())))
    changes = {key: value for key, value in kwargs.items() if key in _fields(params)}
    if "episode_length" in kwargs:  # None: no time limit (as on brax)
        length = kwargs["episode_length"]
        changes[TIME_LIMIT] = _NO_TIME_LIMIT if length is None else length
    return VmapWrapper(GymnaxEnv(env, params.replace(**changes)), batch_size)


def action_space(env: VmapWrapper) -> Box | Discrete:
    """One sub-env's action space as gymnasium's: a ``Discrete`` of the env's actions, or a float32 ``Box``
    of its bounds.

    Examples:
        >>> action_space(make_gymnax_batch("Pendulum-v1", 2, {}))
        Box(-2.0, 2.0, (1,), float32)
    """
    from gymnax.environments import spaces

    single: GymnaxEnv = env.env
    space = single.env.action_space(single.params)
    if isinstance(space, spaces.Discrete):
        return Discrete(int(space.n))
    if isinstance(space, spaces.Box):
        low, high = (
            np.broadcast_to(np.asarray(bound, np.float32), space.shape) for bound in (space.low, space.high)
        )
        return Box(low, high, tuple(space.shape), np.float32)
    raise TypeError(f"vecrl-gymnax steps envs with Discrete or Box actions; this one's are {space!r}.")


@functools.lru_cache(maxsize=8)
def _made(env_name: str, arguments: tuple[tuple[str, Any], ...]) -> tuple[Any, Any]:
    """``gymnax.make(env_name, **arguments)``: the env and its default params."""
    import gymnax

    return gymnax.make(checked_env_name(env_name), **dict(arguments))


def _fields(params: Any) -> dict[str, Any]:
    """The params' fields and their values."""
    return {name: getattr(params, name) for name in params.__dataclass_fields__}


def _constructor_arguments(env_name: str, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``kwargs`` that the env's constructor takes, after checking every keyword: a params
    field (a number for a number), ``episode_length`` or a constructor argument; else a TypeError."""
    import inspect

    env, params = _made(env_name, ())
    fields = _fields(params)
    taken = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    signature = inspect.signature(type(env).__init__).parameters.items()
    constructor = [name for name, parameter in signature if name != "self" and parameter.kind in taken]
    keys = sorted({"episode_length", *fields, *constructor} - {TIME_LIMIT})
    for key, value in kwargs.items():
        if key == "episode_length":
            continue
        if (key not in fields and key not in constructor) or key == TIME_LIMIT:
            hint = (
                " Give the time limit as episode_length= (as on the brax and playground backends)."
                if key == TIME_LIMIT
                else did_you_mean(key, keys)
            )
            raise TypeError(
                f"{env_name} takes no keyword argument {key!r}.{hint} Its keywords (its params' fields, its"
                f" constructor's arguments and episode_length): {', '.join(keys)}."
            )
        default = fields.get(key)
        if isinstance(default, Real) and not isinstance(default, bool) and key in fields:
            number = isinstance(value, Integral) if isinstance(default, Integral) else isinstance(value, Real)
            if isinstance(value, bool) or not number or not math.isfinite(value):
                kind = "an int" if isinstance(default, Integral) else "a finite number"
                raise TypeError(f"{key} must be {kind} (the env's default is {default!r}), got {value!r}.")
    return {key: value for key, value in kwargs.items() if key in constructor and key not in fields}
