"""Public names of a package imported on first use, so that importing the package stays cheap.

A backend package (vecrl-brax, vecrl-envpool, vecrl-playground) must not import jax, brax or envpool when
its plugin is discovered. Its public names are written once, in its ``__init__.pyi`` (``from MODULE import
NAME as NAME`` lines and ``__all__``, which type checkers and the API reference read), and its
``__init__.py`` makes them lazy from there (the layout of Scientific Python's SPEC 1)::

    __getattr__, __dir__, __all__ = attach_stub(__name__, __file__)

Examples:
    >>> namespace = {"__name__": "demo"}
    >>> getattr_, dir_ = lazy_attributes(namespace, {"OrderedDict": "collections"})
    >>> getattr_("OrderedDict").__name__, dir_()
    ('OrderedDict', ['OrderedDict', '__name__'])
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def lazy_attributes(
    namespace: dict[str, Any], lazy: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of the module whose ``globals()`` is ``namespace``: a name of
    ``lazy`` is imported from its module on first use (and kept in ``namespace``); any other is an
    AttributeError, as for a plain module."""

    def __getattr__(name: str) -> Any:
        if name in lazy:
            value = getattr(importlib.import_module(lazy[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *lazy})

    return __getattr__, __dir__


def attach_stub(
    module_name: str, module_file: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of the package ``module_name`` (its ``__init__.py`` is
    ``module_file``), read from the ``__init__.pyi`` beside it: each name of its ``__all__`` is imported on
    first use from the module its stub imports it from."""
    stub = Path(module_file).with_suffix(".pyi")
    lazy: dict[str, str] = {}
    public: list[str] = []
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            lazy.update({alias.asname or alias.name: node.module for alias in node.names})
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            public = list(ast.literal_eval(node.value))
    missing = sorted(set(public) - set(lazy))
    if missing:
        raise ImportError(f"{stub} lists {missing} in __all__ but imports them from no module")
    getattr_, dir_ = lazy_attributes(vars(sys.modules[module_name]), {name: lazy[name] for name in public})
    return getattr_, dir_, public
