"""What the Ray tests check when they stop what they started: no process of it left, however deep."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path

import vecrl.testing


def descendants() -> set[int]:
    """Every process under this one: Ray's servers are its children, their workers and actors further down."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def running(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running (zombies, whose parent has yet to reap them, are not)."""
    alive = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.add(pid)
    return alive


@contextlib.contextmanager
def everything_started_here_ends(timeout_s: float = 30) -> Iterator[None]:
    """The block must stop every process it starts, however deep, within ``timeout_s`` of its end (Ray's
    node processes take a few seconds to go): no direct child left (zombies included), and none of the
    processes seen under this one while the block ran (looked for every 0.2 s) still running."""
    before, seen, done = descendants(), set(), threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            seen.update(descendants())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    with vecrl.testing.no_process_left():
        try:
            yield
        finally:
            done.set()
            watcher.join()
    # (multiprocessing's resource tracker, started with this process's first spawned worker, stays: see
    # vecrl.testing.child_processes)
    started = seen - before - {getattr(resource_tracker._resource_tracker, "_pid", None)}
    deadline = time.monotonic() + timeout_s
    while running(started) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = running(started)
    assert not left, f"processes still running: {[_command(pid) for pid in left]}"


def _command(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ").strip()
    return str(pid)
