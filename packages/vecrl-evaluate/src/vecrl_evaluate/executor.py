"""The seam between ``evaluate`` and where the parts of a population run: worker processes on this machine
(``evaluate(..., num_workers=K)``), Ray actors across machines (``vecrl_ray.RayExecutor``), or anything
else that implements ``Executor``.

``evaluate`` splits the population into ``Part``\\ s (``split_population``), each with its rows' reset
seeds, and hands them to the executor. An executor sends each part
to a worker as a ``PartMessage`` (``PartSender`` leaves out what that worker already holds), and the worker
runs it with a ``PartRunner``, which makes the env from the recipe once and keeps it and the policy for
the next part. Nothing crosses per step.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import cloudpickle
import numpy as np
import torch

from vecrl.checks import SubEnvError
from vecrl.processes import pickled
from vecrl.worlds import rows_per_world
from vecrl_evaluate.randomness import RowSeeds


class RowsEvaluator(Protocol):
    """Evaluates rows, each reset with its seed: ``(policy, env, rows, seeds) -> (total_return, episodes,
    steps)``; ``params`` (``vecrl.randomize.params_table``'s rows, or None) are each row's env parameters
    per episode; ``progress`` hears how many rows are done as they finish, and a ``source``
    (``vecrl_evaluate.row_loop.RowSource``) says which rows run, and when (default: all, at once)."""

    def __call__(
        self,
        policy: Any,
        env: Any,
        rows: torch.Tensor,
        seeds: RowSeeds | None,
        *,
        params: Mapping[str, np.ndarray] | None = None,
        progress: Callable[[int], None] | None = None,
        source: Any = None,
    ) -> tuple[torch.Tensor, ...]: ...


@dataclass(frozen=True)
class Part:
    """Rows ``start:stop`` of the population, run on an env of ``num_envs`` sub-envs, row ``start + i``
    reset with ``seeds[i]`` (None: unseeded) and, with ``params``, run with its env parameters
    ``params[name][i]`` (one per episode: ``vecrl.randomize.params_table``'s rows). On an env whose rows are
    seats (``vecrl.worlds``), rows are handed out ``rows_per_world`` at a time: a world's rows stay together.

    Examples:
        >>> Part(0, 2, num_envs=2, seeds=(10, 11)).seeds[1]
        11
    """

    start: int
    stop: int
    num_envs: int
    seeds: RowSeeds | None
    params: Mapping[str, np.ndarray] | None = None
    rows_per_world: int = 1


@dataclass(frozen=True)
class Evaluation:
    """One ``evaluate`` call as an executor sees it: the caller's ``env`` (made again from its ``recipe``
    where a part runs elsewhere), the ``policy``, ``run_rows`` and the whole population."""

    env: Any
    policy: Any
    run_rows: RowsEvaluator
    parameters: torch.Tensor


@runtime_checkable
class Executor(Protocol):
    """Runs the parts of a population evaluation, at once where it can, and returns their results as
    ``(total_return, episodes, steps, raw_return)`` tuples (plus the observation statistics, with normalization)
    whose rows, concatenated in order, are those of ``parts``: one per part, or one per batch for an
    executor that cuts the parts further. Each equals what ``run_rows`` gives for those rows in this
    process (a row's result depends on its seed alone)."""

    @property
    def num_parts(self) -> int:
        """How many parts it runs at once (``evaluate`` splits the population in at most that many)."""
        ...

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]: ...

    def close(self) -> None:
        """Stop what it started (processes, actors); it may not run parts afterwards."""
        ...


def split_population(
    env: Any,
    num_rows: int,
    seeds: RowSeeds | None,
    num_parts: int,
    params: Mapping[str, np.ndarray] | None = None,
) -> list[Part]:
    """``num_rows`` rows in at most ``num_parts`` contiguous parts of near-equal size (of whole worlds where the
    env's rows are seats: ``vecrl.worlds``), each with its rows' ``seeds`` (one per row, from ``row_seeds``) and
    ``params`` (their rows) and an env of ``env.num_envs`` sub-envs, or fewer for a part with fewer rows. A
    row's result depends on its seed alone, so a part gives the same results wherever it runs.

    Examples:
        >>> import vecrl
        >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
        >>> [(part.start, part.stop, part.num_envs) for part in split_population(env, 6, None, num_parts=2)]
        [(0, 3, 3), (3, 6, 3)]
    """
    seats = rows_per_world(env)  # (a world's rows in one part: num_rows and num_envs are whole worlds)
    num_worlds = num_rows // seats
    count = min(num_parts, num_worlds)
    size, longer = divmod(num_worlds, count)  # (the first parts a world longer)
    parts, stop = [], 0
    for index in range(count):
        start, stop = stop, stop + (size + (index < longer)) * seats
        part_seeds = None if seeds is None else seeds[start:stop]
        part_params = None if params is None else {name: value[start:stop] for name, value in params.items()}
        parts.append(Part(start, stop, min(env.num_envs, stop - start), part_seeds, part_params, seats))
    return parts


@dataclass(frozen=True)
class PartMessage:
    """What a worker needs to run one part; ``recipe`` and ``policy`` are None when they are the ones it
    was sent last (``PartSender``)."""

    recipe: Any
    policy: Any
    run_rows: RowsEvaluator
    rows: torch.Tensor
    part: Part


class PartSender:
    """The caller's side of one worker: builds each part's message, leaving out the recipe and the policy
    the worker already holds (by identity).

    Examples:
        >>> sender = PartSender()
        >>> sender.fresh("policy", policy) is policy, sender.fresh("policy", policy)  # doctest: +SKIP
        (True, None)
    """

    def __init__(self) -> None:
        self._last: dict[str, Any] = {}

    def fresh(self, key: str, value: Any, *parts: Any) -> Any:
        """``value``, or None when it, and each of ``parts`` (what can change inside it), is the one sent
        last under ``key``."""
        current = (value, *parts)
        last = self._last.get(key)
        if (
            last is not None
            and len(last) == len(current)
            and all(a is b for a, b in zip(last, current, strict=True))
        ):
            return None
        self._last[key] = current
        return value

    def message(self, evaluation: Evaluation, part: Part, recipe: Any) -> PartMessage:
        # a copy of the part's rows alone (a view would pickle the whole population), in any dtype
        rows = evaluation.parameters[part.start : part.stop].detach().to("cpu", copy=True)
        return PartMessage(
            self.fresh("recipe", recipe),
            # a policy's obs_norm is replaced (never changed in place) when it is set: send the policy again
            self.fresh("policy", evaluation.policy, getattr(evaluation.policy, "obs_norm", None)),
            evaluation.run_rows,
            rows,
            part,
        )

    def pickled(self, evaluation: Evaluation, part: Part, recipe: Any, where: str) -> bytes:
        """The part's message, cloudpickled; a TypeError naming the env's recipe or the policy when one of
        them does not pickle."""
        message = self.message(evaluation, part, recipe)
        parts = {
            "the env (the arguments of make_vector_env that made it: a wrapper or maker among them)": recipe,
            f"the policy ({' '.join(repr(evaluation.policy).split())})": evaluation.policy,  # on one line
        }
        try:
            return pickled(cloudpickle.dumps, message, parts, where)
        except TypeError:
            self._last.clear()  # what was left out as sent was not: send it next time
            raise


class PartRunner:
    """The worker's side: runs parts, keeping the env made from the recipe (made again only for another
    recipe or size, or after a part failed) and the policy between them."""

    def __init__(self) -> None:
        self._recipe: Any = None
        self._policy: Any = None
        self._env: Any = None

    def run(self, message: PartMessage, source: Any = None) -> tuple[np.ndarray, ...]:
        """The part's ``(total_return, episodes, steps, raw_return)`` as numpy arrays (of the rows ``source`` gives, when
        given); an error leaves no env behind."""
        if message.recipe is not None:
            self._recipe = message.recipe
            self.close()
        if message.policy is not None:
            self._policy = message.policy
        part = message.part
        try:
            if self._env is None or self._env.num_envs != part.num_envs:
                self.close()
                self._env = self._recipe.with_changes(num_envs=part.num_envs).make()
            results = message.run_rows(
                self._policy, self._env, message.rows, part.seeds, params=part.params, source=source
            )
        except SubEnvError as error:
            self.close()  # the env may be out of step
            row = part.start + (error.row or 0)  # the row in the part, as a row of the whole population
            raise error.with_row(row) from error.__cause__
        except BaseException:
            self.close()  # the env may be out of step
            raise
        return tuple(result.cpu().numpy() for result in results)

    def close(self) -> None:
        if self._env is not None:
            env, self._env = self._env, None
            env.close()


#: The entry-point group under which packages register executors by name (vecrl-ray: ``ray``).
EXECUTORS_GROUP = "vecrl.executors"
#: The executors vecrl ships, by name: the package whose install registers each.
SHIPPED_EXECUTORS = {"ray": "vecrl-ray"}


def executor_named(name: str) -> Callable[..., Executor]:
    """What makes the executor registered as ``name`` in the ``vecrl.executors`` entry-point group (vecrl-ray
    registers ``ray``, its ``RayExecutor``), loaded only now: vecrl-policy imports no executor's package. A
    LookupError names the installed ones and, for one vecrl ships, the package to install.

    Examples:
        >>> executor_named("ray")(num_actors=2)  # doctest: +SKIP
    """
    found = importlib.metadata.entry_points(group=EXECUTORS_GROUP, name=name)
    package = SHIPPED_EXECUTORS.get(name)
    install = f"pip install -c constraints.txt packages/{package}" if package else "reinstall its package"
    if found:
        try:
            return next(iter(found)).load()
        except ImportError as error:  # (installed, but its package cannot be imported)
            raise LookupError(f"The executor {name!r} could not be imported ({error}): {install}.") from error
    installed = sorted(entry.name for entry in importlib.metadata.entry_points(group=EXECUTORS_GROUP))
    fix = f"install {package}: {install}" if package else f"installed: {', '.join(installed) or 'none'}"
    raise LookupError(f"No executor named {name!r} is installed ({fix}).")
