"""The vecrl plugin of this package: it serves the ``brax`` prefix.

Importing this module imports neither jax nor brax; they are imported when an env is made.
"""

from __future__ import annotations

import vecrl
from vecrl_jax.keywords import JAX_KEYWORDS, JAX_REFUSALS

BACKEND = vecrl.Backend(
    prefix="brax",
    make="vecrl_brax.make:make_brax_vector_env",
    description="brax environments, batched and jitted on the jax device, with fresh-state autoreset",
    keywords=JAX_KEYWORDS,
    refusals=JAX_REFUSALS,
)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``brax`` backend: ``vecrl.make_vector_env("brax::ant", num_envs=64)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['brax']
    """
    return [BACKEND]
