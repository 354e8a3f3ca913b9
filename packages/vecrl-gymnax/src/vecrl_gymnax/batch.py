"""gymnax envs as the ``JaxEnv`` that vecrl's jax engine steps.

A gymnax env is functional: ``reset_env(key, params)`` and ``step_env(key, state, action, params)`` on one
state, ``step_env`` saying whether the episode ended (gymnax's ``step`` adds an autoreset of its own, which
vecrl's jitted step replaces with a fresh state per episode). ``GymnaxEnv`` batches one env and its params
with ``jax.vmap``, the key of each sub-env's next step carried in its state, so that each sub-env starts
from a key of its own, and the numeric fields of its params there too, so that they vary per sub-env
(``vecrl.params``: ``env.reset(options={"params": {"g": ...}})``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.spaces import Box, Discrete

from vecrl import checks
from vecrl.checks import did_you_mean
from vecrl_jax.protocol import Outcome

#: The params field that sets an episode's time limit, given as ``episode_length=`` (as on brax and playground).
TIME_LIMIT = "max_steps_in_episode"
# The time limit of ``episode_length=None``: one no episode reaches.
_NO_TIME_LIMIT = 2**30


class GymnaxState(NamedTuple):
    """One sub-env's state: gymnax's, its observation, the reward and ends of the step that led to it, and
    the key of its next step, and its params' numeric fields (``GymnaxEnv.default_params``). The ends are float32 (1.0: it ended so), as brax's ``done`` is: the engine
    carries a batch of states as one buffer per dtype, and a bool buffer more costs every step."""

    env_state: Any
    observation: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    key: jax.Array
    params: dict[str, jax.Array]


@dataclass(frozen=True, eq=False)  # one per configuration (cached): compared by identity
class GymnaxEnv:
    """The gymnax env ``env`` with ``params`` as a ``JaxEnv``: observations as float32, rewards as float32, an
    episode truncated where the params' time limit ends it without a terminal state (a terminal state
    reached on the last step is a termination, as on brax).

    gymnax 1.x's ``step_env`` says whether the episode terminated and ``is_truncated`` whether it reached the
    time limit; 0.x's ``step_env`` says whether it ended either way, and a state at the time limit is then
    a truncation. A ``step_env`` that returns six values (terminated and truncated apart) is read as such.

    Examples:
        >>> import gymnax
        >>> env = GymnaxEnv(*gymnax.make("CartPole-v1"))
        >>> states = env.step(env.reset(jax.random.split(jax.random.PRNGKey(0), 2)), jnp.ones(2, jnp.int32))
        >>> env.outcome(states).observation.shape, env.outcome(states).reward.tolist()
        ((2, 4), [1.0, 1.0])
    """

    env: Any
    params: Any
    action_space: Any = field(default=None, compare=False)

    @functools.cached_property
    def default_params(self) -> dict[str, np.ndarray]:
        """The numeric fields of the env's params (its time limit aside: ``episode_length=``), as float32 or
        int32 arrays of one sub-env's shape: the parameters a sub-env may vary."""
        return {
            name: np.asarray(value, np.float32 if np.asarray(value).dtype.kind == "f" else np.int32)
            for name, value in _fields(self.params).items()
            if name != TIME_LIMIT and name not in DERIVED and np.asarray(value).dtype.kind in "iuf"
        }

    def reset(self, keys: jax.Array) -> GymnaxState:
        return jax.vmap(self._reset_one)(keys)

    def step(self, state: GymnaxState, action: jax.Array) -> GymnaxState:
        return jax.vmap(self._step_one)(state, action)

    def with_params(self, state: GymnaxState, params: Mapping[str, jax.Array]) -> GymnaxState:
        return state._replace(params=dict(params))

    def render(self, states: list[GymnaxState]) -> list[np.ndarray]:
        """The frames of ``states`` as gymnax's ``Visualizer`` draws them (``vecrl_gymnax.render``)."""
        from vecrl_gymnax.render import gymnax_frames

        return gymnax_frames(self.env, self.params, [state.env_state for state in states])

    def outcome(self, state: GymnaxState) -> Outcome:
        return Outcome(state.observation, state.reward, state.terminated > 0, state.truncated > 0)

    def _reset_one(self, rng: jax.Array) -> GymnaxState:
        key, reset_key = jax.random.split(rng)
        obs, env_state = self.env.reset_env(reset_key, self.params)
        zero = jnp.zeros((), jnp.float32)
        defaults = {name: jnp.asarray(value) for name, value in self.default_params.items()}
        return GymnaxState(env_state, obs.astype(jnp.float32), zero, zero, zero, key, defaults)

    def _step_one(self, state: GymnaxState, action: jax.Array) -> GymnaxState:
        key, step_key = jax.random.split(state.key)
        params = derived(self.params.replace(**state.params))
        result = self.env.step_env(step_key, state.env_state, action, params)
        obs, env_state, reward, ended = result[:4]
        ended = jnp.asarray(ended, bool)
        if len(result) == 6:  # terminated and truncated apart
            terminated = ended
            time_limit = jnp.asarray(result[4], bool)
        elif hasattr(self.env, "is_truncated"):  # 1.x: step_env's end is a termination
            terminated = ended
            time_limit = jnp.asarray(self.env.is_truncated(env_state, params), bool)
        else:  # 0.x: step_env's end includes the time limit
            time_limit = jnp.asarray(env_state.time >= self.params.max_steps_in_episode, bool)
            terminated = ended & ~time_limit
        truncated = time_limit & ~terminated
        flags = (terminated.astype(jnp.float32), truncated.astype(jnp.float32))
        reward = jnp.asarray(reward, jnp.float32)
        return GymnaxState(env_state, obs.astype(jnp.float32), reward, *flags, key, state.params)


#: Fields of a gymnax env's params that are functions of others (CartPole's, as its constructor sets them):
#: computed from those (each with its formula in words), so that varying a mass or length changes them too.
DERIVED = {
    "total_mass": (lambda params: params.masspole + params.masscart, "masspole + masscart"),
    "polemass_length": (lambda params: params.masspole * params.length, "masspole * length"),
}


def derived(params: Any) -> Any:
    """``params`` with its ``DERIVED`` fields computed from the fields they depend on.

    Examples:
        >>> import gymnax
        >>> params = gymnax.make("CartPole-v1")[1].replace(masspole=1.0)
        >>> float(derived(params).total_mass), float(derived(params).polemass_length)
        (2.0, 0.5)
    """
    fields = _fields(params)
    return params.replace(**{name: rule(params) for name, (rule, _) in DERIVED.items() if name in fields})


def checked_env_name(env_name: str) -> str:
    """``env_name`` if gymnax registers it; else an UnknownEnvError listing its envs, with a close match.

    Examples:
        >>> checked_env_name("CartPole-v1")
        'CartPole-v1'
    """
    import gymnax

    return checks.checked_env_name(env_name, list(gymnax.registered_envs), "gymnax")


def make_gymnax_env(env_name: str, kwargs: Mapping[str, Any]) -> GymnaxEnv:
    """The gymnax env ``env_name`` as a ``JaxEnv``.

    ``kwargs`` holds ``episode_length`` (the params' ``max_steps_in_episode``; default, the env's), fields
    of the env's params (``gravity=9.8``: they replace the default params) and arguments of the env's
    constructor (``use_minimal_action_set=False`` for MinAtar); anything else is a TypeError listing them.
    """
    env, params = _made(env_name, tuple(sorted(_constructor_arguments(env_name, kwargs).items())))
    changes = {key: value for key, value in kwargs.items() if key in _fields(params)}
    if "episode_length" in kwargs:  # None: no time limit (as on brax)
        length = kwargs["episode_length"]
        changes[TIME_LIMIT] = _NO_TIME_LIMIT if length is None else length
    params = params.replace(**changes)
    return GymnaxEnv(env, params, action_space(env, params))


def action_space(env: Any, params: Any) -> Box | Discrete:
    """One sub-env's action space as gymnasium's: a ``Discrete`` of the env's actions, or a float32 ``Box``
    of its bounds.

    Examples:
        >>> make_gymnax_env("Pendulum-v1", {}).action_space
        Box(-2.0, 2.0, (1,), float32)
    """
    from gymnax.environments import spaces

    space = env.action_space(params)
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
        if key in DERIVED and key in fields:
            raise TypeError(
                f"{env_name}'s {key} is computed from the fields it depends on ({DERIVED[key][1]}): give those."
            )
        default = fields.get(key)
        if isinstance(default, Real) and not isinstance(default, bool) and key in fields:
            number = isinstance(value, Integral) if isinstance(default, Integral) else isinstance(value, Real)
            if isinstance(value, bool) or not number or not math.isfinite(value):
                kind = "an int" if isinstance(default, Integral) else "a finite number"
                raise TypeError(f"{key} must be {kind} (the env's default is {default!r}), got {value!r}.")
    return {key: value for key, value in kwargs.items() if key in constructor and key not in fields}
