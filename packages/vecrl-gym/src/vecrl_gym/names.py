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


#: The packages that register envs in gymnasium when imported, by the start of the ids they register.
REGISTERED_ON_IMPORT = {
    "gymnasium_robotics": (
        "Fetch",
        "HandManipulate",
        "HandReach",
        "PointMaze",
        "AntMaze",
        "AdroitHand",
        "FrankaKitchen",
    ),
    "ale_py": ("ALE/",),
    "minigrid": ("MiniGrid-", "BabyAI-"),
    "shimmy": ("dm_control/", "dm_control_suite/"),
}


def unknown_gym_id(env_id: str) -> UnknownEnvError:
    """The error for an id gymnasium does not register: the package that registers it on import where it is
    one of ``REGISTERED_ON_IMPORT``'s, else the closest id gymnasium has, and how to list them.

    Examples:
        >>> print(unknown_gym_id("CartPol-v1"))  # doctest: +ELLIPSIS
        gymnasium has no environment 'CartPol-v1'. Did you mean 'CartPole-v1'? List them with: ...
        >>> print(unknown_gym_id("FetchReach-v4"))  # doctest: +ELLIPSIS
        gymnasium has no environment 'FetchReach-v4' registered: the package gymnasium_robotics registers it ...
    """
    for package, starts in REGISTERED_ON_IMPORT.items():
        if env_id.startswith(starts):
            return UnknownEnvError(
                f"gymnasium has no environment {env_id!r} registered: the package {package} registers it when"
                f" imported (pip install {package.replace('_', '-')}). Import {package} before making it, or"
                f" name it {package}:{env_id} (gym::{package}:{env_id}), which imports {package} first."
            )
    return UnknownEnvError(
        f"gymnasium has no environment {env_id!r}.{did_you_mean(env_id, list(gymnasium.registry))} List them"
        ' with: python -c "import gymnasium; gymnasium.pprint_registry()"'
    )
