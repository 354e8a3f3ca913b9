"""The public names of ``vecrl_jax`` (its ``__init__.py`` imports them on first use)."""

from vecrl_jax.brax_style import BraxStyleEnv as BraxStyleEnv
from vecrl_jax.make import make_jax_vector_env as make_jax_vector_env
from vecrl_jax.protocol import JaxEnv as JaxEnv
from vecrl_jax.protocol import Outcome as Outcome
from vecrl_jax.vector_env import JaxVectorEnv as JaxVectorEnv

__version__: str

__all__ = [
    "BraxStyleEnv",
    "JaxEnv",
    "JaxVectorEnv",
    "Outcome",
    "make_jax_vector_env",
]
