"""make_envpool_env: an envpool env id to a vecrl.TorchWrapper around an EnvpoolVectorEnv."""

from __future__ import annotations

from typing import Any

import torch

from vecrl import TorchWrapper
from vecrl.seeding import SeedRule
from vecrl.single_env import one_or_batched
from vecrl_envpool.plugin import BACKEND
from vecrl_envpool.vector_env import EnvpoolVectorEnv


def make_envpool_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    num_episodes: int | None = None,
    autoreset_mode: Any = "same_step",
    device: str | torch.device | None = None,
    seed_rule: SeedRule = "gymnasium",
    **kwargs: Any,
) -> TorchWrapper:
    """Make a pool of ``num_envs`` envpool envs that speaks torch.

    ``env_name`` is an envpool id (``"CartPole-v1"``, ``"Hopper-v5"``, ``"Pong-v5"``); ``kwargs``
    (``num_threads``, ``max_episode_steps``, Atari's ``frame_skip``, ...) reach ``envpool.make``. See
    ``EnvpoolVectorEnv`` for ``autoreset_mode``, masked resets, ``num_episodes`` and seeding
    (``seed_rule``: ``vecrl.seeding``). ``device`` moves the results to that torch device. ``num_envs=None``
    gives a single env (``vecrl.single_env.SingleEnv``: a pool of one, no autoreset), as on the gym backend.

    Examples:
        >>> env = make_envpool_env("CartPole-v1", num_envs=8, num_threads=1)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        (torch.Size([8, 4]), torch.float32)
    """
    BACKEND.check_keywords(f"make_envpool_env({env_name!r})", kwargs)
    # array_type="torch": the env hands torch views of envpool's results to TorchWrapper, which then passes
    # torch actions through unconverted (the env checks them as numpy views).
    env = one_or_batched(
        f"make_envpool_env({env_name!r})",
        lambda n, mode: EnvpoolVectorEnv(
            env_name,
            num_envs=n,
            num_episodes=num_episodes,
            autoreset_mode=mode,
            array_type="torch",
            seed_rule=seed_rule,
            **kwargs,
        ),
        num_envs=num_envs,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
    )
    return TorchWrapper(
        env,
        force_classic_api=force_classic_api,
        discrete_to_continuous_act=discrete_to_continuous_act,
        clip_actions=clip_actions,
        device=device,
    )
