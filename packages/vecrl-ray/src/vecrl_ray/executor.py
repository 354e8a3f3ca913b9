"""``RayExecutor``: the parts of a population evaluated on Ray actors, on this machine or across a cluster.

Each actor makes its env from the env's recipe and keeps it, with the policy, between calls; it receives a
block of parameter rows, runs whole episodes and sends back returns, episode counts and step counts.
Nothing crosses per step: a Ray round trip costs milliseconds, a CartPole step microseconds.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import math
import socket
import time
import warnings
import weakref
from collections.abc import Iterator, Sequence
from numbers import Integral, Real
from typing import Any

import cloudpickle
import numpy as np
import ray
import torch
from ray.exceptions import GetTimeoutError, RayActorError, RayError, RayTaskError

from vecrl.errors import VecrlError
from vecrl_evaluate.executor import Evaluation, Part, PartRunner, PartSender

#: How long a cluster's address may take to accept a connection.
CONNECT_TIMEOUT_S = 5.0
#: How long a new executor waits for the CPUs it needs to be free.
FREE_WAIT_S = 5.0
#: How long the actors may take to start before the executor gives up (they wait for free CPUs).
START_TIMEOUT_S = 120.0


class EvaluationError(VecrlError, RuntimeError):
    """A part of the population failed on every try; ``rows`` is its ``range`` of population rows, and the
    last failure (the Ray error with the actor's traceback) is chained as ``__cause__``."""

    def __init__(self, message: str, rows: range) -> None:
        super().__init__(message)
        self.rows = rows


class _EvaluationActor:
    """One Ray actor: a ``PartRunner`` behind ``run``."""

    def __init__(self, num_threads: int) -> None:
        torch.set_num_threads(num_threads)
        self._runner = PartRunner()

    def ready(self) -> bool:
        return True

    def run(self, message: bytes) -> tuple[np.ndarray, ...]:
        return self._runner.run(cloudpickle.loads(message))


_RemoteActor = ray.remote(_EvaluationActor)


class RayExecutor:
    """Evaluate the parts of a population on ``num_actors`` Ray actors (``evaluate(..., executor=...)``),
    with the results of the single-process ``evaluate`` for the same seed.

    Without ``address`` it calls ``ray.init()``, which starts Ray on this machine (all its CPUs; about 5 s)
    unless ``RAY_ADDRESS`` or a ``ray start`` on this machine names a cluster to join: it then says so (a
    UserWarning), and ``address="local"`` starts a Ray of its own instead. With an address it joins that
    cluster (``"auto"``, ``"127.0.0.1:6379"``, ``"ray://head:10001"``); a Ray already initialised in this
    process is used as it is. ``num_actors`` defaults to the cluster's free CPUs divided by
    ``num_cpus_per_actor``; the actors are spread over the nodes and started here, once: an evolution loop
    pays for them on its first line, not each generation. An actor that dies (or whose node goes) has its
    part run again on the next free actor, with the same results, and a new actor takes its place once the
    cluster has a CPU for it; a part that fails ``max_tries`` times raises ``EvaluationError`` naming its
    rows. ``close()`` (or leaving a ``with`` block) kills the actors, and shuts Ray down if it was started
    here.

    Examples:
        >>> with RayExecutor(num_actors=2) as executor:  # doctest: +SKIP
        ...     result = evaluate(policy, env, population, seed=0, executor=executor)
    """

    def __init__(
        self,
        num_actors: int | None = None,
        *,
        address: str | None = None,
        num_cpus_per_actor: float = 1,
        max_tries: int = 3,
    ) -> None:
        if num_actors is not None and (
            isinstance(num_actors, bool) or not isinstance(num_actors, Integral) or num_actors < 1
        ):
            raise ValueError(f"num_actors must be None (one per CPU) or a positive int, got {num_actors!r}.")
        if (
            isinstance(num_cpus_per_actor, bool)
            or not isinstance(num_cpus_per_actor, Real)
            or num_cpus_per_actor <= 0
        ):
            raise ValueError(f"num_cpus_per_actor must be a positive number, got {num_cpus_per_actor!r}.")
        if isinstance(max_tries, bool) or not isinstance(max_tries, Integral) or max_tries < 1:
            raise ValueError(f"max_tries must be a positive int, got {max_tries!r}.")
        if address is not None:
            _check_address(address)
        self.max_tries: int = int(max_tries)
        #: Actors started in place of dead ones, since this executor was made.
        self.restarts: int = 0
        self._num_cpus: float = num_cpus_per_actor
        #: Replacement actors not yet started (they wait for a free CPU): ``ready()``'s ref -> actor index.
        self._starting: dict[Any, int] = {}
        started_ray = not ray.is_initialized()
        if started_ray:
            if address is not None:
                _check_reachable(address)
            else:
                _say_if_joining()
            with _without_the_token_notice():
                ray.init(address=address)
        try:
            cpus = ray.cluster_resources().get("CPU", 0.0)
            if num_actors is None:
                num_actors = max(1, int(_free_cpus(0) // num_cpus_per_actor))
            free = _free_cpus(num_actors * num_cpus_per_actor)
            if num_actors * num_cpus_per_actor > free:
                raise ValueError(
                    f"{num_actors} actors of {num_cpus_per_actor:g} CPU(s) each need"
                    f" {num_actors * num_cpus_per_actor:g} CPUs, but the Ray cluster has {free:g} free (of {cpus:g}):"
                    " ask for fewer actors or a smaller num_cpus_per_actor, close the executors holding them, or"
                    " add nodes."
                )
            self._actors: list[Any] = [self._new_actor() for _ in range(int(num_actors))]
            self._senders: list[PartSender] = [PartSender() for _ in self._actors]
            self._finalizer: weakref.finalize = weakref.finalize(self, _shut_down, self._actors, started_ray)
            try:
                ray.get([actor.ready.remote() for actor in self._actors], timeout=START_TIMEOUT_S)
            except GetTimeoutError:
                raise TimeoutError(
                    f"The {len(self._actors)} Ray actors did not all start within {START_TIMEOUT_S:g} s: the"
                    f" cluster has {cpus:g} CPUs, maybe taken by other work (see `ray status`)."
                ) from None
        except BaseException:
            if "_finalizer" in self.__dict__:
                self._finalizer()
            elif started_ray:
                ray.shutdown()
            raise

    @property
    def num_parts(self) -> int:
        """The number of actors: ``evaluate`` splits the population in that many parts."""
        return len(self._actors)

    @property
    def actors(self) -> list[Any]:
        """The actors' handles, in the order parts are first handed to them."""
        return list(self._actors)

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]:
        """Each part on the next free actor; the results in the order of ``parts``, on the device of
        ``evaluation.parameters``."""
        if not self._finalizer.alive:
            raise RuntimeError("This RayExecutor is closed; make a new one.")
        recipe = getattr(evaluation.env, "recipe", None)
        if recipe is None:
            raise ValueError(
                "A RayExecutor makes the env again on each actor, so it needs an env made by"
                f" vecrl.make_vector_env (which keeps its recipe); got {type(evaluation.env).__qualname__}."
            )
        results: list[tuple[np.ndarray, ...] | None] = [None] * len(parts)
        tries = [0] * len(parts)
        waiting = collections.deque(range(len(parts)))
        self._note_started(timeout=0)
        starting = set(self._starting.values())
        idle = collections.deque(actor for actor in range(len(self._actors)) if actor not in starting)
        running: dict[Any, tuple[int, int]] = {}  # task -> (actor, part)
        while waiting or running:
            while waiting and idle:
                actor, index = idle.popleft(), waiting.popleft()
                message = self._senders[actor].pickled(evaluation, parts[index], recipe, "Ray actors")
                running[self._actors[actor].run.remote(message)] = (actor, index)
            if not running:  # every actor left is starting: wait for one
                idle.extend(self._note_started(timeout=START_TIMEOUT_S, parts=[parts[i] for i in waiting]))
                continue
            (task,), _ = ray.wait([*running, *self._starting], num_returns=1)
            if task in self._starting:  # a replacement is up: it takes the next part
                idle.extend(self._note_started(timeout=0))
                continue
            actor, index = running.pop(task)
            try:
                results[index] = ray.get(task)
                idle.append(actor)
                continue
            except RayActorError as error:  # died (or its node went): its part runs again elsewhere
                self._replace(actor)  # the new actor joins once it has started (a CPU may be missing)
                failure: BaseException = error
            except RayError as error:  # its part raised (RayTaskError), or what it raised did not unpickle
                idle.append(actor)
                failure = error
            tries[index] += 1
            if tries[index] >= self.max_tries:
                raise _failed(parts[index], tries[index], failure) from failure
            waiting.append(index)
        device = evaluation.parameters.device
        # (copies: Ray hands back read-only arrays)
        return [tuple(torch.tensor(array, device=device) for array in result) for result in results]  # type: ignore[union-attr]

    def _note_started(self, timeout: float, parts: Sequence[Part] = ()) -> list[int]:
        """The replacement actors that have started within ``timeout`` s (no longer starting); a
        TimeoutError naming ``parts`` when none has and none of them was ready at once. One that died
        starting is replaced again."""
        if not self._starting:
            return []
        done, _ = ray.wait(list(self._starting), num_returns=len(self._starting), timeout=0)
        if not done and timeout > 0:
            done, _ = ray.wait(list(self._starting), num_returns=1, timeout=timeout)
            if not done:
                rows = ", ".join(f"{part.start}-{part.stop - 1}" for part in parts)
                raise TimeoutError(
                    f"No Ray actor is left to run rows {rows}: the actors replacing those lost did not start"
                    f" within {timeout:g} s, and the cluster has {ray.available_resources().get('CPU', 0.0):g}"
                    f" CPUs free for their {self._num_cpus:g} each. Add a node, or make a RayExecutor with"
                    " fewer actors."
                )
        started = []
        for ready in done:
            actor = self._starting.pop(ready)
            try:
                ray.get(ready)
            except RayActorError:
                self._replace(actor)
                continue
            started.append(actor)
        return started

    def _new_actor(self) -> Any:
        threads = max(1, math.floor(self._num_cpus))
        return _RemoteActor.options(num_cpus=self._num_cpus, scheduling_strategy="SPREAD").remote(threads)

    def _replace(self, actor: int) -> None:
        """A new actor in place of actor ``actor``, which died; it is starting until its ``ready`` answers."""
        ray.kill(self._actors[actor])
        self._actors[actor] = self._new_actor()
        self._starting[self._actors[actor].ready.remote()] = actor
        self._senders[actor] = PartSender()
        self.restarts += 1

    def close(self) -> None:
        """Kill the actors, and shut Ray down if this executor started it (a second call does nothing)."""
        self._finalizer()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RayExecutor(num_actors={len(self._actors)}, num_cpus_per_actor={self._num_cpus:g})"


def _free_cpus(needed: float) -> float:
    """The cluster's free CPUs, once ``needed`` are free or after ``FREE_WAIT_S`` (the CPUs of actors just
    killed, by a closed executor, come back within moments)."""
    deadline = time.monotonic() + FREE_WAIT_S
    while (free := ray.available_resources().get("CPU", 0.0)) < needed and time.monotonic() < deadline:
        time.sleep(0.05)
    return free


#: Ray's logger of its token authentication, and the notice it logs for the secure default (a local Ray
#: started with a token): said on every start, it asks nothing of a user (the notice for an insecure
#: cluster is kept).
TOKEN_LOGGER = "ray._private.authentication.authentication_token_setup"
TOKEN_ENABLED_NOTICE = "Token authentication is enabled"


@contextlib.contextmanager
def _without_the_token_notice() -> Iterator[None]:
    def keep(record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(TOKEN_ENABLED_NOTICE)

    logger = logging.getLogger(TOKEN_LOGGER)
    logger.addFilter(keep)
    try:
        yield
    finally:
        logger.removeFilter(keep)


#: The addresses ray.init takes that are not ``host:port``.
_NAMED_ADDRESSES = ("auto", "local")


def _check_address(address: Any) -> None:
    """A ValueError, before Ray is touched, for an ``address`` that names no cluster: ``"auto"``,
    ``"local"``, ``"host:port"`` or ``"ray://host:port"`` are what Ray takes.

    Examples:
        >>> _check_address("127.0.0.1:6379")
        >>> _check_address("127.0.0.1")
        Traceback (most recent call last):
        ...
        ValueError: address='127.0.0.1' has no port: give 'host:port', e.g. '127.0.0.1:6379' (the port `ray start --head` prints; 6379 unless it was told otherwise). Leave address out to start Ray on this machine.
    """
    hint = "Leave address out to start Ray on this machine."
    if not isinstance(address, str):
        raise TypeError(f"address must be a str such as '127.0.0.1:6379' or None, got {address!r}. {hint}")
    if address in _NAMED_ADDRESSES:
        return
    if not address.strip():
        raise ValueError(
            f"address={address!r} names no cluster: give 'host:port', e.g. '127.0.0.1:6379'. {hint}"
        )
    scheme, separator, rest = address.partition("://")
    if separator and scheme != "ray":
        raise ValueError(
            f"address={address!r} has the scheme {scheme + '://'!r}; Ray takes 'host:port' or"
            f" 'ray://host:port' (Ray Client), e.g. '127.0.0.1:6379'. {hint}"
        )
    host, colon, port = (rest if separator else address).rpartition(":")
    if not colon:
        raise ValueError(
            f"address={address!r} has no port: give 'host:port', e.g. '{address or '127.0.0.1'}:6379' (the port"
            f" `ray start --head` prints; 6379 unless it was told otherwise). {hint}"
        )
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(
            f"address={address!r} is not 'host:port' (host {host!r}, port {port!r}): give e.g."
            f" '127.0.0.1:6379', 'auto' (the cluster this machine belongs to). {hint}"
        )


def _say_if_joining() -> None:
    """A UserWarning when ``ray.init()`` without an address would join a cluster already running (named by
    ``RAY_ADDRESS`` or left by ``ray start`` on this machine) rather than start one."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        existing = canonicalize_bootstrap_address(None)  # type: ignore[arg-type]  # None: look around
    except Exception:  # Ray's own lookup moved or failed: ray.init() decides without a word, as before
        return
    if existing is not None:
        warnings.warn(
            f"RayExecutor() joins the Ray cluster already running at {existing} (named by RAY_ADDRESS or left by"
            " `ray start`), with its nodes and other jobs. Pass address='local' to start a Ray of its own, or"
            f" address={existing!r} to say you mean it.",
            UserWarning,
            stacklevel=3,
        )


def _check_reachable(address: str) -> None:
    """A ConnectionError, at once, when nothing listens at a ``host:port`` address (``ray.init`` would retry
    for minutes); other addresses (``"auto"``) are left to Ray."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        raise ConnectionError(
            f"Nothing answers at the Ray address {address!r} ({error.strerror or error}): start the cluster's"
            " head there (`ray start --head`), or leave the address out to start Ray on this machine."
        ) from None


def _failed(part: Part, tries: int, failure: BaseException) -> EvaluationError:
    rows = range(part.start, part.stop)
    cause = failure.cause if isinstance(failure, RayTaskError) else failure
    what = f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}"
    return EvaluationError(
        f"Rows {rows.start} to {rows.stop - 1} of the population failed on all {tries} tries on Ray actors;"
        f" the last time with {what}",
        rows,
    )


def _shut_down(actors: list[Any], started_ray: bool) -> None:
    if not ray.is_initialized():
        return
    try:
        for actor in actors:
            ray.kill(actor)
    finally:  # Ray left running by a failed kill would be joined, not started, by the next executor
        if started_ray:
            ray.shutdown()
