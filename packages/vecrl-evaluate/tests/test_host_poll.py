"""A compiled program reaches the host through host_poll: on a CPU by its FFI handler (which XLA calls as a
custom call of the program), elsewhere by jax's io_callback, the two answering alike."""

import numpy as np
import pytest

from vecrl_evaluate.host_poll import _api_version, host_poll

jax = pytest.importorskip("jax")
jnp = jax.numpy


def polled_loop(platform: str, heard: list[tuple[int, int]]):  # type: ignore[no-untyped-def]
    """A jitted loop that polls the host at every turn, hands it (turn * 10, turn) and stops when told to;
    what the host heard goes to ``heard``."""

    def poll(rows_done, checks_done):  # type: ignore[no-untyped-def]
        heard.append((int(rows_done), int(checks_done)))
        return np.bool_(rows_done >= 50), np.int32(checks_done + 100)

    def turn(carry):  # type: ignore[no-untyped-def]
        count, _, _ = carry
        stop, interval = host_poll(poll, count * 10, count, platform)
        return count + 1, stop, interval

    return jax.jit(lambda: jax.lax.while_loop(lambda c: ~c[1], turn, (jnp.int32(0), False, jnp.int32(0))))


# (a program traced for a GPU takes io_callback, which runs on this CPU too)
@pytest.mark.parametrize("platform", ["cpu", "gpu"])
def test_the_host_hears_each_poll_and_its_answer_reaches_the_program(platform):
    heard: list[tuple[int, int]] = []
    turns, stopped, interval = polled_loop(platform, heard)()
    assert heard == [(10 * turn, turn) for turn in range(6)]
    assert (int(turns), bool(stopped), int(interval)) == (6, True, 105)


def test_on_a_cpu_the_poll_is_an_ffi_custom_call_not_a_jax_host_callback():
    if _api_version() is None:
        pytest.skip(
            f"jax {jax.__version__} has no jax.ffi or ships no FFI headers: the poll is an io_callback"
        )
    text = polled_loop("cpu", []).lower().as_text()
    assert "vecrl_evaluate_poll" in text and "callback" not in text
    assert "callback" in polled_loop("gpu", []).lower().as_text()
