"""``evaluate(..., num_workers=K)``: the population split in K parts, each evaluated whole in its own process.

The processes are an ``Executor`` (``vecrl_policy.executor``) tied to the env: the first part runs in the
caller, each other in a worker process that makes the env again (from its ``recipe``) once and keeps it,
with the policy, for the next call; it runs every episode of its rows and sends back their returns,
episode counts and step counts: nothing crosses a process per step.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from multiprocessing.connection import Connection
from numbers import Integral
from typing import Any

import cloudpickle
import torch

from vecrl.errors import VecrlError
from vecrl.processes import RemoteFailure, WorkerProcess, ignore_interrupts, messages
from vecrl_policy.executor import Evaluation, Part, PartRunner, PartSender
from vecrl_policy.threads import one_torch_thread


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
    and keeping it; with the caller, they run ``num_workers`` parts at once (an ``Executor``). The caller's
    part runs on the env itself, or when it has fewer rows than the env has sub-envs, on an env of its
    size made once from the recipe and kept here: spare sub-envs would step copies of a row, doing work
    that is thrown away (half of it, with 2 processes and as many rows as sub-envs)."""

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
        """The first part here, each other in a worker; a worker's error is raised here (see ``_Worker``)."""
        first, *others = parts
        try:
            for worker, part in zip(self.workers, others, strict=False):
                worker.send(evaluation, part)
            env = evaluation.env
            own_env = env if first.num_envs == env.num_envs else self._env_of_size(first.num_envs)
            rows = evaluation.parameters[first.start : first.stop]
            with one_torch_thread():  # one core per process
                results = [evaluation.run_rows(evaluation.policy, own_env, rows, first.seeds)]
            device = evaluation.parameters.device
            results.extend(worker.result(device) for worker in self.workers[: len(others)])
        except BaseException:
            self.close()  # a worker may be out of step (or Ctrl-C): the next call starts afresh
            raise
        return results

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
