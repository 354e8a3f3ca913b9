"""EvoTorch imported for vecrl's commands without jax and brax.

``import evotorch`` imports ``evotorch.neuroevolution.net.vecrl``, which imports jax and brax (and with brax
MuJoCo's MJX, and warp's warnings) wherever they are installed, for EvoTorch's own ``VecGymNE``. vecrl's
commands never use that module: a brax env is made by vecrl-brax, which imports brax itself when the env is
made. So the commands import EvoTorch with those two hidden, and a gym run loads neither. A script importing
``vecrl_evotorch`` gets EvoTorch as EvoTorch imports itself.

Examples:
    >>> import_evotorch_without_jax()
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: The packages EvoTorch's import loads only for its own VecGymNE (brax brings MuJoCo's MJX).
HIDDEN = ("jax", "brax")


class _Hidden(importlib.abc.MetaPathFinder):
    """A finder that reports ``names`` (and their submodules) as not installed."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden from EvoTorch)", name=fullname)
        return None


def import_evotorch_without_jax() -> None:
    """Import EvoTorch with jax and brax hidden from it, unless it is imported already (or they are: then
    EvoTorch's import costs nothing more)."""
    if "evotorch" in sys.modules or any(name in sys.modules for name in HIDDEN):
        return
    finder = _Hidden(HIDDEN)
    sys.meta_path.insert(0, finder)
    try:
        import evotorch  # noqa: F401  (imported here, with the finder in place, for the command's later imports)
    finally:
        sys.meta_path.remove(finder)
