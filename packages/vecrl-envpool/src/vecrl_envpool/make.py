"""make_envpool_env: an envpool env id to a torch-speaking vector env; make_envpool_vector_env, the backend's
make."""

from __future__ import annotations

from typing import Any

import torch

import vecrl
from vecrl.contract import EpisodeOptions
from vecrl.seeding import SeedRule
from vecrl.single_env import SingleEnv, one_or_batched
from vecrl_envpool.vector_env import EnvpoolVectorEnv


def make_envpool_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl.make_vector_env("envpool::" + env_name, **kwargs)``: an ``EnvpoolVectorEnv`` that speaks torch."""
    return vecrl.make_vector_env(f"envpool::{env_name}", **kwargs)


def make_envpool_vector_env(
    env_name: str,
    *,
    num_envs: int | None = None,
    num_episodes: int | None = None,
    autoreset_mode: Any = EpisodeOptions.autoreset_mode,
    device: str | torch.device | None = None,
    seed_rule: SeedRule = "gymnasium",
    **kwargs: Any,
) -> EnvpoolVectorEnv | SingleEnv:
    """The envpool backend's ``make``: an ``EnvpoolVectorEnv``, a pool of ``num_envs`` envpool envs
    (``make_vector_env`` makes it speak torch).

    ``env_name`` is an envpool id (``"CartPole-v1"``, ``"Hopper-v5"``, ``"Pong-v5"``); ``kwargs``
    (``num_threads``, ``max_episode_steps``, Atari's ``frame_skip``, ...) reach ``envpool.make``. See
    ``EnvpoolVectorEnv`` for ``autoreset_mode``, masked resets, ``num_episodes`` and seeding
    (``seed_rule``: ``vecrl.seeding``). ``device`` places the results on that torch device. ``num_envs=None``
    gives a single env (``vecrl.single_env.SingleEnv``: a pool of one, no autoreset), as on the gym backend.

    Examples:
        >>> env = make_envpool_vector_env("CartPole-v1", num_envs=8, num_threads=1)
        >>> type(env).__name__, env.num_envs
        ('EnvpoolVectorEnv', 8)
    """
    # array_type="torch": the env hands torch views of envpool's results to TorchWrapper, which then passes
    # torch actions through unconverted (the env checks them as numpy views).
    return one_or_batched(
        f"make_vector_env('envpool::{env_name}')",
        lambda n, mode: EnvpoolVectorEnv(
            env_name,
            num_envs=n,
            num_episodes=num_episodes,
            autoreset_mode=mode,
            array_type="torch",
            seed_rule=seed_rule,
            device=device,
            **kwargs,
        ),
        num_envs=num_envs,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
    )
