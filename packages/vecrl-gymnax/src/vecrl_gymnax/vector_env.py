"""GymnaxVectorEnv: gymnax envs on vecrl's jax engine (``vecrl_jax.JaxVectorEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vecrl_gymnax import batch
from vecrl_jax.keywords import JAX_REFUSALS
from vecrl_jax.vector_env import JaxVectorEnv

_RESERVED_KWARGS = {
    **JAX_REFUSALS,
    "action_repeat": "a gymnax env takes one action per step; repeat an action by stepping with it again",
    "params": "give the fields of the env's params to change as keyword arguments (gravity=9.8, ...)",
}


class GymnaxVectorEnv(JaxVectorEnv):
    """``num_envs`` copies of the gymnax env ``env_name`` (``CartPole-v1``, ``Pendulum-v1``,
    ``Breakout-MinAtar``, ``Catch-bsuite``, ...), stepped together in one jitted call, with everything
    ``vecrl_jax.JaxVectorEnv`` gives: one compile per configuration, the terminated/truncated split, a fresh
    random start state per episode (gymnax's own autoreset is not used), episode budgets inside the jitted
    step, every autoreset mode with ``reset_mask``, seeding (a seed per sub-env, ``seed_rule=``), torch views
    of the jax results.

    Keywords: ``episode_length`` (the params' ``max_steps_in_episode``; the env's by default; reaching it is
    a truncation), the fields of the env's params (``gravity=9.8``) and the env's constructor arguments; an
    unknown one is a TypeError listing them. Observations are float32; actions are the env's: a
    ``Discrete`` (int actions) or a float32 ``Box``.

    Examples:
        >>> env = GymnaxVectorEnv("CartPole-v1", num_envs=4)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((4, 4), Discrete(2))
    """

    reserved_kwargs: ClassVar[Mapping[str, str]] = _RESERVED_KWARGS

    @staticmethod
    def make_env(env_name: str, kwargs: Mapping[str, Any]) -> batch.GymnaxEnv:
        """The gymnax env as a ``JaxEnv`` (see ``vecrl_gymnax.batch.make_gymnax_env``)."""
        return batch.make_gymnax_env(env_name, kwargs)
