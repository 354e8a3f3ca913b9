"""``count_compiles``: how many programs XLA compiles in a block, to check that what should be data (per-sub-env
params, another seed) compiles nothing new.

Examples:
    >>> import jax, jax.numpy as jnp
    >>> double = jax.jit(lambda x: 2 * x)
    >>> ones, zeros = jnp.ones(3), jnp.zeros(3)  # (making them may compile too)
    >>> with count_compiles() as compiled:
    ...     _ = double(ones); _ = double(zeros)  # one program, for float32 arrays of 3
    >>> compiled
    [1]
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: The event jax records for each program XLA compiles (a cache hit records none).
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


@contextmanager
def count_compiles() -> Iterator[list[int]]:
    """A one-item list counting the programs jax compiles while the block runs."""
    from jax import monitoring

    count = [0]

    def heard(event: str, duration_secs: float, **kwargs: str | int) -> None:
        if event == COMPILE_EVENT:
            count[0] += 1

    monitoring.register_event_duration_secs_listener(heard)
    try:
        yield count
    finally:
        monitoring.unregister_event_duration_listener(heard)
