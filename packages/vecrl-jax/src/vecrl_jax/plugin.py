"""What a jax backend's plugin module is made of: its ``vecrl.Backend`` with the keywords every jax backend
takes and refuses (``vecrl_jax.keywords``), and the ``vecrl_backends`` hook that serves it.

Imports neither jax nor any env library, as a plugin module must not (vecrl lists backends by importing them).

Examples:
    >>> backend = jax_backend("mine", "my jax envs")
    >>> vecrl_backends = serving(backend)
    >>> [b.prefix for b in vecrl_backends()], backend.make, sorted(backend.keywords)[:2]
    (['mine'], 'vecrl_mine.make:make_mine_vector_env', ['autoreset_mode', 'episode_length'])
"""

from __future__ import annotations

import vecrl
from vecrl.hookspecs import serving
from vecrl_jax.keywords import JAX_KEYWORDS, JAX_REFUSALS

__all__ = ["jax_backend", "serving"]


def jax_backend(
    prefix: str, description: str, make: str | None = None, check_name: str | None = None
) -> vecrl.Backend:
    """The backend serving ``prefix`` with the jax envs ``make`` makes (``"package.module:function"``, imported
    when an env is made, usually a ``vecrl_jax.make_jax_vector_env`` call; by default vecrl's adapters'
    ``"vecrl_PREFIX.make:make_PREFIX_vector_env"``), and the ``Backend.check_name`` of its names, if any."""
    make = make or f"vecrl_{prefix}.make:make_{prefix}_vector_env"
    return vecrl.Backend(
        prefix,
        make,
        description,
        keywords=JAX_KEYWORDS,
        refusals=JAX_REFUSALS,
        check_name=check_name,
        whole_population=True,  # one jitted step for every sub-env: a population runs at once
    )
