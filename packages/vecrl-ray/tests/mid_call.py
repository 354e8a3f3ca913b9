"""Disturbing a call mid-way: an action run in a thread as soon as the call has left a mark."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def once_it_exists(mark: Path, action: Callable[[], None], timeout_s: float = 60) -> Iterator[None]:
    """Run ``action`` in a thread as soon as ``mark`` exists (or after ``timeout_s``) while the block runs;
    the block ends once the action has."""

    def act_once_marked() -> None:
        deadline = time.monotonic() + timeout_s
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        action()

    thread = threading.Thread(target=act_once_marked)
    thread.start()
    try:
        yield
    finally:
        thread.join()
