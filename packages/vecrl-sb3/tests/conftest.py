"""SB3's models write their logs in $SB3_LOGDIR, else a new folder under the system's temporary folder that
nothing removes: each test's go to its own temporary folder, which pytest cleans up."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def sb3_logs_in_the_tests_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))
