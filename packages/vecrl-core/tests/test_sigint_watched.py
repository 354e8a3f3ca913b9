"""sigint_watched: a Ctrl-C within the block is seen at once and raises its KeyboardInterrupt when the block
ends, never inside it (where C code may have called back into Python)."""

import os
import signal

import pytest

from vecrl.interrupts import ctrl_c_remembered, raise_if_ctrl_c_pressed, sigint_watched

pytestmark = pytest.mark.races


def ctrl_c_within_the_block() -> list[str]:
    """What ran within a sigint_watched block that got a Ctrl-C, up to the KeyboardInterrupt."""
    ran = []
    with pytest.raises(KeyboardInterrupt):
        with sigint_watched() as seen:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # (Python runs a signal's handler between bytecodes: here, were it let)
                pass
            ran.append(f"seen {seen()}")
        ran.append("after the block")
    return ran


def test_a_ctrl_c_within_the_block_is_seen_and_raised_when_the_block_ends():
    assert ctrl_c_within_the_block() == ["seen True"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_remembered_s_handler_runs_at_the_block_s_end_and_remembers():
    with ctrl_c_remembered():
        assert ctrl_c_within_the_block() == ["seen True"]
        with pytest.raises(KeyboardInterrupt):
            raise_if_ctrl_c_pressed()
