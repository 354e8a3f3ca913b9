"""Public names of a package imported on first use, so that importing the package stays cheap.

A backend package (vecrl-brax, vecrl-envpool, vecrl-playground) must not import jax, brax or envpool when
its plugin is discovered; its ``__init__`` names its public classes and the modules that define them.

Examples:
    >>> namespace = {"__name__": "demo"}
    >>> getattr_, dir_ = lazy_attributes(namespace, {"OrderedDict": "collections"})
    >>> getattr_("OrderedDict").__name__, dir_()
    ('OrderedDict', ['OrderedDict', '__name__'])
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
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
