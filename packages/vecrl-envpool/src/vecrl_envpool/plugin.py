"""The vecrl plugin of this package: it serves the ``envpool`` prefix.

Importing this module does not import envpool; it is imported when an env is made.
"""

from __future__ import annotations

from typing import Any

import vecrl


def make_envpool_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl_envpool.make_envpool_env``, imported (with envpool) only when called."""
    from vecrl_envpool.make import make_envpool_env as make

    return make(env_name, **kwargs)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``envpool`` backend: ``vecrl.make_vector_env("envpool::CartPole-v1", num_envs=256)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['envpool']
    """
    return [
        vecrl.Backend(
            prefix="envpool",
            make=make_envpool_env,
            description="envpool's C++ environments (classic control, MuJoCo, Atari, ...), stepped in threads",
        )
    ]
