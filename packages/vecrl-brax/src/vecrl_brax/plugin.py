"""The vecrl plugin of this package: it serves the ``brax`` prefix.

Importing this module imports neither jax nor brax; they are imported when an env is made.
"""

from __future__ import annotations

from typing import Any

import vecrl


def make_brax_vector_env(env_name: str, **kwargs: Any) -> Any:
    """``vecrl_brax.make.make_brax_vector_env``, imported (with jax and brax) only when called."""
    from vecrl_brax.make import make_brax_vector_env as make

    return make(env_name, **kwargs)


#: vecrl's keywords the jax backends (brax, playground) take; ``JAX_REFUSALS`` says why not the others.
JAX_KEYWORDS = ("autoreset_mode", "episode_length", "num_episodes", "seed_rule")
JAX_REFUSALS = {
    "device": "a jax env computes on jax's default device and hands its results to torch there, without a"
    " copy (DLPack); choose that device through jax (e.g. JAX_PLATFORMS=cpu), or move the results with .to()",
    "num_workers": "worker processes are the gym backend's; a jax env already steps all its sub-envs in one"
    " jitted call: give more sub-envs (num_envs=) instead",
    "wrappers": "it applies gymnasium wrappers to each sub-env of the gym backend, but a jax env is one batched"
    " env with no sub-env objects. For gymnasium's vector wrappers use make_vector_env(..., vector_wrappers=[...]);"
    " for brax's own wrappers, wrap the brax env",
}
BACKEND = vecrl.Backend(
    prefix="brax",
    make=make_brax_vector_env,
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
