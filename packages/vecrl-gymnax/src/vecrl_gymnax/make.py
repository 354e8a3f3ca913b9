"""make_gymnax_env: a gymnax env name to a vecrl.TorchWrapper around a GymnaxVectorEnv."""

from __future__ import annotations

from typing import Any

from vecrl import TorchWrapper
from vecrl_brax.make import make_torch_env
from vecrl_gymnax.plugin import BACKEND
from vecrl_gymnax.vector_env import GymnaxVectorEnv


def make_gymnax_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    num_episodes: int | None = None,
    autoreset_mode: Any = "same_step",
    **kwargs: Any,
) -> TorchWrapper:
    """Make ``num_envs`` gymnax envs, batched, jitted, and speaking torch.

    ``kwargs``: ``episode_length``, fields of the env's params and its constructor's arguments. See
    ``GymnaxVectorEnv``.

    Examples:
        >>> env = make_gymnax_env("CartPole-v1", num_envs=8)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        (torch.Size([8, 4]), torch.float32)
    """
    return make_torch_env(
        GymnaxVectorEnv,
        BACKEND,
        "make_gymnax_env",
        env_name,
        force_classic_api=force_classic_api,
        num_envs=num_envs,
        discrete_to_continuous_act=discrete_to_continuous_act,
        clip_actions=clip_actions,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
        **kwargs,
    )
