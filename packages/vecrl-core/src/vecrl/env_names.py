"""Env names, ``"prefix::name"``: split into the backend's prefix and its own name, and checked at once.

Importing this module imports neither torch nor any backend's library: the ``vecrl`` command checks the
names it is given with it before it imports them.

Examples:
    >>> split_env_name("brax::ant")
    ('brax', 'ant')
"""

from __future__ import annotations

from vecrl.registry import WELL_KNOWN_BACKENDS, backend_prefixes, get_backend

#: The backend of a name without ``prefix::``.
DEFAULT_PREFIX = "gym"


def split_env_name(env_name: str) -> tuple[str, str]:
    """Split ``"prefix::name"`` on the first ``::``; a name without ``::`` belongs to the ``gym`` backend.

    ``"gym:CartPole-v1"`` (one colon after a backend's prefix) is refused with a hint that ``::`` was
    meant; any other ``"module:EnvId"`` is gymnasium's own form and goes to the gym backend.

    Examples:
        >>> split_env_name("brax::old::ant"), split_env_name("CartPole-v1")
        (('brax', 'old::ant'), ('gym', 'CartPole-v1'))
    """
    if not isinstance(env_name, str):
        raise TypeError(
            f"env_name must be a str such as 'gym::CartPole-v1', got {type(env_name).__qualname__}."
        )
    prefix, separator, name = env_name.partition("::")
    if not separator:
        prefix, name = DEFAULT_PREFIX, env_name
        module, colon, rest = env_name.partition(":")
        if colon and module in set(WELL_KNOWN_BACKENDS) | set(backend_prefixes()):
            raise ValueError(
                f"env_name {env_name!r} has one colon after the backend prefix {module!r}; a prefix is"
                f" separated by two: did you mean {module + '::' + rest!r}?"
            )
    if not prefix or not name:
        raise ValueError(
            f"env_name {env_name!r} is incomplete: expected 'prefix::name' (e.g. 'gym::CartPole-v1',"
            " 'brax::ant') or a plain gymnasium id (e.g. 'CartPole-v1')."
        )
    return prefix, name


def check_env_name(env_name: str) -> str:
    """``env_name`` if a backend serves its prefix and, where that backend can tell at once (its
    ``Backend.check_name``), has the env; the error ``make_vector_env`` would raise otherwise, without
    making anything.

    Examples:
        >>> check_env_name("gym::CartPol-v1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownEnvError: gymnasium has no environment 'CartPol-v1'. Did you mean 'CartPole-v1'? ...
    """
    prefix, name = split_env_name(env_name)
    get_backend(prefix).check_env_name(name)
    return env_name
