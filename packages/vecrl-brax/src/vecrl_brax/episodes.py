"""A batched brax env's episodes as pure jax functions, for evaluate's fused rollout
(``vecrl_policy.fused.JaxEpisodes``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax


@dataclass(frozen=True)
class BraxEpisodes:
    """Reset, step and read a batch of states of ``env``, brax's ``VmapWrapper`` of one env (with its
    ``EpisodeWrapper``: the time limit ends an episode as it does when the env is stepped). Equal for the
    same batched env, which vecrl-brax shares between envs of one configuration.

    Examples:
        >>> from brax.envs import create
        >>> episodes = BraxEpisodes(create("fast", batch_size=2, auto_reset=False))
        >>> states = episodes.reset(jax.vmap(jax.random.PRNGKey)(jax.numpy.arange(2)))
        >>> [leaf.shape for leaf in episodes.outcome(states)]
        [(2, 2), (2,), (2,)]
    """

    env: Any

    def reset(self, keys: jax.Array) -> Any:
        return jax.vmap(self.env.env.reset)(keys)

    def step(self, state: Any, action: jax.Array) -> Any:
        return self.env.step(state, action)

    def outcome(self, state: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        observation = state.obs.reshape(state.obs.shape[0], -1)  # flat, as evaluate's stepped loop has it
        return observation, state.reward, state.done.astype(bool)
