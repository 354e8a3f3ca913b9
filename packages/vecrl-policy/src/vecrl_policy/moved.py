"""The old paths of what left ``vecrl_policy``: the population engine went to ``vecrl_evaluate`` and
``RunFolder`` to ``vecrl_evotorch``. For one release, ``from vecrl_policy import evaluate`` and
``import vecrl_policy.options`` still give the moved objects (the same ones, not copies) with a
DeprecationWarning naming the new path; the release after deletes this module and its lines in
``__init__.py``.

Examples:
    >>> MODULES["vecrl_policy.options"], NAMES["evaluate"]
    ('vecrl_evaluate.options', 'vecrl_evaluate')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

ENGINE = [
    "cli",
    "evaluate_command",
    "evaluate_workers",
    "evaluation",
    "executor",
    "fused",
    "measures",
    "options",
    "plan",
    "randomness",
    "reductions",
    "rollout",
    "row_loop",
    "runners",
    "shaping",
    "threads",
]
#: old module -> its new home
MODULES = {
    **{f"vecrl_policy.{name}": f"vecrl_evaluate.{name}" for name in ENGINE},
    "vecrl_policy.runs": "vecrl_evotorch.runs",
}
#: old package-level name -> the package that exports it now
NAMES = {
    **dict.fromkeys(
        ("evaluate", "EvaluateOptions", "EvaluationResult", "Measure", "WorkerError"), "vecrl_evaluate"
    ),
    "RunFolder": "vecrl_evotorch",
}


def _warn(old: str, new: str) -> None:
    package = new.split(".")[0].replace("_", "-")
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path goes in the next release; {new} comes with the"
        f" package {package})",
        DeprecationWarning,
        stacklevel=3,
    )


class _Redirect(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module that replaced it."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MODULES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        _warn(module.__name__, MODULES[module.__name__])
        # the import system returns what sys.modules holds once this returns: the moved module itself
        sys.modules[module.__name__] = importlib.import_module(MODULES[module.__name__])


def install() -> None:
    """Let the old module paths import (once per process)."""
    if not any(isinstance(finder, _Redirect) for finder in sys.meta_path):
        sys.meta_path.append(_Redirect())


def with_moved_names(namespace: dict[str, Any], getattr_: Callable[[str], Any]) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package whose ``globals()`` is ``namespace``, answering the moved names too:
    the first use warns and keeps the object there (``from vecrl_policy import evaluate`` asks twice)."""

    def __getattr__(name: str) -> Any:
        if name in NAMES:
            _warn(f"vecrl_policy.{name}", f"{NAMES[name]}.{name}")
            namespace[name] = getattr(importlib.import_module(NAMES[name]), name)
            return namespace[name]
        return getattr_(name)

    return __getattr__
