"""vecrl-gymnax: the ``gymnax`` backend of vecrl, gymnax's jax envs batched and jitted.

jax and gymnax are imported on first use of ``GymnaxVectorEnv`` or ``make_gymnax_env``, not by
``import vecrl_gymnax``.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=8)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_gymnax.make import make_gymnax_env
    from vecrl_gymnax.vector_env import GymnaxVectorEnv

__version__ = "0.1.0"

__all__ = ["GymnaxVectorEnv", "make_gymnax_env"]

_LAZY = {"GymnaxVectorEnv": "vecrl_gymnax.vector_env", "make_gymnax_env": "vecrl_gymnax.make"}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
