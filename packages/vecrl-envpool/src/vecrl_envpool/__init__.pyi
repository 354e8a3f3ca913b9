"""The public names of ``vecrl_envpool`` (its ``__init__.py`` imports them on first use)."""

from vecrl_envpool.make import make_envpool_env as make_envpool_env
from vecrl_envpool.vector_env import EnvpoolVectorEnv as EnvpoolVectorEnv

__version__: str

__all__ = [
    "EnvpoolVectorEnv",
    "make_envpool_env",
]
