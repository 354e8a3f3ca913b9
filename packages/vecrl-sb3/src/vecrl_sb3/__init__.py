"""vecrl-sb3: any vecrl vector env as a stable-baselines3 ``VecEnv``.

Examples:
    >>> import vecrl
    >>> from vecrl_sb3 import SB3VecEnv
    >>> env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=8))
    >>> env.num_envs
    8
"""

from vecrl_sb3.vec_env import SB3VecEnv

__version__ = "0.1.0"

__all__ = ["SB3VecEnv"]
