"""The one hook a vecrl backend plugin implements.

A plugin is a module (or any object) with a ``vecrl_backends`` function marked ``@vecrl.hookimpl``,
published under the ``vecrl`` entry-point group with the entry-point name equal to the prefix it serves::

    # pyproject.toml of vecrl-toy
    [project.entry-points.vecrl]
    toy = "vecrl_toy"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from vecrl.backend import Backend
    from vecrl.subcommand import Command

PROJECT_NAME = "vecrl"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def vecrl_backends() -> list[Backend]:  # type: ignore[empty-body]
    """Return the backends this plugin provides, as a list of ``vecrl.Backend``.

    Called whenever vecrl looks a backend up or lists them, after the plugin is loaded. It must be
    cheap: import heavy libraries (jax, brax, simulators) inside ``Backend.make``, never here or at the
    plugin's import time. Each backend's prefix must be unique across all installed plugins.

    Examples:
        >>> @hookimpl
        ... def vecrl_backends():
        ...     return [Backend(prefix="toy", make=make_toy_env)]  # doctest: +SKIP
    """


@hookspec
def vecrl_commands() -> list[Command]:  # type: ignore[empty-body]
    """Return extra ``vecrl`` subcommands, as a list of ``vecrl.command.Command`` (``vecrl.subcommand.Command``).

    Loaded only by the ``vecrl`` command, from the ``vecrl.commands`` entry-point group (so a package
    that adds commands is not mistaken for a backend). vecrl-evaluate adds ``vecrl evaluate`` this way.
    """


def serving(*backends: Backend) -> Callable[[], list[Backend]]:
    """The ``vecrl_backends`` hook of a plugin module that serves ``backends``: write
    ``vecrl_backends = serving(BACKEND)`` in it.

    Examples:
        >>> from vecrl.backend import Backend
        >>> vecrl_backends = serving(Backend("toy", "vecrl_toy.make:make_toy_env"))
        >>> [backend.prefix for backend in vecrl_backends()]
        ['toy']
    """

    @hookimpl
    def vecrl_backends() -> list[Backend]:
        return list(backends)

    return vecrl_backends
