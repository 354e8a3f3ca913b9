"""PlaygroundVectorEnv: MuJoCo Playground envs on vecrl's jax engine (``vecrl_jax.JaxVectorEnv``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from vecrl_jax.brax_style import BraxStyleEnv
from vecrl_jax.keywords import JAX_REFUSALS
from vecrl_jax.vector_env import JaxVectorEnv
from vecrl_playground import batch

_RESERVED_KWARGS = {
    **JAX_REFUSALS,
    "config": "give the config entries to change as keyword arguments (impl='jax', ctrl_dt=0.02, ...)",
    "config_overrides": "give the config entries to change as keyword arguments (impl='jax', ctrl_dt=0.02, ...)",
}


class PlaygroundVectorEnv(JaxVectorEnv):
    """``num_envs`` copies of the MuJoCo Playground env ``env_name`` (``CartpoleBalance``, ``CheetahRun``,
    ...), stepped together in one jitted call, with everything ``vecrl_jax.JaxVectorEnv`` gives: one compile per
    configuration (shared by every env of it in the process), the terminated/truncated split, a fresh random
    start state per episode, episode budgets inside the jitted step, every autoreset mode with
    ``reset_mask``, seeding, Dict observations, torch views of the jax results.

    Keywords: ``episode_length`` and ``action_repeat`` (the env's config's by default) set the episode
    wrapper; every other keyword changes the env's config (``impl``, ``ctrl_dt``, ``sim_dt``, ...; an
    unknown one is a TypeError listing them). ``impl`` defaults to ``"jax"`` on CPU, where it ran about 17x
    faster than MJX's ``"warp"`` and compiled in a fraction of the time, and to ``"warp"`` on a GPU.
    Actions are in ``[-1, 1]`` per actuator.

    Examples:
        >>> env = PlaygroundVectorEnv("CartpoleBalance", num_envs=4, episode_length=100)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 5)
    """

    reserved_kwargs: ClassVar[Mapping[str, str]] = _RESERVED_KWARGS

    @staticmethod
    def make_env(env_name: str, kwargs: Mapping[str, Any]) -> BraxStyleEnv:
        """The playground env as a ``JaxEnv`` (see ``vecrl_playground.batch.make_playground_env``)."""
        return batch.make_playground_env(env_name, kwargs)
