"""Disturbing a call mid-way: a CartPole that marks which actor and node step it, and an action run in a
thread as soon as the call has left a mark."""

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


class Marks(gym.Wrapper):
    """CartPole that, on a Ray actor, leaves files named after that actor and its node in ``folder`` as it
    steps, and sleeps a little each step (so that a part lasts long enough to be disturbed mid-call)."""

    def __init__(self, env, folder: str):
        super().__init__(env)
        self.folder = Path(folder)

    def step(self, action):
        context = ray.get_runtime_context() if ray.is_initialized() else None
        if context is not None and context.get_actor_id() is not None:
            (self.folder / context.get_actor_id()).touch()
            (self.folder / context.get_node_id()).touch()
            time.sleep(0.005)
        return self.env.step(action)


@contextlib.contextmanager
def once_it_exists(mark: Path, action: Callable[[], None], timeout_s: float = 60) -> Iterator[None]:
    """Run ``action`` in a thread as soon as ``mark`` exists (or after ``timeout_s``) while the block runs;
    the block ends once the action has."""

    def act_once_marked() -> None:
        deadline = time.monotonic() + timeout_s
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        action()

    thread = threading.Thread(target=act_once_marked)
    thread.start()
    try:
        yield
    finally:
        thread.join()
