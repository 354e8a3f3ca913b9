"""vecrl: batched reinforcement-learning environments and policies, speaking torch.

Its public names are imported on first use: ``import vecrl`` alone imports neither torch nor gymnasium,
so the ``vecrl`` command answers Ctrl-C (and ``--version``) at once.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)  # doctest: +SKIP
    >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
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
    from vecrl.contract import Capabilities, EpisodeOptions
    from vecrl.episode_vector_env import EpisodeVectorEnv
    from vecrl.errors import UnknownEnvError, UnknownKeywordError, VecrlError
    from vecrl.goal import GoalEnvWrapper
    from vecrl.hookspecs import hookimpl
    from vecrl.host_vector_env import HostVectorEnv
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
    from vecrl.rendering import NoFrames
    from vecrl.torch_wrapper import TorchWrapper

__version__ = "0.1.0"

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

_LAZY = {
    "Backend": "vecrl.backend",
    "BackendRegistration": "vecrl.registry",
    "BaseVectorEnv": "vecrl.base_vector_env",
    "Capabilities": "vecrl.contract",
    "EpisodeOptions": "vecrl.contract",
    "EpisodeVectorEnv": "vecrl.episode_vector_env",
    "GoalEnvWrapper": "vecrl.goal",
    "HostVectorEnv": "vecrl.host_vector_env",
    "NoFrames": "vecrl.rendering",
    "SubEnvError": "vecrl.checks",
    "TorchWrapper": "vecrl.torch_wrapper",
    "UnknownEnvError": "vecrl.errors",
    "UnknownKeywordError": "vecrl.errors",
    "VecrlError": "vecrl.errors",
    "array_type": "vecrl.arrays",
    "backend_distribution": "vecrl.registry",
    "backend_prefixes": "vecrl.registry",
    "convert_from_torch": "vecrl.arrays",
    "convert_to_numpy": "vecrl.arrays",
    "convert_to_torch": "vecrl.arrays",
    "convert_to_torch_bool": "vecrl.arrays",
    "get_backend": "vecrl.registry",
    "hookimpl": "vecrl.hookspecs",
    "is_jax_array": "vecrl.arrays",
    "list_backends": "vecrl.registry",
    "make_vector_env": "vecrl.make",
    "register_backend": "vecrl.registry",
    "register_plugin": "vecrl.registry",
    "reset_tensors": "vecrl.arrays",
    "split_env_name": "vecrl.make",
    "unregister_plugin": "vecrl.registry",
}

_public, __dir__ = lazy_attributes(globals(), _LAZY)


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; or a submodule not imported yet (``vecrl.compat``), as the
    eager ``import vecrl`` of earlier versions made them all available."""
    try:
        return _public(name)
    except AttributeError:
        if name.startswith("__") or importlib.util.find_spec(f"vecrl.{name}") is None:
            raise
        return importlib.import_module(f"vecrl.{name}")
