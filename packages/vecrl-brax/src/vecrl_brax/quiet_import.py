"""Import brax without the notices mujoco.mjx prints when NVIDIA's warp is not installed.

``import brax`` imports ``mujoco.mjx.warp``, which prints "Failed to import warp: ..." and "Failed to
import mujoco_warp: ..." to stdout whenever the optional warp package is absent: on every CPU machine,
where warp is neither needed nor usable. Those two lines are dropped; everything else printed during
the import (a real problem included) goes through unchanged.

Examples:
    >>> with without_warp_notices():
    ...     print("kept")
    kept
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

WARP_NOTICES = ("Failed to import warp:", "Failed to import mujoco_warp:")


class _DroppingLines:
    """A text stream passing whole lines to ``target``, except those starting with one of ``prefixes``."""

    def __init__(self, target: TextIO, prefixes: tuple[str, ...]) -> None:
        self.target, self.prefixes, self.pending = target, prefixes, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            if not line.startswith(self.prefixes):
                self.target.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def close_pending(self) -> None:
        if self.pending and not self.pending.startswith(self.prefixes):
            self.target.write(self.pending)
        self.pending = ""


@contextmanager
def without_warp_notices() -> Iterator[None]:
    """Inside the block, stdout drops the lines of ``WARP_NOTICES`` (once mujoco.mjx.warp has been imported,
    nothing prints them again, and the block changes nothing)."""
    if "mujoco.mjx.warp" in sys.modules:
        yield
        return
    stdout = sys.stdout
    filtered = _DroppingLines(stdout, WARP_NOTICES)
    sys.stdout = filtered
    try:
        yield
    finally:
        sys.stdout = stdout
        filtered.close_pending()
