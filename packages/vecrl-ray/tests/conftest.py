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
