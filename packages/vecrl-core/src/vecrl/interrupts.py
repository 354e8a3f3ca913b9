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
import os
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

    remember.raises_keyboard_interrupt = True  # type: ignore[attr-defined]  # (read by sigint_watched)

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


@contextlib.contextmanager
def sigint_watched() -> Iterator[Callable[[], bool]]:
    """Within the block, ``seen()`` (the value yielded) says whether a Ctrl-C that raises KeyboardInterrupt
    arrived, from any thread, while the main thread may be inside C code that runs no Python handler (a
    compiled jax program): Python's signal handling writes each signal to a wakeup file descriptor at once,
    which ``seen`` reads. The handler runs as usual when the block ends, not within it: the C code may call
    back into Python on the main thread (XLA may run a program's host poll there), where a KeyboardInterrupt
    would escape through C that cannot carry it. ``seen`` is always False, and the handler runs within the
    block as usual, where SIGINT does not raise KeyboardInterrupt (a handler other than Python's default and
    ``ctrl_c_remembered``'s), from another thread than the main one, and where a wakeup descriptor is set
    already (an asyncio loop).

    Example:
        >>> with sigint_watched() as seen:
        ...     seen()
        False
    """
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    installed = False
    try:
        if threading.current_thread() is threading.main_thread():
            previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            installed = previous == -1
            if not installed:  # someone else's: give it back, and watch nothing
                signal.set_wakeup_fd(previous)
        handler = signal.getsignal(signal.SIGINT)
        raises = handler is signal.default_int_handler or getattr(handler, "raises_keyboard_interrupt", False)
        pressed, kept = [False], [False]

        def seen() -> bool:
            if installed and raises and not pressed[0]:
                with contextlib.suppress(BlockingIOError):
                    pressed[0] = signal.SIGINT in os.read(read, 512)
            return pressed[0]

        def keep(signum: int, frame: object) -> None:
            kept[0] = True

        try:
            with sigint_handled_by(keep) if installed and raises else contextlib.nullcontext():
                yield seen
        finally:
            if installed:
                signal.set_wakeup_fd(-1)
    finally:
        os.close(read)
        os.close(write)
    if kept[0] and callable(handler):  # (back in Python: the handler the block kept from running, raising)
        handler(signal.SIGINT, None)
