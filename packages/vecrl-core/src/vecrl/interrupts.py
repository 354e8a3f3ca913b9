"""Ctrl-C (SIGINT) handled a set way within a block: the one home for swapping its handler and back.

``vecrl.command.ctrl_c_exits_at_once`` exits at once while the ``vecrl`` command imports, and
``vecrl.processes.WorkerProcess`` ignores SIGINT while it spawns a worker, so that the worker inherits
the ignore.

Example:
    >>> import signal
    >>> with sigint_handled_by(signal.SIG_IGN):
    ...     signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    True
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

Handler = Callable[[int, Any], Any] | int | signal.Handlers


@contextlib.contextmanager
def sigint_handled_by(handler: Handler) -> Iterator[None]:
    """SIGINT handled by ``handler`` within the block, the handler before it back after it. Only the main
    thread may set handlers: from another thread, or under a handler not set from Python, nothing changes."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main_thread else None
    if previous is None:
        yield
        return
    signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
