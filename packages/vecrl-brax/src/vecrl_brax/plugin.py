"""The vecrl plugin of this package: it serves the ``brax`` prefix.

Importing this module imports neither jax nor brax; they are imported when an env is made.
"""

from __future__ import annotations

from typing import Any

import vecrl


def make_brax_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl_brax.make_brax_env``, imported (with jax and brax) only when called."""
    from vecrl_brax.make import make_brax_env as make

    return make(env_name, **kwargs)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``brax`` backend: ``vecrl.make_vector_env("brax::ant", num_envs=64)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['brax']
    """
    return [
        vecrl.Backend(
            prefix="brax",
            make=make_brax_env,
            description="brax environments, batched and jitted on the jax device, with fresh-state autoreset",
        )
    ]
