"""ProcessVectorEnv: SyncVectorEnv's behaviour, with blocks of sub-envs stepped in worker processes."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Iterable, Sequence
from multiprocessing.connection import wait
from numbers import Integral
from typing import TYPE_CHECKING, Any

import cloudpickle
import gymnasium
import numpy as np
import torch

from vecrl.action_checks import ActionCheck
from vecrl.autoreset import autoreset_metadata
from vecrl.checks import SubEnvError, closed_env_error, failed_env_error
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl.final_observations import AddInfo, final_infos
from vecrl.infos import info_to_device
from vecrl.nests import copy_batch
from vecrl.params import PARAMS_OPTION, params_rows
from vecrl.processes import SPAWN, RemoteFailure, WorkerProcess, pickled
from vecrl.spaces import write_rows as write_batch_rows
from vecrl_gym.batching import observations_to_torch
from vecrl_gym.checks import (
    attribute_values,
    check_same_spaces,
    checked_env_makers,
    observation_spaces,
)
from vecrl_gym.gym_vector_env import GymOptions, GymVectorEnv, Seed
from vecrl_gym.shared_batch import SharedBatch, rows_of, write_rows
from vecrl_gym.sync_vector_env import SyncVectorEnv
from vecrl_gym.worker import BlockInfos, EndedEpisode, RecordingSyncVectorEnv, serve

if TYPE_CHECKING:
    from typing import Unpack

EnvMaker = Callable[[], gymnasium.Env]

_STARTING = "making its sub-envs"


class ProcessVectorEnv(GymVectorEnv):
    """``SyncVectorEnv``'s behaviour, its sub-envs split in ``num_workers`` blocks stepped at once: the calling
    process steps the first block, a worker process each other one.

    Every option, autoreset mode, episode budget, space and info means what it means for ``SyncVectorEnv``,
    and for the same seeds and actions the trajectories are the same. Each step's actions, observations,
    rewards and flags go through shared memory; only infos are pickled (none with ``empty_info=True``).
    Workers wait blocked on a pipe, never spinning, and are spawned (a fresh interpreter, safe with torch
    and jax loaded); a script that makes this env must guard its entry point with
    ``if __name__ == "__main__":``, as for any spawned process.

    Faults: an exception in a sub-env is a ``vecrl.SubEnvError`` naming it, chaining the original exception
    (its traceback in the worker chained below it); a worker that dies (killed from outside) is a
    RuntimeError naming it, raised as soon as the death is seen. Either way the env refuses ``step()``
    until ``reset()``, which starts new workers for dead ones. ``close()`` ends every worker; it is
    idempotent and also runs when the env is garbage-collected or the interpreter exits. Ctrl-C (a
    KeyboardInterrupt) during a step or reset closes the env; workers themselves ignore SIGINT.

    Args:
        env_makers: functions without arguments, each making one sub-env (pickled with cloudpickle, so
            lambdas work).
        num_workers: processes that step sub-envs, the calling process included (default: the number of
            cores, at most one per sub-env). 1 steps everything in the calling process.

    The other keywords (``empty_info``, ``num_episodes``, ``device``, ``autoreset_mode``, ``seed_rule``,
    ``observation_mode``) are those of ``SyncVectorEnv``.

    Examples:
        >>> import gymnasium, numpy as np
        >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 4, num_workers=2)
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(np.array([0, 1, 0, 1]))
        >>> obs.shape, reward.tolist()
        ((4, 4), [1.0, 1.0, 1.0, 1.0])
        >>> env.close()
    """

    def __init__(
        self,
        env_makers: Iterable[EnvMaker],
        *,
        num_workers: int | None = None,
        **options: Unpack[GymOptions],
    ) -> None:
        makers = checked_env_makers(env_makers, "ProcessVectorEnv")
        num_envs = len(makers)
        workers = checked_num_workers(num_workers, num_envs)
        episode_options = self._take_options(options)
        # The options every block's SyncVectorEnv takes; results reach the device here, in the caller.
        self._block_options = {key: value for key, value in self._options.items() if key != "device"}
        # Block b holds the sub-envs bounds[b]:bounds[b + 1]; block 0 is stepped here.
        self._bounds: list[int] = np.linspace(0, num_envs, workers + 1).round().astype(int).tolist()
        self._makers = makers
        self._own = RecordingSyncVectorEnv(makers[: self._bounds[1]], **self._block_options)
        try:
            super().__init__(
                num_envs,
                self._own.single_observation_space,
                self._own.single_action_space,
                episode_options=episode_options,
            )
        except BaseException:
            self._own.close()
            raise
        self.metadata = {**self._own.metadata, **autoreset_metadata(self._autoreset_mode)}
        self.render_mode = self._own.render_mode
        self._check_actions = ActionCheck(self.single_action_space, num_envs, "ProcessVectorEnv")
        self._batch = SharedBatch(self.single_observation_space, self.single_action_space, num_envs, SPAWN)
        self._views = self._batch.views()
        # The workers of blocks 1, 2, ...: list entries are replaced when reset() restarts a dead one, and
        # the finalizer (close(), garbage collection, interpreter exit) ends those in the list then.
        self._workers: list[_Worker] = []
        self._finalizer = weakref.finalize(self, _stop, self._workers, self._own)
        self._reset_once = False
        # The sub-envs whose action the next step uses (None: all), as the blocks last reported them.
        self._acting: list[int] | None = None
        try:
            self._start_workers(range(1, workers))
        except BaseException:
            self.close()
            raise
        if self.observation_mode != "same":
            spaces = [env.observation_space for env in self._own.envs]
            for worker in self._workers:
                spaces.extend(worker.observation_spaces)
            batched = observation_spaces(self.observation_mode, spaces)[1]
            assert batched is not None  # only "same" batches the single space
            self.observation_space = batched

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        """The parameters ``reset(options={"params": ...})`` sets per sub-env, as ``SyncVectorEnv``'s."""
        return self._own.default_params

    @property
    def num_workers(self) -> int:
        """The processes stepping sub-envs, the calling process included."""
        return len(self._bounds) - 1

    # -- stepping ------------------------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: Seed = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset as ``SyncVectorEnv.reset`` does (seeds, ``options``, ``options["reset_mask"]``); a full reset
        also starts new workers for any that died.

        Examples:
            >>> import gymnasium
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=2)
            >>> env.reset(seed=[1, 2])[0].shape
            (2, 4)
            >>> env.close()
        """
        mask, seeds, options = self._reset_request(seed, options, started=self._reset_once)
        seeds = seeds or [None] * self.num_envs
        dead = [index for index, worker in enumerate(self._workers, start=1) if not worker.process.is_alive()]
        if dead:
            self._start_workers(dead)

        def block_arguments(start: int, stop: int) -> Any:
            if mask is not None and not mask[start:stop].any():
                return _SKIP  # the block keeps its sub-envs as they are
            block_options = None if options is None and mask is None else dict(options or {})
            if mask is not None:
                block_options["reset_mask"] = mask[start:stop]  # type: ignore[index]
            if (
                block_options is not None and PARAMS_OPTION in block_options
            ):  # (checked for all: a block gets its rows)
                block_options[PARAMS_OPTION] = params_rows(
                    block_options[PARAMS_OPTION], np.arange(start, stop)
                )
            block_seeds = seeds[start:stop]
            return (None if all(s is None for s in block_seeds) else block_seeds), block_options

        infos = self._run_everywhere("reset", block_arguments, "reset()", self._reset_own)
        self.failure, self._reset_once = None, True
        self._note_reset(mask)
        return self._results(infos, None)

    def _reset_own(self, seeds: Any, options: Any) -> BlockInfos:
        observations, _ = self._own.reset(seed=seeds, options=options)
        write_rows(self._views.observations, observations, 0, self._bounds[1])
        return self._own.recorded()

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step as ``SyncVectorEnv.step`` does: bad actions are refused before any sub-env steps.

        Examples:
            >>> import gymnasium, numpy as np
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("Pendulum-v1")] * 2, num_workers=2, device="cpu")
            >>> _ = env.reset(seed=0)
            >>> env.step(np.zeros((2, 1)))[1].dtype
            torch.float64
            >>> env.close()
        """
        if self.closed:
            raise closed_env_error("step", self)
        if self.failure is not None:
            raise failed_env_error(self.failure)
        self._refuse_finished()  # before anything is sent to a worker
        actions = self._check_actions(actions, self._acting)
        write_rows(self._views.actions, actions, 0, self.num_envs)
        infos = self._run_everywhere("step", lambda start, stop: None, "step()", self._step_own)
        views = self._views
        if self._autoreset_mode == "disabled":
            self._note_ended(views.terminated | views.truncated)
        return self._results(infos, (views.rewards.copy(), views.terminated.copy(), views.truncated.copy()))

    def _step_own(self) -> BlockInfos:
        stop, views = self._bounds[1], self._views
        observations, rewards, terminated, truncated, _ = self._own.step(rows_of(views.actions, 0, stop))
        write_rows(views.observations, observations, 0, stop)
        views.rewards[:stop], views.terminated[:stop], views.truncated[:stop] = rewards, terminated, truncated
        return self._own.recorded()

    def _results(self, blocks: list[BlockInfos | None], step: tuple[np.ndarray, ...] | None) -> Any:
        """The batched observations (a fresh copy), ``step``'s arrays and the ``blocks``' infos batched as
        one SyncVectorEnv batches them, on the device."""
        observations = copy_batch(self._views.observations)
        info: dict[str, Any] = {}
        ended: list[EndedEpisode] = []
        for start, block in zip(self._bounds, blocks, strict=False):
            if block is not None:
                for index, sub_env_info in block.infos:
                    info = self._add_info(info, sub_env_info, start + index)
                ended.extend((start + index, *episode) for index, *episode in block.ended)
        self._acting = self._acting_rows(blocks)
        if ended:
            info = {**info, **_finals(ended, observations, self.num_envs, self._add_info)}
        device = self._device
        if device is not None:
            observations = observations_to_torch(observations, device)
            info = info_to_device(info, device) if info else info
            if step is not None:
                return (observations, *(torch.from_numpy(array).to(device) for array in step), info)
        return (observations, info) if step is None else (observations, *step, info)

    def _acting_rows(self, blocks: list[BlockInfos | None]) -> list[int] | None:
        """The sub-envs whose action the next step uses, as the ``blocks`` report them (None: all); a block a
        masked reset left alone (None) acts as it did."""
        if all(block is not None and block.acting is None for block in blocks):
            return None
        acting: list[int] = []
        for start, stop, block in zip(self._bounds[:-1], self._bounds[1:], blocks, strict=True):
            if block is None:
                previous = self._acting
                acting.extend(
                    range(start, stop) if previous is None else (i for i in previous if start <= i < stop)
                )
            else:
                acting.extend(
                    range(start, stop) if block.acting is None else (start + i for i in block.acting)
                )
        return acting

    def _run_everywhere(
        self,
        command: str,
        arguments: Callable[[int, int], Any],
        during: str,
        run_own: Callable[..., Any],
    ) -> list[Any]:
        """Send ``command`` to every worker (with ``arguments(start, stop)`` of its block), run ``run_own`` on
        block 0 here meanwhile, and gather every block's result; raise the first fault once all replied. A
        block whose arguments are ``_SKIP`` is left alone; its result is None.

        A fault leaves the env refusing ``step()`` until ``reset()``; Ctrl-C closes it."""
        try:
            unsent = self._send_everywhere(command, arguments, during)
            faults: list[BaseException] = []
            results: list[Any] = [None]
            try:
                own_arguments = arguments(0, self._bounds[1])
                if own_arguments is not _SKIP:
                    results[0] = run_own() if own_arguments is None else run_own(*own_arguments)
            except Exception as error:
                faults.append(error)
            replies = self._gather(during, unsent)
            for reply in replies:
                if isinstance(reply, BaseException):
                    faults.append(reply)
                    results.append(None)
                else:
                    results.append(reply)
        except BaseException as error:
            if not isinstance(error, Exception):  # Ctrl-C: the workers' replies would be out of step
                self.close()
            raise
        if faults:
            self.failure = _failure_reason(faults[0])
            raise faults[0]
        return results

    def _send_everywhere(
        self, command: str, arguments: Callable[[int, int], Any], during: str
    ) -> dict[int, Any]:
        """Send ``command`` to every worker; by worker, the death errors of those it could not reach (and None
        for those it skipped)."""
        unsent: dict[int, Any] = {}
        for index, worker in enumerate(self._workers):
            block_arguments = arguments(worker.first, worker.stop)
            if block_arguments is _SKIP:
                unsent[index] = None
                continue
            try:
                worker.connection.send((command, block_arguments))
            except OSError:  # its end of the pipe is gone: it died
                unsent[index] = worker.death(during)
        return unsent

    def _gather(self, during: str, unsent: dict[int, Any] | None = None) -> list[Any]:
        """Every worker's reply, in block order (an exception for a fault or a death), but for those in
        ``unsent`` (which are given their entry there): waits blocked on the pipes and on the processes,
        so a worker that dies is seen at once."""
        replies: list[Any] = [None] * len(self._workers)
        pending = set(range(len(self._workers)))
        for index, error in (unsent or {}).items():
            replies[index] = error
            pending.discard(index)
        waitables: dict[Any, int] = {}
        for index, worker in enumerate(self._workers):
            waitables[worker.connection] = waitables[worker.process.sentinel] = index
        while pending:
            for item in wait([item for item, index in waitables.items() if index in pending]):
                index = waitables[item]
                if index not in pending:
                    continue
                worker = self._workers[index]
                has_reply = item is worker.connection or worker.connection.poll()
                replies[index] = worker.reply(during) if has_reply else worker.death(during)
                pending.discard(index)
        return replies

    # -- workers -------------------------------------------------------------------------------------

    def _start_workers(self, blocks: Iterable[int]) -> None:
        """Start (or restart) the workers of ``blocks`` and wait until each has made its sub-envs."""
        started = []
        for block in blocks:
            start, stop = self._bounds[block], self._bounds[block + 1]
            worker = _Worker(block, start, stop, self._makers[start:stop], self._block_options, self._batch)
            if block <= len(self._workers):
                self._workers[block - 1].end()
                self._workers[block - 1] = worker
            else:
                self._workers.append(worker)
            started.append(worker)
        for worker in started:
            worker.wait_ready(self._own)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of every sub-env (or read the attribute ``name``); one result each.

        Examples:
            >>> import gymnasium
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=2)
            >>> env.call("get_wrapper_attr", "gravity")
            (9.8, 9.8)
            >>> env.close()
        """
        return self._everywhere_tuple(
            "call", lambda start, stop: (name, args, kwargs), lambda: self._own.call(name, *args, **kwargs)
        )

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env (looked up through its wrappers).

        Examples:
            >>> import gymnasium
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=2)
            >>> env.set_attr("gravity", [9.8, 1.6]); env.get_attr("gravity")
            (9.8, 1.6)
            >>> env.close()
        """
        return self._everywhere_tuple("get_attr", lambda start, stop: name, lambda: self._own.get_attr(name))

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env: a list or tuple gives one value per sub-env, any
        other value is given to all (example: ``get_attr``)."""
        values = attribute_values(name, values, self.num_envs)
        self._everywhere_tuple(
            "set_attr",
            lambda start, stop: (name, list(values[start:stop])),
            lambda: self._own.set_attr(name, list(values[: self._bounds[1]])),
        )

    def render(self) -> tuple[Any, ...]:
        """The frames the sub-envs render (their ``render_mode`` is set when they are made).

        Examples:
            >>> import gymnasium
            >>> maker = lambda: gymnasium.make("CartPole-v1", render_mode="rgb_array")
            >>> env = ProcessVectorEnv([maker] * 2, num_workers=2)
            >>> _ = env.reset(seed=0)
            >>> [frame.shape for frame in env.render()]
            [(400, 600, 3), (400, 600, 3)]
            >>> env.close()
        """
        return self._everywhere_tuple("render", lambda start, stop: None, self._own.render)

    def _everywhere_tuple(
        self, command: str, arguments: Callable[[int, int], Any], run_own: Callable[..., Any]
    ) -> tuple[Any, ...]:
        """Run a command that changes no step state on every block (``run_own()`` on the first, here); one
        result per sub-env."""
        if self.closed:
            raise closed_env_error(command, self)
        unsent = self._send_everywhere(command, arguments, f"{command}()")
        try:
            own = run_own()
        finally:
            replies = self._gather(f"{command}()", unsent)
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
        return tuple(item for block in (own or (), *replies) for item in block or ())

    def close_extras(self, **kwargs: Any) -> None:
        """End every worker and close the sub-envs (``close()`` calls this once; closing again does
        nothing); from now on ``step()`` and ``reset()`` raise."""
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None:
            finalizer()


class _Worker(WorkerProcess):
    """One worker process, its end of the pipe, and the block of sub-envs ``first:stop`` it steps."""

    def __init__(
        self,
        block: int,
        first: int,
        stop: int,
        makers: Sequence[EnvMaker],
        options: dict[str, Any],
        batch: SharedBatch,
    ) -> None:
        """Spawn the worker of sub-envs ``first:stop`` (it makes them from ``makers`` with ``options``)."""
        self.block, self.first, self.stop = block, first, stop
        self.observation_spaces: list[Any] = []  # its sub-envs', once it is ready
        super().__init__(
            serve,
            (_pickled_makers(makers, first), options, batch, first, stop),
            name=f"vecrl-worker-{block}",
        )

    def __repr__(self) -> str:
        return f"worker {self.block} (pid {self.process.pid}, sub-envs {self.first} to {self.stop - 1})"

    def wait_ready(self, own: SyncVectorEnv) -> None:
        """Wait until the worker has made its sub-envs; raise what making them raised, or a
        RuntimeError if their spaces differ from those of ``own`` (the first block)."""
        reply = self.reply(_STARTING)
        if isinstance(reply, BaseException):
            self.end()
            raise reply
        _, action_space, *_, self.observation_spaces = reply
        first = _Spaces(own.single_observation_space, own.single_action_space)
        theirs = [_Spaces(space, action_space) for space in self.observation_spaces]
        try:
            check_same_spaces([first] * self.first + theirs, own.observation_mode)
        except RuntimeError:
            self.end()
            raise

    def reply(self, during: str) -> Any:
        """The worker's next reply: its result, or the exception to raise (a fault, its death)."""
        try:
            status, value = self.connection.recv()
        except (EOFError, OSError):
            return self.death(during)
        if status != "error":
            return value
        failure: RemoteFailure = value
        return failure.exception()

    def death(self, during: str) -> RuntimeError:
        """The error for the worker having died during ``during``."""
        how = self.how_it_ended()
        if during == _STARTING:
            return RuntimeError(
                f"The {self!r} exited ({how}) while making its sub-envs, so the env could not be made (its"
                " error, if any, is printed above). In a script run directly, guard the entry point with"
                " if __name__ == '__main__': workers are spawned, and each imports the main module."
            )
        return RuntimeError(
            f"The {self!r} died ({how}) during {during}. Its sub-envs are lost, so this env refuses step()"
            " until reset(), which starts a new worker for them."
        )


class _Spaces:
    """The spaces a worker's sub-envs have, as ``check_same_spaces`` reads them."""

    def __init__(self, observation_space: Any, action_space: Any) -> None:
        self.observation_space, self.action_space = observation_space, action_space


def _finals(ended: list[EndedEpisode], observations: Any, num_envs: int, add_info: AddInfo) -> dict[str, Any]:
    """The info keys of a step whose ``ended`` episodes the blocks recorded, as ``SyncVectorEnv`` gives them:
    the final observations (``observations`` with the ended rows replaced: ``vecrl.final_observations``)
    and infos (``vecrl.final_observations.final_infos``), each with its mask."""
    mask = np.zeros(num_envs, np.bool_)
    final_observations = copy_batch(observations)
    sub_env_infos: list[dict[str, Any]] = [{}] * num_envs
    for index, observation, info in ended:
        mask[index] = True
        write_batch_rows(final_observations, index, observation)
        sub_env_infos[index] = info
    return {
        FINAL_OBS_KEY: final_observations,
        FINAL_OBS_MASK_KEY: mask,
        **final_infos(sub_env_infos, mask, add_info, per_sub_env=True),
    }


def _pickled_makers(makers: Sequence[EnvMaker], first: int) -> bytes:
    """The makers of sub-envs ``first:...``, cloudpickled for their worker; a TypeError naming a maker that
    does not pickle."""
    parts = {f"env_makers[{first + index}] ({maker!r})": maker for index, maker in enumerate(makers)}
    return pickled(cloudpickle.dumps, list(makers), parts, "ProcessVectorEnv's worker processes")


#: What a block's arguments are when a command leaves that block alone (a masked reset that resets none of it).
_SKIP = object()


def _stop(workers: list[_Worker], own: SyncVectorEnv) -> None:
    """End every worker and close the first block's sub-envs (the env's finalizer)."""
    for worker in workers:
        worker.end()
    own.close()


def _failure_reason(error: BaseException) -> str:
    if isinstance(error, SubEnvError):
        return f"sub-env {error.index} raised {type(error.__cause__).__qualname__} in {error.during}"
    return str(error).split(".")[0]


def checked_num_workers(num_workers: Any, num_envs: int) -> int:
    """``num_workers`` for ``num_envs`` (>= 1) sub-envs: None means the number of cores (at most ``num_envs``);
    else a ValueError unless it is an int in ``[1, num_envs]``.

    Examples:
        >>> checked_num_workers(2, 8), checked_num_workers(None, 1)
        (2, 1)
    """
    if num_workers is None:
        return min(os.cpu_count() or 1, num_envs)
    count = int(num_workers) if isinstance(num_workers, Integral) and not isinstance(num_workers, bool) else 0
    if not 1 <= count <= num_envs:
        raise ValueError(
            f"num_workers must be an int from 1 to num_envs={num_envs} (processes stepping sub-envs, this one"
            f" included; each steps a block of at least one sub-env), but got {num_workers!r}. This machine"
            f" has {os.cpu_count()} cores; more workers than cores only take turns."
        )
    return count
