"""The public names of ``vecrl_brax`` (its ``__init__.py`` imports them on first use)."""

from vecrl_brax.make import make_brax_env as make_brax_env
from vecrl_brax.vector_env import VectorEnvFromBrax as VectorEnvFromBrax

__version__: str

__all__ = [
    "VectorEnvFromBrax",
    "make_brax_env",
]
