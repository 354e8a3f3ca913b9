"""vecrl-playground: the ``playground`` backend of vecrl, MuJoCo Playground's MJX envs batched and jitted.

jax and playground are imported on first use of ``PlaygroundVectorEnv`` or ``make_playground_env``, not by
``import vecrl_playground``.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("playground::CartpoleBalance", num_envs=8, episode_length=200)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 5)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_playground.make import make_playground_env
    from vecrl_playground.vector_env import PlaygroundVectorEnv

__version__ = "0.1.0"

__all__ = ["PlaygroundVectorEnv", "make_playground_env"]

_LAZY = {"PlaygroundVectorEnv": "vecrl_playground.vector_env", "make_playground_env": "vecrl_playground.make"}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
