"""Ray for the tests: its servers listen on 127.0.0.1 only, and each test is bounded in time (what a test
starts, it stops: see ray_processes.py)."""

from __future__ import annotations

import os

# Read by Ray when it is imported: with it, a Ray started here uses 127.0.0.1 as its node address and
# listens there only (otherwise on every interface, for other machines to join).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import pytest


@pytest.fixture(autouse=True)
def patient_executor(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """The executor's waits for actors to start and CPUs to come free stretched to half of a test's time
    limit: on a busy machine (the tests run a process per core) Ray's actors took over its 120 s to start, in
    a test that passes alone in 37 s. What a test waits for still fails it with the executor's own message."""
    from vecrl_ray import executor

    # pytest-timeout's limit (pyproject.toml) fails a test that runs longer, with what it started stopped by
    # its fixtures (a worker process ended at a time limit would end the whole xdist run)
    test_timeout_s = float(request.config.getini("timeout"))
    monkeypatch.setattr(executor, "START_TIMEOUT_S", 0.5 * test_timeout_s)
    monkeypatch.setattr(executor, "FREE_WAIT_S", 15.0)
