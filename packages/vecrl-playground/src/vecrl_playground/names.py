"""MuJoCo Playground's env names, checked at once: read from its source, without importing it (seconds).

Examples:
    >>> check_playground_name("CartpoleBalance")
"""

from __future__ import annotations

from vecrl import checks

#: The modules whose ``_envs`` make Playground's registry (``registry.ALL_ENVS``).
SUITES = ("dm_control_suite", "locomotion", "manipulation")


def check_playground_name(name: str) -> None:
    """``vecrl_playground.batch.checked_env_name``'s error if Playground's suites, read from their source, lack
    ``name``; nothing where the source does not say (Playground's own check answers then)."""
    suites = [names_in_suite(suite) for suite in SUITES]
    if all(suite is not None for suite in suites):
        checks.checked_env_name(name, [n for suite in suites for n in suite or ()], "MuJoCo Playground")


def names_in_suite(suite: str) -> list[str] | None:
    return checks.names_in_source(f"mujoco_playground/_src/{suite}/__init__.py", "_envs")
