"""Disturbing a call mid-way, by events rather than by timing: a CartPole whose sub-envs, on a Ray actor, mark
which actor and node step them and then wait for a go-ahead, and an action run as soon as a mark exists, after
which the go-ahead is given. A part is so certain to be mid-call when it is disturbed, however busy the
machine."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import cloudpickle
import gymnasium as gym
import ray

# Marks is made on the actors from the env's recipe: pickled with its code, as they cannot import this module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

#: The file, beside the marks, whose existence lets the actors' sub-envs step on.
GO_AHEAD = "go"


def _wait_for(path: Path, stop: threading.Event | None = None) -> bool:
    """Whether ``path`` came to exist (False when ``stop`` was set first)."""
    while not path.exists():
        if stop is not None and stop.is_set():
            return False
        time.sleep(0.01)
    return True


class Marks(gym.Wrapper):
    """CartPole that, on a Ray actor, leaves files named after that actor and its node in ``folder`` at its
    first step, and waits there until ``folder`` holds the go-ahead (elsewhere it steps as CartPole)."""

    def __init__(self, env, folder: str):
        super().__init__(env)
        self.folder, self.marked = Path(folder), False

    def step(self, action):
        if not self.marked and ray.is_initialized():
            context = ray.get_runtime_context()
            if context.get_actor_id() is not None:
                (self.folder / context.get_actor_id()).touch()
                (self.folder / context.get_node_id()).touch()
                _wait_for(self.folder / GO_AHEAD)
            self.marked = True
        return self.env.step(action)


@contextlib.contextmanager
def once_it_exists(mark: Path, action: Callable[[], None]) -> Iterator[None]:
    """Run ``action`` in a thread as soon as ``mark`` exists, then give Marks' sub-envs the go-ahead, while
    the block runs; the block ends once that is done (or, if it raises first, without the action)."""
    stop = threading.Event()

    def act_once_marked() -> None:
        if _wait_for(mark, stop):
            action()
            (mark.parent / GO_AHEAD).touch()

    thread = threading.Thread(target=act_once_marked)
    thread.start()
    try:
        yield
    except BaseException:
        stop.set()
        raise
    finally:
        thread.join()
