"""vecrl-gym: the ``gym`` backend of vecrl, gymnasium environments batched (same-step autoreset by default).

gymnasium and torch are imported on first use of these names, not by ``import vecrl_gym`` (nor by listing
the backends).

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)
    >>> obs, info = env.reset(seed=0)
    >>> tuple(obs.shape)
    (8, 4)
"""

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_gym.make import make_gym_env, make_gym_vector_env
    from vecrl_gym.process_vector_env import ProcessVectorEnv
    from vecrl_gym.sync_vector_env import SyncVectorEnv

__version__ = "0.1.0"

__all__ = ["ProcessVectorEnv", "SyncVectorEnv", "make_gym_env", "make_gym_vector_env"]

_LAZY = {
    "ProcessVectorEnv": "vecrl_gym.process_vector_env",
    "SyncVectorEnv": "vecrl_gym.sync_vector_env",
    "make_gym_env": "vecrl_gym.make",
    "make_gym_vector_env": "vecrl_gym.make",
}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
