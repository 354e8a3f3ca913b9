"""brax's env names, checked at once: read from brax's source, without importing brax (seconds, with jax).

Examples:
    >>> check_brax_name("ant")
"""

from __future__ import annotations

from vecrl.checks import did_you_mean, names_in_source
from vecrl.errors import UnknownEnvError

#: The prefix of brax.v1's env names (``brax::old::ant``).
OLD_PREFIX = "old::"


def check_brax_name(name: str) -> None:
    """An UnknownEnvError (``unknown_brax_name``'s) if brax's registry, read from its source, lacks ``name``
    (``old::NAME``: brax.v1's); nothing where the source does not say (brax's own check answers then)."""
    old = name.startswith(OLD_PREFIX)
    own = name[len(OLD_PREFIX) :] if old else name
    known = names_in_source("brax/v1/envs/__init__.py" if old else "brax/envs/__init__.py", "_envs")
    if known is not None and own not in known:
        raise unknown_brax_name(own, name, known)


def unknown_brax_name(name: str, asked: str, known: list[str]) -> UnknownEnvError:
    """The error for ``asked`` (``name`` without its ``old::``), which brax does not register: its envs and a
    close match."""
    prefix = OLD_PREFIX if asked.startswith(OLD_PREFIX) else ""
    known = sorted(known)
    return UnknownEnvError(
        f"brax has no environment {asked!r}.{did_you_mean(name, known, prefix)} Its environments:"
        f" {', '.join(prefix + k for k in known)}. (An env you registered yourself with"
        " brax.envs.register_environment works too.)"
    )
