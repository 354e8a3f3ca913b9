"""The vecrl plugin of this package: it serves the ``gymnax`` prefix.

Importing this module imports neither jax nor gymnax; they are imported when an env is made.
"""

from __future__ import annotations

import vecrl
from vecrl_jax.keywords import JAX_KEYWORDS, JAX_REFUSALS

BACKEND = vecrl.Backend(
    prefix="gymnax",
    make="vecrl_gymnax.make:make_gymnax_vector_env",
    description="gymnax environments (classic control, MinAtar, bsuite), batched and jitted like brax's",
    keywords=JAX_KEYWORDS,
    refusals=JAX_REFUSALS,
)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``gymnax`` backend: ``vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=64)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['gymnax']
    """
    return [BACKEND]
