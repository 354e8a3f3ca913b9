"""The public names of ``vecrl_gymnax`` (its ``__init__.py`` imports them on first use)."""

from vecrl_gymnax.make import make_gymnax_env as make_gymnax_env
from vecrl_gymnax.vector_env import GymnaxVectorEnv as GymnaxVectorEnv

__version__: str

__all__ = [
    "GymnaxVectorEnv",
    "make_gymnax_env",
]
