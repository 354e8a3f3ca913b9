"""Compile a jitted function on a worker thread, ahead of its first call, while the caller goes on.

XLA lets go of Python's GIL while it compiles, so a compile on a worker thread runs beside whatever the
caller does next: another compile, or a computation jax runs on the other cores. VectorEnvFromBrax's first
``reset()`` starts compiling the step this way before it compiles and runs brax's reset, so a first
``reset()`` then ``step()`` waits about as long as the longer of the two compiles rather than their sum (both
take seconds to tens of seconds for an MJX env; ``bench/playground_step.py`` times the first call).

Example:
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

_WORKERS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vecrl-compile-ahead")


class CompileAhead:
    """Compiles ``jitted`` for arguments of the shapes and dtypes ``args`` (``jax.ShapeDtypeStruct`` trees)
    once, on a worker thread: jax's own cache then serves the calls with such arguments.

    ``start()`` begins it (later calls do nothing); ``wait()`` returns once it is done (at once if it was
    never started), raising what the compile raised.
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
                self._future = _WORKERS.submit(self._compile)

    def wait(self) -> None:
        if not self._ready and self._future is not None:
            self._future.result()
            self._ready = True

    def _compile(self) -> None:
        self._jitted.lower(*self._args).compile()
