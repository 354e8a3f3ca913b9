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
from typing import Any

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

_public, __dir__, __all__ = attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    """A public name, imported on first use; or a submodule not imported yet (``vecrl.compat``), as the
    eager ``import vecrl`` of earlier versions made them all available."""
    try:
        return _public(name)
    except AttributeError:
        if name.startswith("__") or importlib.util.find_spec(f"vecrl.{name}") is None:
            raise
        return importlib.import_module(f"vecrl.{name}")
