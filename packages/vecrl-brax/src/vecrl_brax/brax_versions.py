"""Which brax ``create`` serves a name: ``brax.envs.create``, or ``brax.v1.envs.create`` for ``old::NAME``."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from vecrl_brax.names import OLD_PREFIX, unknown_brax_name
from vecrl_brax.quiet_import import without_warp_notices

#: brax.v1 (the pre-0.9 envs kept for reproducibility) shipped in these brax releases; 0.12.4 removed it
#: (0.12.2's wheel on PyPI is empty). Checked against the wheels on PyPI.
BRAX_V1_RELEASES = ">=0.9.0,<=0.12.3 (but not 0.12.2)"


def resolve_create(env_name: str) -> tuple[Callable[..., Any], str]:
    """The brax ``create`` function serving ``env_name``, and the name to give it.

    ``"old::ant"`` uses ``brax.v1.envs.create("ant", ...)``; ``"ant"`` uses ``brax.envs.create("ant", ...)``.

    Examples:
        >>> resolve_create("ant")[1]  # doctest: +SKIP
        'ant'
    """
    if not isinstance(env_name, str) or not env_name:
        raise TypeError(f"env_name must be a non-empty str such as 'ant' or 'old::ant', got {env_name!r}.")
    if not env_name.startswith(OLD_PREFIX):
        with without_warp_notices():
            import brax.envs

        return brax.envs.create, _known_name(brax.envs, env_name, env_name)
    try:
        with without_warp_notices():
            import brax.v1.envs
    except ImportError as error:
        raise ImportError(
            f"{env_name!r} asks for brax.v1 (the 'old::' envs), but the installed brax {_brax_version()} has no"
            f" brax.v1: brax removed it in 0.12.4. It ships in brax {BRAX_V1_RELEASES}; install one of those,"
            f" e.g. pip install 'brax==0.12.3', or drop the 'old::' prefix to use the current envs."
        ) from error
    return brax.v1.envs.create, _known_name(brax.v1.envs, env_name[len(OLD_PREFIX) :], env_name)


def env_keywords(create: Callable[..., Any], name: str) -> list[str]:
    """The keywords ``create(name, ...)`` takes from a user: ``create``'s own (``episode_length``,
    ``action_repeat``) and those of the env class's constructors (``backend``, ...).

    Examples:
        >>> create, name = resolve_create("inverted_pendulum")
        >>> "backend" in env_keywords(create, name), "batch_size" in env_keywords(create, name)
        (True, False)
    """
    keywords = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    own = {"self", "env_name", "batch_size", "auto_reset", "sys"}  # sys: the model the env class loads
    names = {p.name for p in inspect.signature(create).parameters.values() if p.kind in keywords} - own
    env_class = getattr(sys.modules[create.__module__], "_envs", {}).get(name)
    for cls in inspect.getmro(env_class) if inspect.isclass(env_class) else ():
        init = cls.__dict__.get("__init__")
        if init is not None:
            names |= {p.name for p in inspect.signature(init).parameters.values() if p.kind in keywords} - own
    return sorted(names)


def _known_name(envs_module: Any, name: str, asked: str) -> str:
    """``name`` if ``envs_module`` registers it; else ``unknown_brax_name``'s error."""
    registered = getattr(envs_module, "_envs", None)
    if not isinstance(registered, dict) or name in registered:
        return name
    raise unknown_brax_name(name, asked, list(registered))


def _brax_version() -> str:
    try:
        return version("brax")
    except PackageNotFoundError:
        return "(unknown version)"
