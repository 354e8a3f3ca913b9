"""gymnax's env names, checked at once: read from its source, without importing it (and jax).

Examples:
    >>> check_gymnax_name("CartPole-v1")
"""

from __future__ import annotations

from vecrl import checks


def check_gymnax_name(name: str) -> None:
    """``vecrl_gymnax.batch.checked_env_name``'s error if gymnax's built-in envs, read from its source, lack
    ``name``; nothing where the source does not say (gymnax's own check answers then)."""
    known = checks.names_in_source("gymnax/registration.py", "_builtins")
    if known is not None:
        checks.checked_env_name(name, known, "gymnax")
