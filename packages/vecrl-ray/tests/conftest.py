"""Ray for the tests: its servers listen on 127.0.0.1 only, and each test is bounded in time (what a test
starts, it stops: see ray_processes.py)."""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Iterator

# Read by Ray when it is imported: with it, a Ray started here uses 127.0.0.1 as its node address and
# listens there only (otherwise on every interface, for other machines to join).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import pytest

#: A test that runs longer is stopped, with the tracebacks of its threads (Ray's processes end with it).
TEST_TIMEOUT_S = 300


@pytest.fixture(autouse=True)
def bounded_in_time() -> Iterator[None]:
    faulthandler.dump_traceback_later(TEST_TIMEOUT_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def patient_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The executor's waits for actors to start and CPUs to come free stretched to most of a test's time: on
    a busy machine (the tests run a process per core) Ray's actors took over its 120 s to start, in a test
    that passes alone in 37 s. What a test waits for still fails it with the executor's own message."""
    from vecrl_ray import executor

    monkeypatch.setattr(executor, "START_TIMEOUT_S", 0.9 * TEST_TIMEOUT_S)
    monkeypatch.setattr(executor, "FREE_WAIT_S", 15.0)
