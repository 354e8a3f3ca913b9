"""``BraxStyleEnv``: one env whose states have brax's fields, as a ``JaxEnv`` (brax's and MuJoCo
Playground's envs, which share that layout). Reads the fields only: brax is never imported here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax

from vecrl_jax.protocol import Outcome


@dataclass(frozen=True, eq=False)  # one per configuration (cached): compared by identity
class BraxStyleEnv:
    """``env``, one env with ``reset(key)`` and ``step(state, action)`` on states with brax's fields (``obs``,
    ``reward``, ``done``, ``metrics`` and, where a time limit wraps it, ``info["truncation"]``: brax's
    ``EpisodeWrapper``), batched with ``jax.vmap``; ``action_space`` is one sub-env's.

    Examples:
        >>> import jax.numpy as jnp
        >>> from typing import NamedTuple
        >>> from gymnasium.spaces import Box
        >>> class State(NamedTuple):  # brax's fields
        ...     obs: jax.Array
        ...     reward: jax.Array
        ...     done: jax.Array
        ...     metrics: dict
        ...     info: dict
        >>> class Wait:  # stays where it starts; its time limit ends the first step
        ...     def reset(self, key):
        ...         zero = jnp.zeros(())
        ...         return State(jax.random.uniform(key, (2,)), zero, zero, {}, {"truncation": zero})
        ...     def step(self, state, action):
        ...         return state._replace(done=jnp.ones(()), info={"truncation": jnp.ones(())})
        >>> env = BraxStyleEnv(Wait(), Box(-1, 1, (1,)))
        >>> states = env.step(env.reset(jax.random.split(jax.random.PRNGKey(0), 3)), jnp.zeros((3, 1)))
        >>> env.outcome(states).terminated.tolist(), env.outcome(states).truncated.tolist()
        ([False, False, False], [True, True, True])
    """

    env: Any
    action_space: Any = field(compare=False)

    def reset(self, keys: jax.Array) -> Any:
        return jax.vmap(self.env.reset)(keys)

    def step(self, state: Any, action: jax.Array) -> Any:
        return jax.vmap(self.env.step)(state, action)

    def outcome(self, state: Any) -> Outcome:
        done = state.done.astype(bool)
        truncation = state.info.get("truncation") if isinstance(state.info, dict) else None
        time_limit = jax.numpy.zeros_like(done) if truncation is None else truncation.astype(bool)
        return Outcome(state.obs, state.reward, done & ~time_limit, done & time_limit, dict(state.metrics))
