"""make_gymnax_env: a gymnax env name to a torch-speaking vector env; make_gymnax_vector_env, the backend's
make."""

from __future__ import annotations

from typing import Any

import vecrl
from vecrl.single_env import SingleEnv
from vecrl_gymnax.vector_env import GymnaxVectorEnv
from vecrl_jax.make import make_jax_vector_env


def make_gymnax_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl.make_vector_env("gymnax::" + env_name, **kwargs)``: a ``GymnaxVectorEnv`` that speaks torch."""
    return vecrl.make_vector_env(f"gymnax::{env_name}", **kwargs)


def make_gymnax_vector_env(env_name: str, **kwargs: Any) -> GymnaxVectorEnv | SingleEnv:
    """The gymnax backend's ``make``: a ``GymnaxVectorEnv`` of ``num_envs`` gymnax envs (``make_vector_env`` makes it
    speak torch).

    ``kwargs``: ``episode_length``, fields of the env's params and its constructor's arguments. See
    ``GymnaxVectorEnv``.

    Examples:
        >>> env = make_gymnax_vector_env("CartPole-v1", num_envs=8)
        >>> type(env).__name__, env.num_envs
        ('GymnaxVectorEnv', 8)
    """
    return make_jax_vector_env(GymnaxVectorEnv, "gymnax", env_name, **kwargs)
