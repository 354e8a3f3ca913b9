"""make_brax_env: a brax env name to a torch-speaking vector env; make_brax_vector_env, the backend's make."""

from __future__ import annotations

from typing import Any

import vecrl
from vecrl.single_env import SingleEnv
from vecrl_brax.vector_env import VectorEnvFromBrax
from vecrl_jax.make import make_jax_vector_env


def make_brax_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl.make_vector_env("brax::" + env_name, **kwargs)``: a ``VectorEnvFromBrax`` that speaks torch."""
    return vecrl.make_vector_env(f"brax::{env_name}", **kwargs)


def make_brax_vector_env(env_name: str, **kwargs: Any) -> VectorEnvFromBrax | SingleEnv:
    """The brax backend's ``make``: a ``VectorEnvFromBrax`` of ``num_envs`` brax envs (``make_vector_env``
    makes it speak torch).

    ``env_name`` is a brax env (``"ant"``) or, with ``"old::ant"``, a ``brax.v1`` env. ``kwargs``
    (``episode_length``, ``action_repeat``, ``backend``, constructor arguments) reach
    ``brax.envs.create``. See ``VectorEnvFromBrax`` for ``autoreset_mode`` (``"same_step"``, ``"next_step"``
    or ``"disabled"``), masked resets, ``num_episodes`` and seeding.

    Examples:
        >>> env = make_brax_vector_env("inverted_pendulum", num_envs=8, episode_length=200)
        >>> type(env).__name__, env.num_envs
        ('VectorEnvFromBrax', 8)
    """
    return make_jax_vector_env(VectorEnvFromBrax, "brax", env_name, **kwargs)
