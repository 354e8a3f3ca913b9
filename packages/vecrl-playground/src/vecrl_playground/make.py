"""make_playground_env: a MuJoCo Playground env name to a torch-speaking vector env; make_playground_vector_env, the backend's
make."""

from __future__ import annotations

from typing import Any

import vecrl
from vecrl.single_env import SingleEnv
from vecrl_jax.make import make_jax_vector_env
from vecrl_playground.vector_env import PlaygroundVectorEnv


def make_playground_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl.make_vector_env("playground::" + env_name, **kwargs)``: a ``PlaygroundVectorEnv`` that speaks torch."""
    return vecrl.make_vector_env(f"playground::{env_name}", **kwargs)


def make_playground_vector_env(env_name: str, **kwargs: Any) -> PlaygroundVectorEnv | SingleEnv:
    """The playground backend's ``make``: a ``PlaygroundVectorEnv`` of ``num_envs`` MuJoCo Playground envs (``make_vector_env`` makes it
    speak torch).

    ``kwargs``: ``episode_length``, ``action_repeat`` and overrides of the env's config (``impl``,
    ``ctrl_dt``, ...). See ``PlaygroundVectorEnv``.

    Examples:
        >>> env = make_playground_vector_env("CartpoleBalance", num_envs=8, episode_length=200)
        >>> type(env).__name__, env.num_envs
        ('PlaygroundVectorEnv', 8)
    """
    return make_jax_vector_env(PlaygroundVectorEnv, "playground", env_name, **kwargs)
