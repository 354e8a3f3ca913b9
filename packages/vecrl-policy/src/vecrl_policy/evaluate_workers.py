"""``evaluate(..., num_workers=K)``: the population evaluated in K processes, the caller among them.

The processes are an ``Executor`` (``vecrl_policy.executor``) tied to the env. The population is cut into
batches of rows, BATCHES_PER_PROCESS per process, and each process takes the next batch as soon as it is
done with one (the caller hands them out between its own steps), so a process whose rows have longer
episodes does not hold the call. A worker process makes the env again (from its ``recipe``) once and
keeps it, with the policy, for the next call; it runs every episode of its rows and sends back their
returns, episode counts and step counts: nothing crosses a process per step. A row's result depends on
its seed alone, so the batch of a worker that dies runs again elsewhere with the same results.
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from numbers import Integral
from typing import Any

import cloudpickle
import torch

from vecrl.checks import SubEnvError
from vecrl.errors import VecrlError
from vecrl.processes import RemoteFailure, WorkerProcess, ignore_interrupts, messages
from vecrl_policy.executor import Evaluation, Part, PartRunner, PartSender
from vecrl_policy.threads import one_torch_thread

#: Batches of rows per process. One balances least, but measured on 2 cores (bench/gym_workers.py,
#: Hopper-v5 and CartPole-v1, 256 rows) it was the fastest: 1.75x one process against 1.49x with 2
#: batches and 1.37x with 4, since each batch runs on an env of its size (fewer sub-envs pay the same
#: per-step overhead) and has its own last steps. A larger value balances processes whose rows differ
#: more; a dead worker's batch runs again elsewhere whatever the value.
BATCHES_PER_PROCESS = 1


class WorkerError(VecrlError, RuntimeError):
    """An evaluation worker died before sending its results."""


def checked_num_workers(num_workers: Any, env: Any) -> int:
    """``num_workers`` if it is an int >= 1 and (for more than one) ``env`` can be made again in a worker;
    else a ValueError saying why.

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
    if getattr(env, "recipe", None) is None or not hasattr(env.unwrapped, "sub_env_seeds"):
        raise ValueError(
            f"evaluate(num_workers={num_workers}) makes the env again in each worker process, so it needs a"
            f" gym env made by vecrl.make_vector_env (e.g. make_vector_env('gym::Hopper-v5', num_envs=64));"
            f" got {type(env.unwrapped).__qualname__}. A jitted backend (brax) evaluates the whole population"
            " in one call: leave num_workers out."
        )
    return int(num_workers)


class EvaluationWorkers:
    """``num_workers - 1`` worker processes tied to one env, each making that env again (from its recipe)
    and keeping it; with the caller, they evaluate a population in batches pulled as each process frees
    up (an ``Executor``). The caller runs its batches on an env of the batch size, made once from the
    recipe and kept here where it is not the env itself. A worker that dies mid-call has its batch run
    elsewhere (a warning says so) and is replaced after the call."""

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
                worker.result(torch.device("cpu"))
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]:
        """The rows of ``parts`` in batches, handed to whichever process is free; each batch's results,
        in the order of the rows. A worker's error is raised here (see ``_Worker``), its death is not."""
        batches = _batches(parts, evaluation.env.num_envs, self.num_parts * BATCHES_PER_PROCESS)
        results: dict[int, tuple[torch.Tensor, ...]] = {}
        try:
            _Dispatch(self, evaluation, batches, results).run()
        except BaseException:
            self.close()  # a worker may be out of step (or Ctrl-C): the next call starts afresh
            raise
        return [results[batch.start] for batch in batches]

    def run_here(self, evaluation: Evaluation, batch: Part, progress: Any) -> tuple[torch.Tensor, ...]:
        """One batch in this process, on an env of its size."""
        env = evaluation.env
        own_env = env if batch.num_envs == env.num_envs else self._env_of_size(batch.num_envs)
        rows = evaluation.parameters[batch.start : batch.stop]
        try:
            with one_torch_thread():  # one core per process
                return evaluation.run_rows(evaluation.policy, own_env, rows, batch.seeds, progress=progress)
        except SubEnvError as error:
            raise error.with_row(batch.start + (error.row or 0)) from error.__cause__

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
    """One ``EvaluationWorkers.run`` call: the batches left, the workers busy and with which batch."""

    def __init__(
        self,
        workers: EvaluationWorkers,
        evaluation: Evaluation,
        batches: list[Part],
        results: dict[int, tuple[torch.Tensor, ...]],
    ) -> None:
        self.workers, self.evaluation, self.results = workers, evaluation, results
        self.left = deque(batches)
        self.busy: dict[_Worker, Part] = {}
        self.idle = list(workers.workers)
        self.dead: list[_Worker] = []
        self.device = evaluation.parameters.device

    def run(self) -> None:
        self.hand_out()
        while self.left or self.busy:
            if self.left:
                batch = self.left.popleft()
                # the caller hands out batches between its own steps (every few dozen)
                self.results[batch.start] = self.workers.run_here(self.evaluation, batch, self.collect)
            else:
                wait([end for worker in self.busy for end in (worker.connection, worker.process.sentinel)])
            self.collect()
        for worker in self.dead:
            self.workers.replace(worker)

    def collect(self, _rows_done: int = 0) -> None:
        """Take the results of the workers that are done and give them the next batches."""
        for worker, batch in list(self.busy.items()):
            if not worker.ready():
                continue
            del self.busy[worker]
            try:
                self.results[batch.start] = worker.result(self.device)
            except WorkerError as death:
                self.lost(worker, batch, death)
                continue
            self.idle.append(worker)
        self.hand_out()

    def lost(self, worker: _Worker, batch: Part, death: WorkerError) -> None:
        """``worker`` died holding ``batch``: the batch goes back to the front, the worker is replaced later."""
        warnings.warn(f"{death} Its rows {batch.start}-{batch.stop - 1} ran elsewhere.", stacklevel=3)
        self.left.appendleft(batch)
        self.dead.append(worker)

    def hand_out(self) -> None:
        while self.idle and self.left:
            worker, batch = self.idle.pop(), self.left.pop()  # workers from the back, the caller the front
            try:
                worker.send(self.evaluation, batch)
            except WorkerError as death:
                self.lost(worker, batch, death)
                continue
            self.busy[worker] = batch


def _batches(parts: Sequence[Part], num_envs: int, count: int) -> list[Part]:
    """The rows of ``parts`` (contiguous, in order) in about ``count`` batches of equal size (the last may
    be short), each run on an env of that size (at most ``num_envs``): one env size for every batch, so
    that no process makes its env again between batches."""
    start, stop = parts[0].start, parts[-1].stop
    seeds = None if parts[0].seeds is None else tuple(s for part in parts for s in part.seeds or ())
    size = max(1, math.ceil((stop - start) / count))
    batches = []
    for first in range(start, stop, size):
        last = min(first + size, stop)
        batch_seeds = None if seeds is None else seeds[first - start : last - start]
        batches.append(Part(first, last, min(size, num_envs), batch_seeds))
    return batches


def _in_one_process(recipe: Any) -> Any:
    """``recipe`` without ``num_workers`` (given directly or in ``gym_kwargs``): an evaluation worker steps
    its env itself, and a worker process may not start processes of its own."""
    kwargs = {key: value for key, value in recipe.kwargs.items() if key != "num_workers"}
    if kwargs.get("gym_kwargs"):
        kwargs["gym_kwargs"] = {
            key: value for key, value in kwargs["gym_kwargs"].items() if key != "num_workers"
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

    def send(self, evaluation: Evaluation, part: Part) -> None:
        """Send one part to evaluate (the recipe and the policy only when it does not hold them yet)."""
        job_bytes = self._sender.pickled(evaluation, part, self._recipe, "evaluation worker processes")
        try:
            self.connection.send(job_bytes)
        except OSError:
            raise self._death() from None

    def ping(self) -> None:
        """Ask the worker to answer once it is up (its answer is an empty result)."""
        try:
            self.connection.send(_PING)
        except OSError:
            raise self._death() from None

    def result(self, device: torch.device) -> tuple[torch.Tensor, ...]:
        """The part's results (on ``device``), or the worker's error raised here; a death is an error too."""
        self.wait()
        try:
            status, value = self.connection.recv()
        except (EOFError, OSError):
            raise self._death() from None
        if status == "error":
            failure: RemoteFailure = value
            raise failure.exception()
        return tuple(torch.from_numpy(array).to(device) for array in value)

    def ready(self) -> bool:
        """Whether the worker has sent something or has died (``result`` would not block)."""
        return bool(wait([self.connection, self.process.sentinel], timeout=0))

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
    """Run the parts the caller sends until it asks the worker to exit or goes away."""
    ignore_interrupts()
    torch.set_num_threads(1)
    runner = PartRunner()
    try:
        for job in messages(connection):
            if job == _PING:
                connection.send(("ok", ()))
                continue
            try:
                connection.send(("ok", runner.run(cloudpickle.loads(job))))
            except Exception as error:
                connection.send(("error", RemoteFailure.of(error)))
    finally:
        runner.close()
