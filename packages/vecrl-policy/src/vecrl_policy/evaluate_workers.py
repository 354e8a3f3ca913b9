"""``evaluate(..., num_workers=K)``: the population split in K parts, each evaluated whole in its own process.

Each worker makes its env (from the env's ``recipe``) once and keeps it, with the policy, for the next
call; it runs every episode of its rows and sends back their returns, episode counts and step counts:
nothing crosses a process per step.
Each row is reset with exactly the sub-env seed it gets in the single-process ``evaluate``, so the
results are the same.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from numbers import Integral
from typing import Any

import cloudpickle
import torch

from vecrl.processes import RemoteFailure, WorkerProcess, ignore_interrupts, messages

#: Evaluates rows with per-row seeds: ``(policy, env, rows, seeds) -> (total_return, episodes, steps)``.
RowsEvaluator = Callable[[Any, Any, torch.Tensor, list[int | None] | None], tuple[torch.Tensor, ...]]


class WorkerError(RuntimeError):
    """An evaluation worker died before sending its results."""


def checked_num_workers(num_workers: Any, env: Any) -> int:
    """``num_workers`` if it is an int >= 1 and ``env`` can be made again in a worker; else a ValueError
    saying why.

    Example:
        >>> import vecrl
        >>> checked_num_workers(2, vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))
        2
    """
    if isinstance(num_workers, bool) or not isinstance(num_workers, Integral) or num_workers < 1:
        raise ValueError(
            f"num_workers must be None or a positive int (processes evaluating parts of the population, this"
            f" one included), but got {num_workers!r}."
        )
    if getattr(env, "recipe", None) is None or not hasattr(env.unwrapped, "sub_env_seeds"):
        raise ValueError(
            f"evaluate(num_workers={num_workers}) makes the env again in each worker process, so it needs a"
            f" gym env made by vecrl.make_vector_env (e.g. make_vector_env('gym::Hopper-v5', num_envs=64));"
            f" got {type(env.unwrapped).__qualname__}. A jitted backend (brax) evaluates the whole population"
            " in one call: leave num_workers out."
        )
    return int(num_workers)


def row_seeds(env: Any, num_rows: int, seed: int | None) -> list[int | None] | None:
    """The sub-env seed of every row in the single-process ``evaluate``: row ``r`` runs on sub-env
    ``r % num_envs`` of the chunk ``r // num_envs``, which is reset with ``seed + chunk``.

    Example:
        >>> import vecrl
        >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, seed_rule="gymnasium")
        >>> row_seeds(env, 5, seed=10)  # chunks reset with 10, 11, 12
        [10, 11, 11, 12, 12]
    """
    if seed is None:
        return None
    num_envs = env.num_envs
    sub_env_seeds = env.unwrapped.sub_env_seeds
    seeds: list[int | None] = []
    for chunk in range((num_rows + num_envs - 1) // num_envs):
        seeds.extend(sub_env_seeds(seed + chunk))
    return seeds[:num_rows]


def evaluate_in_workers(
    run_rows: RowsEvaluator,
    policy: Any,
    env: Any,
    parameters: torch.Tensor,
    seeds: list[int | None] | None,
    num_workers: int,
) -> tuple[torch.Tensor, ...]:
    """``run_rows(policy, env, rows, seeds)`` over ``num_workers`` contiguous parts of ``parameters``: the
    first here, each other in a worker process with its own env made from ``env.recipe`` (at most
    ``env.num_envs`` sub-envs). The workers stay with ``env`` for the next call (they are ended when it is
    closed or garbage-collected, or the interpreter exits), keeping their env and the policy. The first part
    runs on ``env``, or when it has fewer rows than ``env`` has sub-envs, on an env of its size made once
    from the recipe and kept with the workers: spare sub-envs would step copies of a row, doing work that
    is thrown away (half of it, with 2 processes and as many rows as sub-envs)."""
    parts = torch.tensor_split(torch.arange(len(parameters)), num_workers)
    workers = _workers_of(env, num_workers - 1)
    threads = torch.get_num_threads()
    try:
        for worker, rows in zip(workers.workers, parts[1:], strict=True):
            job = (min(env.num_envs, len(rows)), run_rows, policy, parameters[rows].cpu(), _part(seeds, rows))
            worker.send(job)
        torch.set_num_threads(1)  # one core per process
        first = parts[0]
        own_env = env if len(first) >= env.num_envs else workers.env_of_size(len(first))
        results = [run_rows(policy, own_env, parameters[first], _part(seeds, first))]
        results.extend(worker.result(parameters.device) for worker in workers.workers)
    except BaseException:
        workers.close()  # a worker may be out of step (or Ctrl-C): the next call starts afresh
        raise
    finally:
        torch.set_num_threads(threads)
    return tuple(torch.cat(column) for column in zip(*results, strict=True))


def _part(seeds: list[int | None] | None, rows: torch.Tensor) -> list[int | None] | None:
    return None if seeds is None else [seeds[row] for row in rows.tolist()]


class EvaluationWorkers:
    """Worker processes tied to one env: each makes that env again (from its recipe) and keeps it; and the
    caller's own smaller copy of that env, when its part needs one (``env_of_size``)."""

    def __init__(self, recipe: Any, count: int) -> None:
        self._recipe = _in_one_process(recipe)
        self.workers = [_Worker(self._recipe) for _ in range(count)]
        self._envs: list[Any] = []  # at most one: the caller's env of another size
        self._finalizer = weakref.finalize(self, _end_all, self.workers, self._envs)

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def env_of_size(self, num_envs: int) -> Any:
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


def _workers_of(env: Any, count: int) -> EvaluationWorkers:
    """The ``count`` workers serving ``env``, started (and tied to its ``close()``) on first use."""
    workers = env.__dict__.get("_evaluation_workers")
    if workers is None or workers.closed or len(workers.workers) != count:
        if workers is not None:
            workers.close()
        workers = EvaluationWorkers(env.recipe, count)
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
        super().__init__(_serve, (cloudpickle.dumps(recipe),), name="vecrl-evaluate")
        self._policy: Any = None

    def send(self, job: tuple[Any, ...]) -> None:
        """Send one part to evaluate; the policy crosses only when it is not the one sent last."""
        num_envs, run_rows, policy, rows, seeds = job
        new_policy = policy if policy is not self._policy else None
        self._policy = policy
        job_bytes = cloudpickle.dumps((num_envs, run_rows, new_policy, rows.numpy(), seeds))
        try:
            self.connection.send(job_bytes)
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


def _serve(connection: Connection, recipe_bytes: bytes) -> None:
    """Evaluate the parts the caller sends, with an env made from the recipe (again only when a part needs
    another number of sub-envs), until the caller asks the worker to exit or goes away."""
    ignore_interrupts()
    torch.set_num_threads(1)
    recipe = cloudpickle.loads(recipe_bytes)
    env, policy = None, None
    try:
        for job in messages(connection):
            try:
                num_envs, run_rows, new_policy, rows, seeds = cloudpickle.loads(job)
                policy = new_policy if new_policy is not None else policy
                if env is None or env.num_envs != num_envs:
                    if env is not None:
                        env.close()
                    env = None
                    env = recipe.with_changes(num_envs=num_envs).make()
                results = run_rows(policy, env, torch.from_numpy(rows), seeds)
                connection.send(("ok", tuple(result.cpu().numpy() for result in results)))
            except Exception as error:
                connection.send(("error", RemoteFailure.of(error)))
    finally:
        if env is not None:
            env.close()
