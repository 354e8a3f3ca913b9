"""The public names of ``vecrl_gym`` (its ``__init__.py`` imports them on first use)."""

from vecrl_gym.gym_vector_env import GYM_DEFAULTS as GYM_DEFAULTS
from vecrl_gym.gym_vector_env import GymOptions as GymOptions
from vecrl_gym.make import make_gym_env as make_gym_env
from vecrl_gym.make import make_gym_vector_env as make_gym_vector_env
from vecrl_gym.process_vector_env import ProcessVectorEnv as ProcessVectorEnv
from vecrl_gym.sync_vector_env import SyncVectorEnv as SyncVectorEnv

__version__: str

__all__ = [
    "GYM_DEFAULTS",
    "GymOptions",
    "ProcessVectorEnv",
    "SyncVectorEnv",
    "make_gym_env",
    "make_gym_vector_env",
]
