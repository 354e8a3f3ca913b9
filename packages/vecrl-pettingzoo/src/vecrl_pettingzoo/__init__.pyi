"""The public names of ``vecrl_pettingzoo`` (its ``__init__.py`` imports them on first use)."""

from vecrl_pettingzoo.make import make_pettingzoo_vector_env as make_pettingzoo_vector_env
from vecrl_pettingzoo.vector_env import PettingZooVectorEnv as PettingZooVectorEnv

__version__: str

__all__ = [
    "PettingZooVectorEnv",
    "make_pettingzoo_vector_env",
]
