"""vecrl-gym: the ``gym`` backend of vecrl, gymnasium environments batched (same-step autoreset by default).

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 4)
"""

from vecrl_gym.make import make_gym_env, make_gym_vector_env
from vecrl_gym.process_vector_env import ProcessVectorEnv
from vecrl_gym.sync_vector_env import SyncVectorEnv

__version__ = "0.1.0"

__all__ = ["ProcessVectorEnv", "SyncVectorEnv", "make_gym_env", "make_gym_vector_env"]
