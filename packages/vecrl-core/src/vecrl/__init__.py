"""vecrl: batched reinforcement-learning environments and policies, speaking torch.

Example:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
"""

from vecrl.arrays import (
    array_type,
    convert_from_torch,
    convert_to_numpy,
    convert_to_torch,
    convert_to_torch_bool,
    is_jax_array,
    reset_tensors,
)
from vecrl.backend import Backend
from vecrl.base_vector_env import BaseVectorEnv
from vecrl.checks import SubEnvError
from vecrl.goal import GoalEnvWrapper
from vecrl.hookspecs import hookimpl
from vecrl.make import make_vector_env, split_env_name
from vecrl.registry import (
    BackendRegistration,
    backend_distribution,
    backend_prefixes,
    get_backend,
    list_backends,
    register_backend,
    register_plugin,
    unregister_plugin,
)
from vecrl.torch_wrapper import TorchWrapper

__version__ = "0.1.0"

__all__ = [
    "Backend",
    "BackendRegistration",
    "BaseVectorEnv",
    "GoalEnvWrapper",
    "SubEnvError",
    "TorchWrapper",
    "array_type",
    "backend_distribution",
    "backend_prefixes",
    "convert_from_torch",
    "convert_to_numpy",
    "convert_to_torch",
    "convert_to_torch_bool",
    "get_backend",
    "hookimpl",
    "is_jax_array",
    "list_backends",
    "make_vector_env",
    "register_backend",
    "register_plugin",
    "reset_tensors",
    "split_env_name",
    "unregister_plugin",
]
