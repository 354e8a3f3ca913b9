"""``evaluate(..., num_workers=K)``: the population evaluated in K processes, the caller among them.

The processes are an ``Executor`` (``vecrl_evaluate.executor``) tied to the env. Each process runs its
rows on an env of ``num_envs / (K * STARTED_SHARE)`` sub-envs (at most ``num_envs``), whose free sub-envs
take the next rows as they come: the caller hands them out a few at a time as processes ask (between
its own steps), so a process whose rows have longer episodes, or dearer steps, takes fewer rows, and all
finish together. A worker process makes the env again (from its ``recipe``) once and keeps it, with the
policy, for the next call; it runs every episode of its rows and sends back their returns, episode counts
and step counts: per step, nothing crosses a process but the odd request for rows. A row's result depends
on its seed alone, so the rows of a worker that dies run again elsewhere with the same results. A worker
that holds rows and sends nothing (no request for rows, no results) for ``silence_seconds()`` (a stopped
process, a wedged env, a native deadlock) is killed and its rows run elsewhere the same way. On an env
whose rows are seats, rows go out in whole worlds (``vecrl.worlds``), a world's rows in one process.
"""

from __future__ import annotations

import math
import os
import time
import warnings
import weakref
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from numbers import Integral
from typing import Any

import cloudpickle
import numpy as np
import torch

from vecrl.checks import SubEnvError
from vecrl.errors import VecrlError
from vecrl.processes import RemoteFailure, WorkerProcess, ignore_interrupts, messages
from vecrl_evaluate.executor import Evaluation, Part, PartRunner, PartSender
from vecrl_evaluate.threads import one_torch_thread

#: A process's env holds 1 / (K * STARTED_SHARE) of the population (at most ``num_envs``): the rows it
#: starts with, all processes together 1 / STARTED_SHARE of it; the rest go to whichever process frees
#: sub-envs first.
STARTED_SHARE = 2
#: A worker asks for rows in batches of this share of its env's sub-envs (at least one), and asks again as
#: soon as it holds fewer spare rows than that, so that a sub-env it frees finds one waiting.
ASKED_SHARE = 0.25


#: The seconds a worker holding rows may send nothing before it is taken for stuck (default; the
#: environment variable ``VECRL_WORKER_SILENCE_SECONDS`` sets another). A worker asks for rows each time its
#: sub-envs free some, so only an episode longer than this on its own would be silent that long.
SILENCE_SECONDS = 600.0
SILENCE_VARIABLE = "VECRL_WORKER_SILENCE_SECONDS"


class WorkerError(VecrlError, RuntimeError):
    """An evaluation worker died, or was stopped for sending nothing, before sending its results."""


def silence_seconds() -> float:
    """How long a worker holding rows may send nothing: ``VECRL_WORKER_SILENCE_SECONDS`` where set (a
    positive number), else ``SILENCE_SECONDS``.

    Examples:
        >>> silence_seconds() > 0
        True
    """
    text = os.environ.get(SILENCE_VARIABLE)
    if text is None:
        return SILENCE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"{SILENCE_VARIABLE}={text!r}: expected a positive number of seconds.")
    return seconds


def checked_num_workers(num_workers: Any, env: Any, *, given_as: str = "num_workers") -> int:
    """``num_workers`` if it is an int >= 1 and (for more than one) ``env`` can be made again in a worker;
    else a ValueError saying why (and to leave out ``given_as``, the keyword the caller was given it by).

    Examples:
        >>> import vecrl
        >>> checked_num_workers(2, vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))
        2
    """
    if isinstance(num_workers, bool) or not isinstance(num_workers, Integral) or num_workers < 1:
        raise ValueError(
            f"num_workers must be None or a positive int (processes evaluating parts of the population, this"
            f" one included), but got {num_workers!r}."
        )
    if num_workers == 1:
        return 1
    if getattr(env, "recipe", None) is None or getattr(env.unwrapped, "jit_compiled", False):
        raise ValueError(
            f"evaluate(num_workers={num_workers}) makes the env again in each worker process, so it needs a"
            f" gym env made by vecrl.make_vector_env (e.g. make_vector_env('gym::Hopper-v5', num_envs=64));"
            f" got {type(env.unwrapped).__qualname__}. A jitted backend (brax) evaluates the whole population"
            f" in one call: leave {given_as} out."
        )
    return int(num_workers)


class EvaluationWorkers:
    """``num_workers - 1`` worker processes tied to one env, each making that env again (from its recipe)
    and keeping it; with the caller, they evaluate a population (an ``Executor``), each process's free
    sub-envs taking the rows no process has started yet. The caller runs its rows on an env of the same
    size, made once from the recipe and kept here where it is not the env itself. A worker that dies
    mid-call has its rows run elsewhere (a warning says so) and is replaced after the call."""

    def __init__(self, recipe: Any, num_workers: int) -> None:
        self._recipe = _in_one_process(recipe)
        self.workers = [_Worker(self._recipe) for _ in range(num_workers - 1)]
        self._envs: list[Any] = []  # at most one: the caller's env of another size
        self._finalizer = weakref.finalize(self, _end_all, self.workers, self._envs)

    @property
    def num_parts(self) -> int:
        return len(self.workers) + 1

    def wait_ready(self) -> None:
        """Wait until every worker has started (its interpreter up, torch imported: about a second), so
        that a caller timing ``evaluate`` can report the start apart (``vecrl evaluate --workers``)."""
        try:
            for worker in self.workers:
                worker.ping()
            for worker in self.workers:
                worker.receive()
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]:
        """The rows of ``parts`` (the whole population, contiguous), run by whichever process frees a
        sub-env; their results as one tuple (each row's, and the observation statistics summed over the
        processes). A worker's error is raised here (see ``_Worker``), its death is not."""
        first, stop = parts[0].start, parts[-1].stop
        seeds = None if parts[0].seeds is None else np.concatenate([np.asarray(part.seeds) for part in parts])
        seats = parts[0].rows_per_world  # (rows go out in whole worlds: every count below is a multiple)
        share = math.ceil((stop - first) / (self.num_parts * STARTED_SHARE * seats)) * seats
        num_envs = min(evaluation.env.num_envs, share)
        params = None
        if parts[0].params is not None:
            params = {name: np.concatenate([part.params[name] for part in parts]) for name in parts[0].params}  # type: ignore[index]
        job = Part(first, stop, num_envs, seeds, params, seats)
        dispatch = _Dispatch(self, evaluation, job)
        try:
            dispatch.run()
        except BaseException:
            self.close()  # a worker may be out of step (or Ctrl-C): the next call starts afresh
            raise
        return [dispatch.merged()]

    def run_here(self, evaluation: Evaluation, job: Part, source: Any) -> tuple[torch.Tensor, ...]:
        """The rows ``source`` gives, in this process, on an env of the job's size."""
        env = evaluation.env
        own_env = env if job.num_envs == env.num_envs else self._env_of_size(job.num_envs)
        rows = evaluation.parameters[job.start : job.stop]
        try:
            with one_torch_thread():  # one core per process
                return evaluation.run_rows(
                    evaluation.policy, own_env, rows, job.seeds, params=job.params, source=source
                )
        except SubEnvError as error:
            raise error.with_row(job.start + (error.row or 0)) from error.__cause__

    def replace(self, worker: _Worker) -> None:
        """A new worker in place of ``worker``, which died."""
        worker.end()
        self.workers[self.workers.index(worker)] = _Worker(self._recipe)

    def _env_of_size(self, num_envs: int) -> Any:
        """The env made from the recipe with ``num_envs`` sub-envs, made on first use and kept."""
        if self._envs and self._envs[0].num_envs != num_envs:
            self._envs.pop().close()
        if not self._envs:
            self._envs.append(self._recipe.with_changes(num_envs=num_envs).make())
        return self._envs[0]

    def close(self) -> None:
        """End every worker and close the caller's env of another size (at once; a second call does nothing)."""
        self._finalizer()


class _Dispatch:
    """One ``EvaluationWorkers.run`` call: the rows no process has started (``left``, as rows of the job),
    which worker holds which rows, and the results so far. The caller takes rows from the front, workers
    from the back."""

    def __init__(self, workers: EvaluationWorkers, evaluation: Evaluation, job: Part) -> None:
        self.workers, self.evaluation, self.job = workers, evaluation, job
        self.left = deque(range(job.stop - job.start))
        self.holding: dict[_Worker, list[int]] = {}  # busy workers -> the rows they were given
        self.idle = list(workers.workers)
        self.dead: list[_Worker] = []
        self.results: list[tuple[torch.Tensor, ...]] = []
        self.device = evaluation.parameters.device
        self.silence = silence_seconds()

    def run(self) -> None:
        self.hand_out()
        while self.left or self.holding:
            if self.left:
                self.results.append(self.workers.run_here(self.evaluation, self.job, _CallersRows(self)))
            else:
                quietest = min(worker.heard for worker in self.holding)
                ends = [
                    end for worker in self.holding for end in (worker.connection, worker.process.sentinel)
                ]
                wait(ends, timeout=max(0.0, quietest + self.silence - time.monotonic()))
            self.serve()
        for worker in self.dead:
            self.workers.replace(worker)

    def serve(self) -> None:
        """Answer the workers that asked for rows, take the results of those done, hand the rows left to
        idle workers; a worker silent for longer than ``silence`` is stopped and its rows go back."""
        now = time.monotonic()
        for worker in list(self.holding):
            if now - worker.heard > self.silence and not worker.ready():
                self.lost(worker, worker.stopped(now - worker.heard))
                continue
            while worker in self.holding and worker.ready():
                try:
                    message = worker.receive()
                except WorkerError as death:
                    self.lost(worker, death)
                    continue
                if isinstance(message, int):  # it asks for that many rows
                    self.give(worker, self.back(message))
                    continue
                del self.holding[worker]
                self.results.append(tuple(torch.from_numpy(array).to(self.device) for array in message))
                self.idle.append(worker)
        self.hand_out()

    def back(self, count: int) -> list[int]:
        """Up to ``count`` rows from the back of ``left``, in order."""
        rows = [self.left.pop() for _ in range(min(count, len(self.left)))]
        return rows[::-1]

    def give(self, worker: _Worker, rows: list[int]) -> None:
        """Send ``rows`` to a busy worker (none: there are no more)."""
        self.holding[worker].extend(rows)
        try:
            worker.give(rows)
        except WorkerError as death:
            self.lost(worker, death)

    def lost(self, worker: _Worker, death: WorkerError) -> None:
        """``worker`` died holding rows: they go back to ``left``, the worker is replaced later."""
        rows = self.holding.pop(worker)
        what = f"Its rows {_spans(self.job.start + row for row in rows)}" if rows else "The rows meant for it"
        warnings.warn(f"{death} {what} ran elsewhere.", stacklevel=4)
        self.left.extend(sorted(rows))
        self.dead.append(worker)

    def hand_out(self) -> None:
        while self.idle and self.left:
            worker = self.idle.pop()
            self.holding[worker] = []
            try:
                worker.send(self.evaluation, self.job)
            except WorkerError as death:
                self.lost(worker, death)
                continue
            self.give(worker, self.back(self.job.num_envs))

    def merged(self) -> tuple[torch.Tensor, ...]:
        """The processes' results as one: each row's from the process that ran it (the others hold zeros),
        and the observation statistics summed."""
        return tuple(torch.stack(column).sum(dim=0) for column in zip(*self.results, strict=True))


class _CallersRows:
    """The caller's ``RowSource``: rows from the front of the dispatch's ``left``, and the workers served
    between the caller's steps. Done once ``left`` was empty (rows a dead worker gives back later run in
    a loop of their own)."""

    def __init__(self, dispatch: _Dispatch) -> None:
        self._dispatch, self._done = dispatch, False

    def take(self, count: int, *, wait: bool = False) -> list[int]:
        left = self._dispatch.left
        rows = [left.popleft() for _ in range(min(count, len(left)))]
        self._done = self._done or not left
        return rows

    def arrived(self) -> bool:
        self._dispatch.serve()
        return False

    @property
    def done(self) -> bool:
        return self._done


class _PulledRows:
    """A worker's ``RowSource``: the rows the caller gives it, asked for a batch at a time (one request
    at most in flight) whenever fewer than a batch are spare; the caller's empty answer means done."""

    def __init__(self, connection: Connection, batch: int) -> None:
        self._connection, self._batch = connection, batch
        self._spare: deque[int] = deque()
        self._asked, self._over, self._new = True, False, False  # the first rows come with the job

    def take(self, count: int, *, wait: bool = False) -> list[int]:
        self.arrived()
        while wait and not self._spare and not self._over:
            self._receive()
        rows = [self._spare.popleft() for _ in range(min(count, len(self._spare)))]
        if len(self._spare) < self._batch and not self._asked and not self._over:
            self._connection.send(self._batch)
            self._asked = True
        self._new = False
        return rows

    def arrived(self) -> bool:
        if self._asked and self._connection.poll():
            self._receive()
        return self._new

    @property
    def done(self) -> bool:
        return self._over and not self._spare

    def _receive(self) -> None:
        rows = self._connection.recv()
        if rows is None:  # the caller ends this worker (an error, or Ctrl-C, in another process)
            raise SystemExit
        self._asked = False
        self._spare.extend(rows)
        self._over = self._over or not rows
        self._new = bool(rows)


def _spans(rows: Any) -> str:
    """Rows as spans: ``0-3, 6``.

    Examples:
        >>> _spans([6, 0, 1, 2, 3])
        '0-3, 6'
    """
    spans: list[list[int]] = []
    for row in sorted(rows):
        if spans and row == spans[-1][1] + 1:
            spans[-1][1] = row
        else:
            spans.append([row, row])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


#: The keywords that make an env step in processes of its own (gym's worker processes, which ``batch_size``
#: starts too): an evaluation worker's env goes without them, with the same trajectories.
_PROCESS_KEYWORDS = ("num_workers", "batch_size")


def _in_one_process(recipe: Any) -> Any:
    """``recipe`` without ``num_workers`` and ``batch_size`` (given directly or in ``gym_kwargs``): an
    evaluation worker steps its env itself, and a worker process may not start processes of its own."""
    kwargs = {key: value for key, value in recipe.kwargs.items() if key not in _PROCESS_KEYWORDS}
    if kwargs.get("gym_kwargs"):
        kwargs["gym_kwargs"] = {
            key: value for key, value in kwargs["gym_kwargs"].items() if key not in _PROCESS_KEYWORDS
        }
    return type(recipe)(recipe.env_name, kwargs)


def workers_of(env: Any, num_workers: int) -> EvaluationWorkers:
    """The ``num_workers`` processes (this one included) serving ``env``, started (and tied to its
    ``close()``) on first use."""
    workers = env.__dict__.get("_evaluation_workers")
    if workers is None or workers.closed or workers.num_parts != num_workers:
        if workers is not None:
            workers.close()
        workers = EvaluationWorkers(env.recipe, num_workers)
        env.__dict__["_evaluation_workers"] = workers
        env.close_with_env(workers)
    return workers


def _end_all(workers: list[_Worker], envs: list[Any]) -> None:
    for worker in workers:
        worker.end()
    for env in envs:
        env.close()


class _Worker(WorkerProcess):
    """One evaluation worker: a spawned process and the caller's end of its pipe."""

    def __init__(self, recipe: Any) -> None:
        super().__init__(_serve, (), name="vecrl-evaluate")
        self._recipe = recipe
        self._sender = PartSender()
        self.heard = time.monotonic()  # when it last sent something, or was given a job

    def send(self, evaluation: Evaluation, job: Part) -> None:
        """Send the job (the recipe and the policy only when it does not hold them yet); its rows follow
        with ``give``."""
        self._send(self._sender.pickled(evaluation, job, self._recipe, "evaluation worker processes"))
        self.heard = time.monotonic()

    def give(self, rows: list[int]) -> None:
        """Rows of the job to run (none: there are no more)."""
        self._send(rows)

    def ping(self) -> None:
        """Ask the worker to answer once it is up (its answer is an empty result)."""
        self._send(_PING)

    def receive(self) -> Any:
        """What the worker sent: a count of rows it asks for, or its results (numpy arrays); the worker's
        error is raised here, and its death is a WorkerError."""
        self.wait()
        try:
            message = self.connection.recv()
        except (EOFError, OSError):
            raise self._death() from None
        self.heard = time.monotonic()
        if isinstance(message, RemoteFailure):
            raise message.exception()
        return message

    def ready(self) -> bool:
        """Whether the worker has sent something or has died (``receive`` would not block)."""
        return bool(wait([self.connection, self.process.sentinel], timeout=0))

    def _send(self, message: Any) -> None:
        try:
            self.connection.send(message)
        except OSError:
            raise self._death() from None

    def stopped(self, silent: float) -> WorkerError:
        """Kill the worker, silent for ``silent`` seconds while it held rows; the error that says so."""
        self.process.kill()
        self.process.join()
        return WorkerError(
            f"An evaluation worker (pid {self.process.pid}) sent nothing for {silent:.0f} s (stopped, or stuck in"
            f" its env) and was killed; the next evaluate() starts a new one. {SILENCE_VARIABLE} sets how long"
            f" a worker may be silent (default {SILENCE_SECONDS:.0f} s)."
        )

    def _death(self) -> WorkerError:
        """The error for the worker having died before its results came (sending to it, or waiting)."""
        return WorkerError(
            f"An evaluation worker (pid {self.process.pid}) died ({self.how_it_ended()}) before sending its"
            " results; the next evaluate() starts new workers. If this script runs directly, guard its entry"
            " point with if __name__ == '__main__': (workers are spawned, and import the main module)."
        )


#: What ``_Worker.ping`` sends: the worker answers it at once, with an empty result.
_PING = b"ping"


def _serve(connection: Connection) -> None:
    """Run the jobs the caller sends until it asks the worker to exit or goes away."""
    ignore_interrupts()
    torch.set_num_threads(1)
    runner = PartRunner()
    try:
        for job in messages(connection):
            if job == _PING:
                connection.send(())
                continue
            try:
                message = cloudpickle.loads(job)
                seats = message.part.rows_per_world  # (a batch of whole worlds)
                batch = max(1, math.ceil(message.part.num_envs * ASKED_SHARE / seats)) * seats
                connection.send(runner.run(message, source=_PulledRows(connection, batch)))
            except Exception as error:
                connection.send(RemoteFailure.of(error))
    finally:
        runner.close()
