"""The public names of ``vecrl`` (its ``__init__.py`` imports them on first use)."""

from vecrl.arrays import (
    array_type as array_type,
)
from vecrl.arrays import (
    convert_from_torch as convert_from_torch,
)
from vecrl.arrays import (
    convert_to_numpy as convert_to_numpy,
)
from vecrl.arrays import (
    convert_to_torch as convert_to_torch,
)
from vecrl.arrays import (
    convert_to_torch_bool as convert_to_torch_bool,
)
from vecrl.arrays import (
    is_jax_array as is_jax_array,
)
from vecrl.arrays import (
    reset_tensors as reset_tensors,
)
from vecrl.backend import Backend as Backend
from vecrl.base_vector_env import BaseVectorEnv as BaseVectorEnv
from vecrl.checks import SubEnvError as SubEnvError
from vecrl.contract import Capabilities as Capabilities
from vecrl.contract import EpisodeOptions as EpisodeOptions
from vecrl.env_names import check_env_name as check_env_name
from vecrl.env_names import split_env_name as split_env_name
from vecrl.episode_vector_env import EpisodeVectorEnv as EpisodeVectorEnv
from vecrl.errors import (
    UnknownEnvError as UnknownEnvError,
)
from vecrl.errors import (
    UnknownKeywordError as UnknownKeywordError,
)
from vecrl.errors import (
    VecrlError as VecrlError,
)
from vecrl.goal import GoalEnvWrapper as GoalEnvWrapper
from vecrl.hookspecs import hookimpl as hookimpl
from vecrl.host_vector_env import HostVectorEnv as HostVectorEnv
from vecrl.make import make_vector_env as make_vector_env
from vecrl.registry import (
    BackendRegistration as BackendRegistration,
)
from vecrl.registry import (
    backend_distribution as backend_distribution,
)
from vecrl.registry import (
    backend_prefixes as backend_prefixes,
)
from vecrl.registry import (
    get_backend as get_backend,
)
from vecrl.registry import (
    list_backends as list_backends,
)
from vecrl.registry import (
    register_backend as register_backend,
)
from vecrl.registry import (
    register_plugin as register_plugin,
)
from vecrl.registry import (
    unregister_plugin as unregister_plugin,
)
from vecrl.rendering import NoFrames as NoFrames
from vecrl.torch_wrapper import TorchWrapper as TorchWrapper

__version__: str

__all__ = [
    "Backend",
    "BackendRegistration",
    "BaseVectorEnv",
    "Capabilities",
    "EpisodeOptions",
    "EpisodeVectorEnv",
    "GoalEnvWrapper",
    "HostVectorEnv",
    "NoFrames",
    "SubEnvError",
    "TorchWrapper",
    "UnknownEnvError",
    "UnknownKeywordError",
    "VecrlError",
    "array_type",
    "backend_distribution",
    "backend_prefixes",
    "check_env_name",
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
