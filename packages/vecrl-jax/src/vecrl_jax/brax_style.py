"""``BraxStyleEnv``: one env whose states have brax's fields, as a ``JaxEnv`` (brax's and MuJoCo
Playground's envs, which share that layout), with per-sub-env model params where it is given their
``ModelParams``. Reads the fields only: brax is never imported here."""

from __future__ import annotations

import contextlib
import functools
import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from vecrl.rendering import NoFrames
from vecrl_jax.model_params import PARAMS_KEY, ModelParams
from vecrl_jax.protocol import Outcome


@dataclass(frozen=True, eq=False)  # one per configuration (cached): compared by identity
class BraxStyleEnv:
    """``env``, one env with ``reset(key)`` and ``step(state, action)`` on states with brax's fields (``obs``,
    ``reward``, ``done``, ``metrics`` and, where a time limit wraps it, ``info["truncation"]``: brax's
    ``EpisodeWrapper``), batched with ``jax.vmap``; ``action_space`` is one sub-env's. With ``model_params``
    its sub-envs step each with their own values of those model fields (``vecrl_jax.model_params``).

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
    model_params: ModelParams | None = field(default=None, compare=False)

    @functools.cached_property
    def default_params(self) -> dict[str, np.ndarray]:
        return {} if self.model_params is None else self.model_params.defaults(self.env)

    def reset(self, keys: jax.Array) -> Any:
        states = jax.vmap(self.env.reset)(keys)
        if self.model_params is None:
            return states
        defaults = self.default_params.items()
        return self.with_params(
            states, {name: np.broadcast_to(v, (len(keys), *v.shape)) for name, v in defaults}
        )

    def step(self, state: Any, action: jax.Array) -> Any:
        if self.model_params is None:
            return jax.vmap(self.env.step)(state, action)
        model_params = self.model_params

        def step_one(state: Any, action: jax.Array) -> Any:
            params = state.info[PARAMS_KEY]
            with model_params.stepping(self.env, params):
                stepped = self.env.step(state, action)
            return stepped.replace(info={**stepped.info, PARAMS_KEY: params})

        return jax.vmap(step_one)(state, action)

    def with_params(self, state: Any, params: Mapping[str, Any]) -> Any:
        return state.replace(info={**state.info, PARAMS_KEY: dict(params)})

    def render(self, states: list[Any]) -> list[Any]:
        """The frames of ``states`` as the env draws them with MuJoCo (``vecrl_jax.protocol``): brax's
        ``render`` takes their physics states (``pipeline_state``), Playground's the states themselves."""
        check_mujoco_gl()
        trajectory = (
            [state.pipeline_state for state in states] if hasattr(states[0], "pipeline_state") else states
        )
        with contextlib.redirect_stderr(io.StringIO()):  # Playground's render draws a progress bar there
            return list(self.env.render(trajectory))

    def outcome(self, state: Any) -> Outcome:
        done = state.done.astype(bool)
        truncation = state.info.get("truncation") if isinstance(state.info, dict) else None
        time_limit = jax.numpy.zeros_like(done) if truncation is None else truncation.astype(bool)
        return Outcome(state.obs, state.reward, done & ~time_limit, done & time_limit, dict(state.metrics))


def check_mujoco_gl() -> None:
    """A ``NoFrames`` where MuJoCo was imported before ``MUJOCO_GL`` was set (it picks its GL backend then, once),
    so that it would draw through another backend than the one asked for."""
    import mujoco

    wanted = os.environ.get("MUJOCO_GL", "").lower()
    chosen = getattr(mujoco, "GLContext", None)
    if wanted and chosen is not None and not chosen.__module__.endswith(wanted):
        raise NoFrames(
            f"MuJoCo was imported before MUJOCO_GL={wanted} was set, so it draws through {chosen.__module__}:"
            f" set MUJOCO_GL={wanted} in the environment (or import vecrl_evotorch before brax, mujoco or"
            " EvoTorch)"
        )
