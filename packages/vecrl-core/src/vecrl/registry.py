"""The backend registry: one pluggy PluginManager, entry points loaded lazily by name.

Asking for ``gym::X`` loads only the entry point named ``gym``; listing backends loads them all.
Set ``VECRL_DISABLE_PLUGIN_AUTOLOAD=1`` to load no entry point at all (only in-process registrations).
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pluggy

from vecrl import hookspecs
from vecrl.backend import Backend
from vecrl.checks import did_you_mean
from vecrl.hookspecs import hookimpl

ENTRY_POINT_GROUP = "vecrl"
DISABLE_AUTOLOAD_ENV = "VECRL_DISABLE_PLUGIN_AUTOLOAD"

#: Backends we publish ourselves: prefix -> the distribution that provides it.
WELL_KNOWN_BACKENDS: dict[str, str] = {
    "gym": "vecrl-gym",
    "brax": "vecrl-brax",
    "envpool": "vecrl-envpool",
    "playground": "vecrl-playground",
    "gymnax": "vecrl-gymnax",
    "pettingzoo": "vecrl-pettingzoo",
}


def install_hint(distribution: str) -> str:
    """The command that installs one of our packages (from the vecrl repository, through its constraints).

    Examples:
        >>> install_hint("vecrl-gym")
        'pip install -c constraints.txt packages/vecrl-gym (in the vecrl repository)'
    """
    return f"pip install -c constraints.txt packages/{distribution} (in the vecrl repository)"


_pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
_pm.add_hookspecs(hookspecs)
_loaded_entry_points: set[str] = set()


@contextmanager
def isolated_registry() -> Iterator[None]:
    """Inside the block the registry is empty and entry points are not loaded; on exit it is restored.

    For tests that register in-process backends, whatever plugins earlier tests loaded.

    Examples:
        >>> with isolated_registry():
        ...     backend_prefixes()
        []
    """
    saved = [(plugin, _pm.get_name(plugin)) for plugin in _pm.get_plugins()]
    saved_loaded = set(_loaded_entry_points)
    saved_env = os.environ.get(DISABLE_AUTOLOAD_ENV)
    for plugin, _ in saved:
        _pm.unregister(plugin)
    os.environ[DISABLE_AUTOLOAD_ENV] = "1"
    try:
        yield
    finally:
        for plugin in _pm.get_plugins():
            _pm.unregister(plugin)
        for plugin, name in saved:
            _pm.register(plugin, name=name)
        _loaded_entry_points.clear()
        _loaded_entry_points.update(saved_loaded)
        if saved_env is None:
            os.environ.pop(DISABLE_AUTOLOAD_ENV, None)
        else:
            os.environ[DISABLE_AUTOLOAD_ENV] = saved_env


def autoload_enabled() -> bool:
    """False when ``VECRL_DISABLE_PLUGIN_AUTOLOAD`` is set to a non-empty value."""
    return not os.environ.get(DISABLE_AUTOLOAD_ENV)


@dataclass
class BackendRegistration:
    """The handle ``register_backend`` returns; ``unregister()`` (or leaving a ``with`` block) undoes it.

    Examples:
        >>> with register_backend(Backend("toy", make=lambda name, **kw: None)):
        ...     "toy" in backend_prefixes()
        True
    """

    backend: Backend
    _plugin: Any = field(repr=False)

    def unregister(self) -> None:
        """Remove the backend again; calling it twice is harmless."""
        if _pm.is_registered(self._plugin):
            _pm.unregister(self._plugin)

    def __enter__(self) -> BackendRegistration:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.unregister()


class _InProcessPlugin:
    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    @hookimpl
    def vecrl_backends(self) -> list[Backend]:
        return [self.backend]


def register_backend(backend: Backend) -> BackendRegistration:
    """Register ``backend`` in this process (for notebooks and tests), without an entry point.

    Raises ValueError, and registers nothing, when its prefix is already taken.

    Examples:
        >>> registration = register_backend(Backend("toy", make=lambda name, **kw: None))
        >>> registration.unregister()
    """
    if not isinstance(backend, Backend):
        raise TypeError(f"register_backend() expects a vecrl.Backend, got {type(backend).__qualname__}.")
    plugin = _InProcessPlugin(backend)
    register_plugin(plugin, name=f"in-process:{backend.prefix}:{id(plugin)}")
    return BackendRegistration(backend, plugin)


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register a plugin object (anything with a ``@vecrl.hookimpl vecrl_backends``) in this process.

    Returns the name it is registered under; ``unregister_plugin`` undoes it. Raises ValueError, and
    registers nothing, when one of its prefixes is already taken.
    """
    for backend in _call_plugin(plugin):
        owners = _providers(backend.prefix)
        if owners:
            raise ValueError(
                f"Cannot register backend {backend.prefix!r}: that prefix is already provided by"
                f" {' and '.join(owners)}. Unregister it first or choose another prefix."
            )
    registered = _pm.register(plugin, name=name)
    if registered is None:
        raise ValueError(f"The plugin {plugin!r} (name {name!r}) is blocked from registering.")
    return registered


def unregister_plugin(plugin: object) -> None:
    """Remove a plugin registered with ``register_plugin``."""
    _pm.unregister(plugin)


def get_backend(prefix: str) -> Backend:
    """The backend serving ``prefix``, loading only the entry point of that name (an installed plugin's entry
    point is named after the prefix it serves: one listing another prefix is refused, whatever was loaded
    before). A plugin that fails to load or to list its backends is left out (``vecrl backends`` names it),
    unless it is the one serving ``prefix``, whose error is raised.

    Raises ValueError naming the known prefixes, a close match, and for ``gym`` / ``brax`` the package
    to install, when no backend serves ``prefix``.

    Examples:
        >>> get_backend("gym").prefix  # with vecrl-gym installed  # doctest: +SKIP
        'gym'
    """
    _load_entry_point(prefix)
    broken: dict[str, Exception] = {}
    backends = _collect_with_plugins(broken)
    if prefix in backends:
        return backends[prefix][0]
    if prefix in broken:  # its plugin's own failure, or two plugins claiming it
        raise broken[prefix]
    _load_entry_points(broken)  # (an unknown prefix: list what serves which, and what does not load)
    backends = _collect_with_plugins(broken)
    raise ValueError(_unknown_prefix_message(prefix, sorted(backends), broken))


def list_backends() -> list[Backend]:
    """Every backend available, loading all entry points of the ``vecrl`` group; sorted by prefix.

    A plugin that fails to load or to list its backends, or that claims a prefix another serves, raises
    its error (naming the plugin); ``installed_backends`` lists around it instead.
    """
    backends, broken = installed_backends()
    if broken:
        raise next(iter(broken.values()))  # chained to the plugin's own error
    return backends


def installed_backends() -> tuple[list[Backend], dict[str, Exception]]:
    """Every backend that loads (sorted by prefix), and what failed, each with its error naming the plugin:
    an entry point that fails to load, or whose ``vecrl_backends()`` raises, returns something else than
    Backends or lists a prefix other than the entry point's name (by that name; an in-process plugin by its
    description), and a prefix two plugins claim (by the prefix, served by neither).

    Examples:
        >>> backends, broken = installed_backends()  # doctest: +SKIP
        >>> broken  # a plugin whose import raised  # doctest: +SKIP
        {'toy': ImportError("The vecrl plugin 'toy' from vecrl-toy 0.1.0 (vecrl_toy) failed to load: ...")}
    """
    broken: dict[str, Exception] = {}
    _load_entry_points(broken)
    found = _collect_with_plugins(broken)
    return [backend for _, (backend, _) in sorted(found.items())], broken


def backend_prefixes() -> list[str]:
    """The prefixes available, without importing any plugin that is not loaded yet."""
    names = set(_entry_point_names())
    names.update(
        backend.prefix for plugin_backends in _pm.hook.vecrl_backends() for backend in plugin_backends
    )
    return sorted(names)


def backend_distribution(prefix: str) -> tuple[str, str] | None:
    """``(name, version)`` of the installed distribution whose plugin provides ``prefix``; None for
    in-process backends.

    Examples:
        >>> backend_distribution("gym")  # doctest: +SKIP
        ('vecrl-gym', '0.1.0')
    """
    _load_entry_point(prefix)
    providers = _collect_with_plugins({})
    if prefix not in providers:
        raise ValueError(_unknown_prefix_message(prefix, sorted(set(providers) | _entry_point_names())))
    plugin = providers[prefix][1]
    for known, dist in _pm.list_plugin_distinfo():
        if known is plugin:
            return dist.metadata["Name"], dist.version
    return None


def load_command_plugins(group: str) -> tuple[list[Any], list[str]]:
    """Load every entry point of ``group``; return the ``vecrl.command.Command`` objects they provide, and
    one line for each plugin that failed to load or to list its commands (the others still count)."""
    failures: list[str] = []
    if autoload_enabled():
        for ep in importlib.metadata.entry_points(group=group):
            try:
                _pm.load_setuptools_entrypoints(group, name=ep.name)
            except Exception as error:
                failures.append(
                    f"the command plugin {ep.name!r} from {_dist_name(ep)} failed to load: {error}"
                )
    commands: list[Any] = []
    for hookimpl_ in _pm.hook.vecrl_commands.get_hookimpls():
        try:
            commands.extend(hookimpl_.function())  # type: ignore[arg-type]
        except Exception as error:
            failures.append(
                f"the command plugin {hookimpl_.plugin_name!r} failed to list its commands: {error}"
            )
    return commands, failures


def _collect_with_plugins(broken: dict[str, Exception] | None = None) -> dict[str, tuple[Backend, object]]:
    """prefix -> (Backend, the plugin providing it). Without ``broken``, a plugin that fails to list its
    backends and two providers of one prefix are errors; with it, they are kept there instead (by the
    plugin's description, and by the prefix, which then neither serves)."""
    found: dict[str, tuple[Backend, object]] = {}
    claimants: dict[str, list[object]] = {}
    for plugin in _pm.get_plugins():
        try:
            backends = _call_plugin(plugin)
            _check_entry_point_prefixes(plugin, backends)
        except (TypeError, ValueError) as error:
            if broken is None:
                raise
            broken[_entry_point_name(plugin) or _describe_plugin(plugin)] = error
            continue
        for backend in backends:
            claimants.setdefault(backend.prefix, []).append(plugin)
            found.setdefault(backend.prefix, (backend, plugin))
    claimed = {
        prefix: ValueError(
            f"Two plugins claim the backend prefix {prefix!r}: {' and '.join(map(_describe_plugin, plugins))}."
            " Uninstall one of them (pip uninstall ...) or unregister the in-process one."
        )
        for prefix, plugins in claimants.items()
        if len(plugins) > 1
    }
    if claimed and broken is None:
        raise next(iter(claimed.values()))
    if broken is not None:
        broken.update(claimed)
    return {prefix: value for prefix, value in found.items() if prefix not in claimed}


def _call_plugin(plugin: object) -> list[Backend]:
    """The backends ``plugin`` lists; a TypeError naming it where its hook raises (a ValueError for a Backend
    it made that is not valid) or returns something else than Backends."""
    hook = getattr(plugin, "vecrl_backends", None)
    if hook is None:
        return []
    try:
        backends = hook()
    except ValueError as error:  # (vecrl.Backend refusing a prefix or a make)
        raise ValueError(
            f"The vecrl plugin {_describe_plugin(plugin)} lists a bad backend: {error}"
        ) from error
    except Exception as error:
        raise TypeError(
            f"The vecrl plugin {_describe_plugin(plugin)} raised {type(error).__qualname__} in vecrl_backends():"
            f" {error}"
        ) from error
    if not isinstance(backends, (list, tuple)) or not all(isinstance(b, Backend) for b in backends):
        raise TypeError(
            f"The vecrl plugin {_describe_plugin(plugin)} returned {backends!r} from vecrl_backends();"
            " expected a list of vecrl.Backend."
        )
    return list(backends)


def _entry_point_name(plugin: object) -> str | None:
    """The name of the entry point ``plugin`` was loaded from; None for an in-process plugin."""
    if not any(known is plugin for known, _ in _pm.list_plugin_distinfo()):
        return None
    return _pm.get_name(plugin)


def _check_entry_point_prefixes(plugin: object, backends: list[Backend]) -> None:
    """A ValueError where an installed plugin lists a prefix other than its entry point's name: vecrl finds a
    backend by loading the entry point named after its prefix, so such a backend would be found or not (and
    clash with another or not) according to what was loaded before."""
    name = _entry_point_name(plugin)
    wrong = [backend.prefix for backend in backends if name is not None and backend.prefix != name]
    if wrong:
        raise ValueError(
            f"The vecrl plugin {_describe_plugin(plugin)} is installed under the entry point {name!r} but lists"
            f" the backend prefix {wrong[0]!r}: an entry point is named after the prefix it serves (vecrl finds"
            f" a backend by that name). Name the entry point {wrong[0]!r} or the backend's prefix {name!r}."
        )


def _describe_plugin(plugin: object) -> str:
    for known, dist in _pm.list_plugin_distinfo():
        if known is plugin:
            return f"distribution {dist.metadata['Name']} {dist.version}"
    if isinstance(plugin, _InProcessPlugin):
        return "an in-process registration (vecrl.register_backend)"
    return f"the in-process plugin {_pm.get_name(plugin)!r}"


def _entry_points(name: str | None = None) -> list[importlib.metadata.EntryPoint]:
    if not autoload_enabled():
        return []
    selected = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    unique: dict[tuple[str, str], importlib.metadata.EntryPoint] = {}
    for ep in selected:
        if name is None or ep.name == name:
            unique[(ep.name, _dist_name(ep))] = ep
    return list(unique.values())


def _entry_point_names() -> set[str]:
    return {ep.name for ep in _entry_points()}


def _dist_name(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist
    return "an unknown distribution" if dist is None else f"{dist.metadata['Name']} {dist.version}"


def _providers(prefix: str) -> list[str]:
    """Who provides ``prefix`` now: installed distributions with that entry point, and registrations."""
    owners = [f"distribution {_dist_name(ep)}" for ep in _entry_points(prefix)]
    for plugin in _pm.get_plugins():
        description = _describe_plugin(plugin)
        if description not in owners and any(b.prefix == prefix for b in _call_plugin(plugin)):
            owners.append(description)
    return owners


def _load_entry_points(broken: dict[str, Exception]) -> None:
    """Load every entry point not loaded yet; those that fail are kept in ``broken`` (by name)."""
    for name in sorted(_entry_point_names() - _loaded_entry_points):
        try:
            _load_entry_point(name)
        except (ImportError, ValueError) as error:
            broken[name] = error


def _load_entry_point(name: str) -> None:
    """Import and register the entry point called ``name`` (once); two distributions with it is an error."""
    if name in _loaded_entry_points or not autoload_enabled():
        return
    eps = _entry_points(name)
    if len(eps) > 1:
        raise ValueError(
            f"Two installed distributions provide the vecrl backend {name!r}:"
            f" {' and '.join(_dist_name(ep) for ep in eps)}. Uninstall one of them (pip uninstall ...)."
        )
    if eps:
        try:
            _pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=name)
            _pm.check_pending()
        except Exception as error:
            raise ImportError(
                f"The vecrl plugin {name!r} from {_dist_name(eps[0])} ({eps[0].value}) failed to load: {error}"
            ) from error
    _loaded_entry_points.add(name)


def _unknown_prefix_message(
    prefix: str, known: list[str], broken: Mapping[str, Exception] | None = None
) -> str:
    message = f"No vecrl backend serves the prefix {prefix!r}."
    if prefix in WELL_KNOWN_BACKENDS:
        message += (
            f" The {prefix!r} backend is provided by the package {WELL_KNOWN_BACKENDS[prefix]}, which is not"
            f" installed: {install_hint(WELL_KNOWN_BACKENDS[prefix])}."
        )
    message += f" Registered prefixes: {', '.join(known) if known else '(none)'}."
    message += did_you_mean(prefix, known)
    for name, error in sorted((broken or {}).items()):
        cause = error.__cause__ or error
        message += f" (The plugin {name!r} is installed but broken: {type(cause).__name__}: {cause}; see vecrl backends.)"
    if not autoload_enabled():
        message += f" (Entry-point plugins are not loaded because {DISABLE_AUTOLOAD_ENV} is set.)"
    return message
