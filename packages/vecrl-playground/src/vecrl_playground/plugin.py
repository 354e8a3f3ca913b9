"""The vecrl plugin of this package: it serves the ``playground`` prefix.

Importing this module imports neither jax nor playground; they are imported when an env is made.
"""

from __future__ import annotations

import vecrl
from vecrl_jax.keywords import JAX_KEYWORDS, JAX_REFUSALS

BACKEND = vecrl.Backend(
    prefix="playground",
    make="vecrl_playground.make:make_playground_vector_env",
    description="MuJoCo Playground (MJX) environments, batched and jitted like brax's, fresh-state autoreset",
    keywords=JAX_KEYWORDS,
    refusals=JAX_REFUSALS,
)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``playground`` backend: ``vecrl.make_vector_env("playground::CartpoleBalance", num_envs=64)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['playground']
    """
    return [BACKEND]
