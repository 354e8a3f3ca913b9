"""Compile a jitted function on a worker thread, ahead of its first call, while the caller goes on.

XLA lets go of Python's GIL while it compiles, so a compile on a worker thread runs beside what the caller
does next. VectorEnvFromBrax's first ``reset()`` starts compiling the step this way once it has dispatched
brax's reset, so that the compile overlaps the reset's computation (seconds for some MJX envs), as it does
when raw jax code dispatches a reset and goes on to its step. Starting it beside the reset's own compile
was slower on a 2-core CPU: XLA's compile already uses both cores there. ``bench/playground_step.py``
times the first call.

Examples:
    >>> import jax, numpy as np
    >>> f = jax.jit(lambda x: x + 1)
    >>> ahead = CompileAhead(f, (jax.ShapeDtypeStruct((3,), np.float32),))
    >>> ahead.start()  # returns at once
    >>> ahead.wait()  # until it is compiled: f's calls with such arguments reuse it
    >>> f(np.zeros(3, np.float32)).tolist()
    [1.0, 1.0, 1.0]
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class CompileAhead:
    """Compiles ``jitted`` for arguments of the shapes and dtypes ``args`` (``jax.ShapeDtypeStruct`` trees)
    once, on a worker thread: jax's own cache then serves the calls with such arguments.

    ``start()`` begins it (later calls do nothing); ``wait()`` returns once it is done (at once if it was
    never started), raising what the compile raised. The thread ends with the compile.
    """

    def __init__(self, jitted: Any, args: Sequence[Any]) -> None:
        self._jitted = jitted
        self._args = tuple(args)
        self._lock = threading.Lock()
        self._future: Future[Any] | None = None
        self._ready = False

    def start(self) -> None:
        with self._lock:
            if self._future is None:
                worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vecrl-compile-ahead")
                self._future = worker.submit(self._compile)
                worker.shutdown(wait=False)  # its thread ends once the compile is done

    def wait(self) -> None:
        if not self._ready and self._future is not None:
            self._future.result()
            self._ready = True

    def _compile(self) -> None:
        self._jitted.lower(*self._args).compile()
