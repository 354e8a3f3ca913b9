"""Ctrl-C (SIGINT) handled a set way within a block: the one home for swapping its handler and back.

``vecrl.command.ctrl_c_exits_at_once`` exits at once while the ``vecrl`` command imports,
``vecrl.processes.WorkerProcess`` ignores SIGINT while it spawns a worker, so that the worker inherits
the ignore, and ``ctrl_c_remembered`` keeps a Ctrl-C that Python dropped for a command's loop to see.

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

#: Whether Ctrl-C was pressed within the current ``ctrl_c_remembered`` block.
_pressed = [False]

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


@contextlib.contextmanager
def ctrl_c_remembered() -> Iterator[None]:
    """Within the block, Ctrl-C raises KeyboardInterrupt as Python's own handler does, and is remembered:
    ``raise_if_ctrl_c_pressed`` raises it again. Python drops a KeyboardInterrupt raised inside a finalizer
    or a garbage collector's callback (jax registers one) with an "Exception ignored" line, so a loop that
    must stop on Ctrl-C calls ``raise_if_ctrl_c_pressed`` between its steps. Where SIGINT is ignored (a
    background job of a shell) it stays ignored.

    Example:
        >>> with ctrl_c_remembered():
        ...     raise_if_ctrl_c_pressed()  # not pressed: nothing happens
    """

    def remember(signum: int, frame: object) -> None:
        _pressed[0] = True
        raise KeyboardInterrupt

    _pressed[0] = False
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    with sigint_handled_by(signal.SIG_IGN if ignored else remember):
        try:
            yield
        finally:
            _pressed[0] = False


def raise_if_ctrl_c_pressed() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed within the current ``ctrl_c_remembered`` block."""
    if _pressed[0]:
        raise KeyboardInterrupt
