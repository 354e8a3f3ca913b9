"""Which envs of a test's cases this row can make: those whose backend package is installed."""

from __future__ import annotations

import importlib.util
from typing import Any


def installed(cases: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``(env name, keywords)`` cases whose backend (``vecrl_PREFIX``) is installed here."""
    return [case for case in cases if importlib.util.find_spec("vecrl_" + case[0].split("::")[0]) is not None]
