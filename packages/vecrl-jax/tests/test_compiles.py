"""``programs_compiled`` lists the compiles of the block's thread and the threads it starts, not those of
threads already running (an earlier env's step compiling ahead on its worker thread)."""

from __future__ import annotations

import threading

import jax
import numpy as np

from vecrl_jax.compiles import programs_compiled


def compile_on_a_thread(go: threading.Event) -> threading.Thread:
    def add_one(x: jax.Array) -> jax.Array:
        return x + 1

    thread = threading.Thread(
        target=lambda: go.wait() and jax.jit(add_one)(np.zeros(5, np.float32)), name="compiling"
    )
    thread.start()
    return thread


def test_a_thread_that_was_running_before_the_block_is_not_counted_and_one_started_in_it_is():
    def add_two(x: jax.Array) -> jax.Array:
        return x + 2

    go = threading.Event()
    earlier = compile_on_a_thread(go)
    with programs_compiled() as compiled:
        go.set()
        earlier.join()  # its compile happens inside the block, but the block did not start it
        jax.jit(add_two)(np.zeros(4, np.float32))
        later = compile_on_a_thread(go)
        later.join()
    assert sorted(compiled) == [("jit(add_one)", "compiling"), ("jit(add_two)", "MainThread")]
