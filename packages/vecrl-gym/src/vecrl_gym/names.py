"""gymnasium's env ids, checked against its registry with a close match (importing gymnasium, not torch).

Examples:
    >>> check_gym_id("CartPole-v1")
"""

from __future__ import annotations

import gymnasium

from vecrl.checks import did_you_mean
from vecrl.errors import UnknownEnvError


def check_gym_id(env_id: str) -> None:
    """Nothing if gymnasium registers ``env_id`` or it names a module to import first (``"module:Id"``,
    gymnasium's form); else ``unknown_gym_id``'s error."""
    if ":" not in env_id and env_id not in gymnasium.registry:
        raise unknown_gym_id(env_id)


def unknown_gym_id(env_id: str) -> UnknownEnvError:
    """The error for an id gymnasium does not register: the closest it does, and how to list them.

    Examples:
        >>> print(unknown_gym_id("CartPol-v1"))  # doctest: +ELLIPSIS
        gymnasium has no environment 'CartPol-v1'. Did you mean 'CartPole-v1'? List them with: ...
    """
    return UnknownEnvError(
        f"gymnasium has no environment {env_id!r}.{did_you_mean(env_id, list(gymnasium.registry))} List them"
        ' with: python -c "import gymnasium; gymnasium.pprint_registry()"'
    )
