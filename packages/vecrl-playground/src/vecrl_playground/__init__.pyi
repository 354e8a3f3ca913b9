"""The public names of ``vecrl_playground`` (its ``__init__.py`` imports them on first use)."""

from vecrl_playground.make import make_playground_env as make_playground_env
from vecrl_playground.vector_env import PlaygroundVectorEnv as PlaygroundVectorEnv

__version__: str

__all__ = [
    "PlaygroundVectorEnv",
    "make_playground_env",
]
