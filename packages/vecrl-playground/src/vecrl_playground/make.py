"""make_playground_env: a MuJoCo Playground env name to a vecrl.TorchWrapper around a PlaygroundVectorEnv."""

from __future__ import annotations

from typing import Any

from vecrl import TorchWrapper
from vecrl_brax.make import make_torch_env
from vecrl_playground.plugin import BACKEND
from vecrl_playground.vector_env import PlaygroundVectorEnv


def make_playground_env(
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
    """Make ``num_envs`` MuJoCo Playground envs, batched, jitted, and speaking torch.

    ``kwargs``: ``episode_length``, ``action_repeat`` and overrides of the env's config (``impl``,
    ``ctrl_dt``, ...). See ``PlaygroundVectorEnv``.

    Examples:
        >>> env = make_playground_env("CartpoleBalance", num_envs=8, episode_length=200)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        (torch.Size([8, 5]), torch.float32)
    """
    return make_torch_env(
        PlaygroundVectorEnv,
        BACKEND,
        "make_playground_env",
        env_name,
        force_classic_api=force_classic_api,
        num_envs=num_envs,
        discrete_to_continuous_act=discrete_to_continuous_act,
        clip_actions=clip_actions,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
        **kwargs,
    )
