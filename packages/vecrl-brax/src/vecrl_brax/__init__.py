"""vecrl-brax: the ``brax`` backend of vecrl, brax environments batched, jitted and handed to torch.

It is a thin adapter onto vecrl's jax engine (vecrl-jax). jax and brax are imported on first use of
``VectorEnvFromBrax`` or ``make_brax_env``, not by ``import vecrl_brax``.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=8, episode_length=200)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_brax.make import make_brax_env
    from vecrl_brax.vector_env import VectorEnvFromBrax

__version__ = "0.1.0"

__all__ = ["VectorEnvFromBrax", "make_brax_env"]

_LAZY = {
    "VectorEnvFromBrax": "vecrl_brax.vector_env",
    "make_brax_env": "vecrl_brax.make",
}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
