"""vecrl-envpool: the ``envpool`` backend of vecrl, envpool's C++ environments with vecrl's episode rules.

envpool is imported on first use of ``EnvpoolVectorEnv`` or ``make_envpool_env``, not by
``import vecrl_envpool``.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=8)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_envpool.make import make_envpool_env
    from vecrl_envpool.vector_env import EnvpoolVectorEnv

__version__ = "0.1.0"

__all__ = ["EnvpoolVectorEnv", "make_envpool_env"]

_LAZY = {"EnvpoolVectorEnv": "vecrl_envpool.vector_env", "make_envpool_env": "vecrl_envpool.make"}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
