"""A run's state saved every generation, so that Ctrl-C or a crash loses at most one generation.

The examples keep what they need to go on (the searcher, the observation statistics, the generation, the
best solution, the histories) in one dict, saved with ``save`` after each generation and read back with
``load`` by ``--resume``. The file is written beside its final name and renamed over it, so an
interruption while saving leaves the previous generation's file whole.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any


def save(state: dict[str, Any], path: str | Path) -> None:
    """Write ``state`` to ``path`` at once (a half-written file never replaces a whole one)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as file:
        pickle.dump(state, file)
    os.replace(partial, path)


def load(path: str | Path) -> dict[str, Any]:
    """The state saved at ``path``; a missing or unreadable file ends the script with one line saying why."""
    try:
        with open(path, "rb") as file:
            return pickle.load(file)
    except FileNotFoundError:
        sys.exit(f"--resume: there is no saved run at {path}; start one without --resume.")
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as error:
        sys.exit(f"--resume: {path} is not a saved run of this example ({type(error).__name__}: {error}).")


def interrupted(path: str | Path, saved: int) -> None:
    """End the script after Ctrl-C, saying what was kept (``saved``: the last generation saved) and how to go
    on (exit status 130, no traceback)."""
    if saved:
        print(
            f"\ninterrupted; generations 1-{saved} are saved in {path}: run again with --resume to go on.",
            file=sys.stderr,
        )
    else:
        print("\ninterrupted before the first generation ended; nothing was saved.", file=sys.stderr)
    sys.exit(130)
