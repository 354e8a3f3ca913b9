"""The loop of a worker process: one block of sub-envs in a SyncVectorEnv, stepped on the caller's word.

Arrays go through shared memory (``SharedBatch``); the pipe carries only the command and, back, the
block's infos unbatched (none when ``empty_info``), which the caller batches in sub-env order. An exception is sent back as ``RemoteFailure``, which the
caller raises with the original type, message and traceback.
"""

from __future__ import annotations

import contextlib
import pickle
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle

from vecrl.checks import SubEnvError
from vecrl_gym.final_infos import EndedEpisode
from vecrl_gym.shared_batch import SharedBatch, rows_of, write_rows
from vecrl_gym.sync_vector_env import SyncVectorEnv


class RecordingSyncVectorEnv(SyncVectorEnv):
    """A block's SyncVectorEnv that records its sub-envs' infos instead of batching them: the caller
    batches every block's infos over the whole batch, in sub-env order, exactly as one SyncVectorEnv would
    (gymnasium types an info array by the first value it sees, which a block alone may not see)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.infos: list[tuple[int, dict[str, Any]]] = []
        self.ended: list[EndedEpisode] = []

    def _add_info(self, infos: dict[str, Any], info: dict[str, Any], index: int) -> dict[str, Any]:
        self.infos.append((index, info))
        return infos

    def _add_final_infos(self, infos: dict[str, Any], ended: list[EndedEpisode]) -> dict[str, Any]:
        self.ended.extend(ended)
        return infos

    def recorded(self) -> BlockInfos:
        """The infos recorded since the last call (sub-envs numbered within the block)."""
        recorded = BlockInfos(self.infos, self.ended)
        self.infos, self.ended = [], []
        return recorded


@dataclass(frozen=True)
class BlockInfos:
    """A block's infos of one step or reset: ``(index, info)`` in the order the sub-envs gave them, and the
    episodes that ended (``(index, last observation, last info)``)."""

    infos: list[tuple[int, dict[str, Any]]]
    ended: list[EndedEpisode]


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process, chained as its ``__cause__``."""

    def __str__(self) -> str:
        return f"\n\nIn the worker process:\n{self.args[0]}"


@dataclass(frozen=True)
class RemoteFailure:
    """An exception raised in a worker: the sub-env at fault (None: not one sub-env's), what was running,
    and the exception (pickled when it pickles) with its type, message and formatted traceback."""

    index: int | None
    during: str
    pickled: bytes | None
    type_name: str
    message: str
    traceback: str

    @classmethod
    def of(cls, error: BaseException, offset: int) -> RemoteFailure:
        """``error`` as raised in a worker whose block starts at sub-env ``offset``."""
        index, during = None, "the worker"
        if isinstance(error, SubEnvError) and isinstance(error.__cause__, BaseException):
            index, during, error = offset + error.index, error.during, error.__cause__
        pickled: bytes | None = None
        with contextlib.suppress(Exception):
            pickle.loads(candidate := pickle.dumps(error))  # an exception may pickle but not unpickle
            pickled = candidate
        text = "".join(traceback.format_exception(error))
        return cls(index, during, pickled, type(error).__qualname__, str(error), text)

    def exception(self) -> BaseException:
        """The original exception (a RuntimeError naming its type if it did not pickle), its traceback in
        the worker chained as ``__cause__``."""
        error: BaseException = RuntimeError(f"{self.type_name}: {self.message}")
        if self.pickled is not None:
            with contextlib.suppress(Exception):
                error = pickle.loads(self.pickled)
        error.__cause__ = RemoteTraceback(self.traceback)
        return error


def serve(
    connection: Connection, makers: bytes, options: dict[str, Any], batch: SharedBatch, start: int, stop: int
) -> None:
    """Make the sub-envs ``start:stop`` from the cloudpickled ``makers`` and serve the caller's commands
    (recording their infos: ``RecordingSyncVectorEnv``) until it says ``"close"`` or goes away (its end of the pipe closes). Ctrl-C is left to the caller,
    which ends its workers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        env = RecordingSyncVectorEnv(cloudpickle.loads(makers), **options)
    except BaseException as error:
        connection.send(("error", RemoteFailure.of(error, start)))
        return
    try:
        connection.send(
            ("ready", (env.single_observation_space, env.single_action_space, env.metadata, env.render_mode))
        )
        views = batch.views()
        while True:
            try:
                command, arguments = connection.recv()
            except (EOFError, OSError):
                return
            if command == "close":
                return
            try:
                reply = _run(env, views, start, stop, command, arguments)
            except Exception as error:
                connection.send(("error", RemoteFailure.of(error, start)))
            else:
                connection.send(("ok", reply))
    finally:
        env.close()


def _run(env: RecordingSyncVectorEnv, views: Any, start: int, stop: int, command: str, arguments: Any) -> Any:
    """Carry out one command on the block's env; the reply to send back."""
    if command == "step":
        observations, rewards, terminated, truncated, _ = env.step(rows_of(views.actions, start, stop))
        write_rows(views.observations, observations, start, stop)
        views.rewards[start:stop] = rewards
        views.terminated[start:stop] = terminated
        views.truncated[start:stop] = truncated
        return env.recorded()
    if command == "reset":
        seeds, options = arguments
        observations, _ = env.reset(seed=seeds, options=options)
        write_rows(views.observations, observations, start, stop)
        return env.recorded()
    if command == "call":
        name, args, kwargs = arguments
        return env.call(name, *args, **kwargs)
    if command == "get_attr":
        return env.get_attr(arguments)
    if command == "set_attr":
        name, values = arguments
        return env.set_attr(name, values)
    if command == "render":
        return env.render()
    raise ValueError(f"unknown worker command {command!r}")
