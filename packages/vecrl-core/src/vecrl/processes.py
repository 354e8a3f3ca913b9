"""Worker processes: started safely, ended within a second, and their exceptions carried back.

The one home for what vecrl's process pools share: ``vecrl_gym.ProcessVectorEnv``'s stepping workers and
``vecrl_evaluate.evaluate``'s evaluation workers (and a third-party backend's, if it likes).

- Workers are spawned: a fresh interpreter, safe with torch's and jax's threads (fork is not), and no
  forkserver process is left behind.
- The caller talks to a worker over a pipe; ``None`` asks it to exit (``messages`` ends), and so does the
  caller going away (its end of the pipe closes). Ctrl-C is the caller's: workers ignore SIGINT from
  their first instruction (it reaches the whole process group, also while a worker imports torch: they
  are spawned with it ignored, which exec keeps, where a handler or a blocked mask is not; a Ctrl-C to
  the caller in that millisecond is lost), and the caller ends them.
- An exception raised in a worker travels as a ``RemoteFailure`` and is raised in the caller as itself
  (when it pickles), with the worker's traceback chained below it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import signal
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from vecrl.checks import SubEnvError
from vecrl.interrupts import sigint_handled_by

#: Spawned: a fresh interpreter, safe with torch's and jax's threads.
SPAWN = multiprocessing.get_context("spawn")

#: How long ``WorkerProcess.end()`` waits for a worker to exit on its own before killing it.
EXIT_TIMEOUT_S = 1.0


class WorkerProcess:
    """A spawned daemon process running ``target(connection, *args)``, and the caller's end of its pipe.

    ``target`` (importable: it is spawned) reads its work with ``messages(connection)`` and sends its
    replies on ``connection``.

    Examples:
        >>> worker = WorkerProcess(echo, (), name="echo")  # doctest: +SKIP
        >>> worker.connection.send("hi"); worker.connection.recv()  # doctest: +SKIP
        'hi'
        >>> worker.end()  # doctest: +SKIP
    """

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...], name: str) -> None:
        self.connection, theirs = SPAWN.Pipe()
        self.process: BaseProcess = SPAWN.Process(target=target, args=(theirs, *args), name=name, daemon=True)
        with sigint_handled_by(signal.SIG_IGN):  # kept through exec: the worker's imports ignore Ctrl-C too
            self.process.start()
        theirs.close()  # so that the worker's death closes the pipe here too

    def wait(self) -> None:
        """Block (never spin) until the worker has sent something or has died."""
        wait([self.connection, self.process.sentinel])

    def how_it_ended(self) -> str:
        """How the worker process ended, for an error message: ``"exit code 1"``, ``"signal SIGKILL"``
        (it is given ``EXIT_TIMEOUT_S`` to end, after its pipe closed)."""
        self.process.join(EXIT_TIMEOUT_S)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"signal {signal.Signals(-code).name}"
        return f"exit code {code}"

    def end(self) -> None:
        """Ask the worker to exit; kill it if it has not within ``EXIT_TIMEOUT_S``. Safe to call twice."""
        with contextlib.suppress(OSError):
            self.connection.send(None)
        self.process.join(EXIT_TIMEOUT_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


def ignore_interrupts() -> None:
    """Called first in a worker: Ctrl-C is the caller's, which ends its workers (so that a worker is never
    interrupted halfway through a reply)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def messages(connection: Connection) -> Iterator[Any]:
    """The messages the caller sends a worker, until it sends ``None`` or goes away."""
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        yield message


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process, chained as its ``__cause__``."""

    def __str__(self) -> str:
        return f"\n\nIn the worker process:\n{self.args[0]}"


@dataclass(frozen=True)
class RemoteFailure:
    """An exception raised in a worker: the sub-env at fault (None: not one sub-env's) and the population
    row it ran (in evaluate), what was running, and the exception (pickled when it pickles) with its type, message and formatted traceback.

    Examples:
        >>> failure = RemoteFailure.of(ValueError("bad"), offset=0)
        >>> error = failure.exception()
        >>> type(error).__name__, str(error), type(error.__cause__).__name__
        ('ValueError', 'bad', 'RemoteTraceback')
    """

    index: int | None
    during: str
    pickled: bytes | None
    type_name: str
    message: str
    traceback: str
    row: int | None = None  # the population row the sub-env ran, in evaluate

    @classmethod
    def of(cls, error: BaseException, offset: int = 0) -> RemoteFailure:
        """``error`` as raised in a worker; a ``SubEnvError`` names sub-env ``offset + its index`` (the
        worker's sub-envs start at ``offset``)."""
        index, during, row = None, "the worker", None
        if isinstance(error, SubEnvError) and isinstance(error.__cause__, BaseException):
            index, during, row, error = offset + error.index, error.during, error.row, error.__cause__
        pickled: bytes | None = None
        with contextlib.suppress(Exception):
            pickle.loads(candidate := pickle.dumps(error))  # an exception may pickle but not unpickle
            pickled = candidate
        text = "".join(traceback.format_exception(error))
        return cls(index, during, pickled, type(error).__qualname__, str(error), text, row)

    def exception(self) -> BaseException:
        """The original exception (a RuntimeError naming its type if it did not pickle), its traceback in
        the worker chained as ``__cause__``; wrapped in a ``SubEnvError`` when a sub-env raised it."""
        error: BaseException = RuntimeError(f"{self.type_name}: {self.message}")
        if self.pickled is not None:
            with contextlib.suppress(Exception):
                error = pickle.loads(self.pickled)
        error.__cause__ = RemoteTraceback(self.traceback)
        if self.index is None:
            return error
        fault = SubEnvError(self.index, self.during, error, row=self.row)
        fault.__cause__ = error
        return fault


def pickled(dumps: Callable[[Any], bytes], message: Any, parts: dict[str, Any], where: str) -> bytes:
    """``dumps(message)`` (cloudpickle's, as the caller has it); when it fails, a TypeError naming the first
    of ``parts`` (names of what ``message`` holds: a maker, a policy) that does not pickle, and how to fix it.
    ``where`` says what would run it elsewhere.

    Examples:
        >>> import threading
        >>> lock = threading.Lock()
        >>> pickled(pickle.dumps, [lock], {"the maker": lock}, "worker processes")
        Traceback (most recent call last):
        ...
        TypeError: the maker cannot be sent to worker processes: pickling it failed (TypeError: cannot pickle '_thread.lock' object). What runs elsewhere is pickled: build it from parts that pickle (make locks, open files, sockets and envs inside the function that needs them, not outside it), or run in this process alone.
    """
    try:
        return dumps(message)
    except Exception as error:
        failed = error
        name = "what it needs"
        for part_name, part in parts.items():
            try:
                dumps(part)
            except Exception as part_error:
                failed, name = part_error, part_name
                break
        raise TypeError(
            f"{name} cannot be sent to {where}: pickling it failed ({type(failed).__name__}: {failed}). What"
            " runs elsewhere is pickled: build it from parts that pickle (make locks, open files, sockets and"
            " envs inside the function that needs them, not outside it), or run in this process alone."
        ) from error
