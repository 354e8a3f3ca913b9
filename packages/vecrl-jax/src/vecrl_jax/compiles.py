"""``programs_compiled``: the programs XLA compiles in a block, to check that what should be data (per-sub-env
params, another seed) compiles nothing new.

Examples:
    >>> import jax, jax.numpy as jnp
    >>> double = jax.jit(lambda x: 2 * x)
    >>> ones, zeros = jnp.ones(3), jnp.zeros(3)  # (making them may compile too)
    >>> with programs_compiled() as compiled:
    ...     _ = double(ones); _ = double(zeros)  # one program, for float32 arrays of 3
    >>> [program for program, thread in compiled]
    ['jit(<lambda>)']
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

#: The event jax records for each program XLA compiles (a cache hit records none).
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class Compile(NamedTuple):
    """One program jax compiled, and where."""

    program: str  # jax's name for it: "jit(step)"
    thread: str  # the name of the thread that compiled it


@contextmanager
def programs_compiled() -> Iterator[list[Compile]]:
    """A list of the programs jax compiles while the block runs, on the block's thread or a thread started
    during it (a ``CompileAhead``'s): not those of threads that were running before, such as the step an
    earlier env's first reset began compiling ahead."""
    from jax import monitoring

    compiled: list[Compile] = []
    before = set(threading.enumerate()) - {threading.current_thread()}

    def heard(event: str, duration_secs: float, **kwargs: str | int) -> None:
        thread = threading.current_thread()
        if event == COMPILE_EVENT and thread not in before:
            compiled.append(Compile(str(kwargs.get("fun_name", "?")), thread.name))

    monitoring.register_event_duration_secs_listener(heard)
    try:
        yield compiled
    finally:
        monitoring.unregister_event_duration_listener(heard)
