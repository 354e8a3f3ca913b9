"""ProcessVectorEnv: SyncVectorEnv's behaviour, with blocks of sub-envs stepped in worker processes."""

from __future__ import annotations

import select
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import cloudpickle
import gymnasium
import numpy as np
import torch

from vecrl.action_checks import ActionCheck
from vecrl.arrays import convert_to_numpy
from vecrl.autoreset import autoreset_metadata, finished_sub_envs_error
from vecrl.checks import SubEnvError, closed_env_error, failed_env_error
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl.final_observations import AddInfo, final_infos
from vecrl.infos import info_to_device, rows_of_info
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
from vecrl_gym.groups import async_layout, lockstep_layout
from vecrl_gym.gym_vector_env import GymOptions, GymVectorEnv, Seed
from vecrl_gym.shared_batch import SharedBatch, rows_of, write_rows
from vecrl_gym.sync_vector_env import SyncVectorEnv
from vecrl_gym.worker import BlockInfos, EndedEpisode, RecordingSyncVectorEnv, serve

if TYPE_CHECKING:
    from typing import Unpack

EnvMaker = Callable[[], gymnasium.Env]

_STARTING = "making its sub-envs"


class ProcessVectorEnv(GymVectorEnv):
    """``SyncVectorEnv``'s behaviour, its sub-envs split in groups stepped at once in worker processes: in
    lockstep (the default) ``num_workers`` groups, the calling process stepping the first; with
    ``batch_size=k``, async batches of ``k`` sub-envs in worker processes alone (``send`` and ``recv``).

    Every option, autoreset mode, episode budget, space and info means what it means for ``SyncVectorEnv``,
    and for the same seeds and actions the trajectories are the same. Each step's actions, observations,
    rewards and flags go through shared memory; only infos are pickled (none with ``empty_info=True``).
    Workers wait blocked on a pipe, never spinning, and are spawned (a fresh interpreter, safe with torch
    and jax loaded); a script that makes this env must guard its entry point with
    ``if __name__ == "__main__":``, as for any spawned process.

    Async batches, in envpool's names: ``async_reset()`` starts a reset of every sub-env, ``recv()`` returns
    the results of the first batch of ``batch_size`` sub-envs that is ready (whichever worker stepped it),
    their ids in ``info["env_id"]``, and ``send(actions, env_ids)`` starts their next step while the other
    batches step on. A batch is always the same sub-envs (``k`` consecutive ones), and each sub-env keeps
    its episode rules (autoreset mode, budget, seeds, parameters, final observations), so every sub-env's
    trajectory is the one lockstep gives for the same actions, whatever the order the batches come back in.
    ``step()`` and ``reset()`` still step and reset every sub-env (with no batch sent and not received).

    Faults: an exception in a sub-env is a ``vecrl.SubEnvError`` naming it, chaining the original exception
    (its traceback in the worker chained below it); a worker that dies (killed from outside) is a
    RuntimeError naming it, raised as soon as the death is seen. Either way the env refuses ``step()``
    until ``reset()``, which starts new workers for dead ones. ``close()`` ends every worker; it is
    idempotent and also runs when the env is garbage-collected or the interpreter exits. Ctrl-C (a
    KeyboardInterrupt) during a step or reset closes the env; workers themselves ignore SIGINT.

    Args:
        env_makers: functions without arguments, each making one sub-env (pickled with cloudpickle, so
            lambdas work).
        num_workers: processes that step sub-envs (default: the number of cores, at most one per sub-env,
            or per batch with ``batch_size``). In lockstep the calling process is one of them, and 1 steps
            everything there; with ``batch_size`` they are all worker processes.
        batch_size: the sub-envs ``recv()`` returns at a time (a divisor of their number); None: lockstep.

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
        >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 4, batch_size=2)
        >>> env.async_reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.recv()
        >>> obs.shape, sorted(info["env_id"].tolist()) in ([0, 1], [2, 3])
        ((2, 4), True)
        >>> env.send(np.array([0, 1]), info["env_id"])
        >>> env.close()
    """

    def __init__(
        self,
        env_makers: Iterable[EnvMaker],
        *,
        num_workers: int | None = None,
        batch_size: int | None = None,
        **options: Unpack[GymOptions],
    ) -> None:
        makers = checked_env_makers(env_makers, "ProcessVectorEnv")
        num_envs = len(makers)
        if batch_size is None:
            layout = lockstep_layout(num_envs, num_workers)
        else:
            layout = async_layout(num_envs, num_workers, batch_size)
        episode_options = self._take_options(options)
        # The options every group's SyncVectorEnv takes; results reach the device here, in the caller.
        self._block_options = {key: value for key, value in self._options.items() if key != "device"}
        self._layout = layout
        self._worker_of = layout.worker_of
        self._makers = makers
        # Group 0's env in lockstep; with batch_size, a one-sub-env env that tells the spaces and is closed.
        own = RecordingSyncVectorEnv(
            makers[: layout.groups[0][1] if layout.own else 1], **self._block_options
        )
        try:
            super().__init__(
                num_envs,
                own.single_observation_space,
                own.single_action_space,
                episode_options=episode_options,
            )
        except BaseException:
            own.close()
            raise
        self.metadata = {**own.metadata, **autoreset_metadata(self._autoreset_mode)}
        self.render_mode = own.render_mode
        self._default_params = own.default_params
        self._own: RecordingSyncVectorEnv | None = own
        if not layout.own:
            own.close()
            self._own = None
        self._check_actions = ActionCheck(self.single_action_space, num_envs, "ProcessVectorEnv")
        self._batch = SharedBatch(self.single_observation_space, self.single_action_space, num_envs, SPAWN)
        self._views = self._batch.views()
        # The worker processes: list entries are replaced when reset() restarts a dead one, and the finalizer
        # (close(), garbage collection, interpreter exit) ends those in the list then.
        self._workers: list[_Worker] = []
        self._finalizer = weakref.finalize(self, _stop, self._workers, self._own)
        self._reset_once = False
        # By group: the sub-envs (within the group) whose action its next step uses (None: all), as it
        # last reported them.
        self._group_acting: list[list[int] | None] = [None] * len(layout.groups)
        # By worker: what it was sent and has not answered, in order ((group, command) each; group None for
        # a command to all its groups).
        self._in_flight: list[deque[tuple[int | None, str]]] = [deque() for _ in layout.workers]
        # Async batches: the answers received and not yet returned by recv(), and the groups whose results
        # recv() returned that wait for send() (in the order received).
        self._ready: deque[tuple[int, str, Any]] = deque()
        self._waiting: dict[int, None] = {}
        self._action_checks: dict[int, ActionCheck] = {}
        self._pollers: dict[tuple[int, ...], _Poller] = {}
        # By group, the ids recv() gives in info["env_id"] (the same array each time: send() knows it at once)
        self._group_ids = [np.arange(start, stop) for start, stop in layout.groups]
        try:
            self._start_workers(range(len(layout.workers)))
        except BaseException:
            self.close()
            raise
        if self.observation_mode != "same":
            spaces = [env.observation_space for env in self._own.envs] if self._own is not None else []
            for worker in self._workers:
                spaces.extend(worker.observation_spaces)
            batched = observation_spaces(self.observation_mode, spaces)[1]
            assert batched is not None  # only "same" batches the single space
            self.observation_space = batched

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        """The parameters ``reset(options={"params": ...})`` sets per sub-env, as ``SyncVectorEnv``'s."""
        return self._default_params

    @property
    def num_workers(self) -> int:
        """The processes stepping sub-envs (in lockstep the calling process among them)."""
        return len(self._workers) + self._layout.own

    @property
    def batch_size(self) -> int:
        """The sub-envs ``recv()`` returns at a time (``num_envs`` in lockstep)."""
        return self._layout.batch_size or self.num_envs

    # -- stepping ------------------------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: Seed = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset as ``SyncVectorEnv.reset`` does (seeds, ``options``, ``options["reset_mask"]``); a full reset
        also starts new workers for any that died, and forgets the async batches in flight.

        Examples:
            >>> import gymnasium
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, num_workers=2)
            >>> env.reset(seed=[1, 2])[0].shape
            (2, 4)
            >>> env.close()
        """
        mask, seeds, options = self._reset_request(seed, options, started=self._reset_once)
        if mask is None:
            self._forget_batches("reset()")
        else:
            self._refuse_batches_in_flight("reset(options={'reset_mask': ...})")
        self._restart_dead_workers()
        infos = self._run_everywhere(
            "reset", self._reset_arguments(mask, seeds, options), "reset()", self._reset_own
        )
        self.failure, self._reset_once = None, True
        self._note_reset(mask)
        self._waiting = dict.fromkeys(range(len(self._layout.groups)))
        return self._results(infos, None)

    def async_reset(self, seed: Seed = None, options: dict[str, Any] | None = None) -> None:
        """Start a reset of every sub-env (seeds and options as ``reset`` takes them, but no
        ``reset_mask``); ``recv()`` then returns their first observations a batch at a time (rewards 0,
        neither flag set), as envpool's ``async_reset`` does. Batches in flight are forgotten.

        Examples:
            >>> import gymnasium
            >>> env = ProcessVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 4, batch_size=2)
            >>> env.async_reset(seed=0)
            >>> obs, reward, *_ = env.recv()
            >>> obs.shape, reward.tolist()
            ((2, 4), [0.0, 0.0])
            >>> env.close()
        """
        self._needs_batches("async_reset")
        mask, seeds, options = self._reset_request(seed, options, started=self._reset_once)
        if mask is not None:
            raise ValueError(
                "async_reset() resets every sub-env, so it takes no reset_mask; reset some sub-envs with"
                " reset(options={'reset_mask': mask}) once every batch sent has been received."
            )
        self._forget_batches("async_reset()")
        self._restart_dead_workers()
        arguments = self._reset_arguments(None, seeds, options)
        try:
            for group, (start, stop) in enumerate(self._layout.groups):
                self._send(group, "reset", arguments(start, stop), "async_reset()")
        except BaseException as error:
            self._fail_batches(error)
        self.failure, self._reset_once = None, True
        self._note_reset(None)
        self._waiting = {}

    def recv(self) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The results of the first batch of ``batch_size`` sub-envs whose step (or reset) is done:
        ``(observations, rewards, terminated, truncated, info)``, a row per sub-env of the batch, their ids
        in ``info["env_id"]`` (in order); the rest of the info (final observations and infos among it) is what
        a SyncVectorEnv of the batch's sub-envs alone gives. Waits, blocked, until one is done. Example:
        ``async_reset``."""
        self._needs_batches("recv")
        if self.failure is not None:
            raise failed_env_error(self.failure)
        if not self._ready:
            if not any(self._in_flight):
                raise RuntimeError(
                    "recv() has no batch to wait for: every batch's results were received and none was sent"
                    f" since. send() actions for the env_ids recv() returned (waiting: {self._waiting_ids()}),"
                    " or async_reset()."
                )
            try:
                while not self._ready:
                    self._ready.extend(self._arrivals("recv()"))
            except BaseException as error:
                self._fail_batches(error)
        group, command, reply = self._ready.popleft()
        if isinstance(reply, BaseException):
            self.failure = _failure_reason(reply)
            raise reply
        self._waiting[group] = None
        start, stop = self._layout.groups[group]
        views = self._views
        if command == "step":
            step = (
                views.rewards[start:stop].copy(),
                views.terminated[start:stop].copy(),
                views.truncated[start:stop].copy(),
            )
            if self._autoreset_mode == "disabled":
                ended = np.zeros(self.num_envs, np.bool_)
                ended[start:stop] = step[1] | step[2]
                self._note_ended(ended)
        else:  # (a reset: no reward, neither flag, as envpool's async_reset gives)
            step = (
                np.zeros(stop - start),
                np.zeros(stop - start, np.bool_),
                np.zeros(stop - start, np.bool_),
            )
        self._group_acting[group] = reply.acting
        if not (reply.infos or reply.ended):  # (the usual batch: its rows alone, no info to batch)
            observations = copy_batch(rows_of(views.observations, start, stop))
            return self._on_device(observations, step, {"env_id": self._group_ids[group]})
        blocks: list[BlockInfos | None] = [None] * len(self._layout.groups)
        blocks[group] = reply
        return self._results(blocks, step, group)

    def send(self, actions: Any, env_id: Any = None) -> None:
        """Start the next step of the sub-envs ``env_id`` (default: the batch ``recv()`` returned last) with
        ``actions``, a row each in that order: the ids of one or more batches ``recv()`` returned, each
        whole and in its order. Bad actions or ids are refused before any sub-env steps. Example:
        ``async_reset``."""
        self._needs_batches("send")
        if self.failure is not None:
            raise failed_env_error(self.failure)
        groups = self._groups_of(env_id)
        k = self._layout.batch_size
        assert k is not None
        check = self._action_checks.get(len(groups))
        if check is None:
            check = self._action_checks[len(groups)] = ActionCheck(
                self.single_action_space, k * len(groups), "ProcessVectorEnv.send()"
            )
        acting: list[int] | None = None
        if any(self._group_acting[group] is not None for group in groups):
            acting = [
                position * k + row
                for position, group in enumerate(groups)
                for row in (self._group_acting[group] or range(k))
            ]
        finished = self._finished
        if finished is not None:
            ids = np.concatenate([self._group_ids[group] for group in groups])
            if finished[ids].any():
                raise finished_sub_envs_error(ids[finished[ids]].tolist())
        actions = check(actions, acting)
        for position, group in enumerate(groups):
            start, stop = self._layout.groups[group]
            write_rows(self._views.actions, rows_of(actions, position * k, (position + 1) * k), start, stop)
        try:
            for group in groups:
                del self._waiting[group]
                self._send(group, "step", None, "send()")
        except BaseException as error:
            self._fail_batches(error)

    def _groups_of(self, env_id: Any) -> list[int]:
        """The groups whose sub-envs ``env_id`` names, whole and in order, each waiting for actions; a
        ValueError saying which ids send() takes otherwise."""
        if env_id is None:
            if not self._waiting:
                raise RuntimeError(
                    f"send() has no batch to step: recv() one first. {self._nothing_waiting()}"
                )
            return [next(reversed(self._waiting))]
        ids = convert_to_numpy(env_id)
        k = self._layout.batch_size
        assert k is not None
        flat = np.asarray(ids).reshape(-1)
        if flat.size == k and flat.dtype.kind in "iu":  # (one batch, the usual call)
            group = int(flat[0]) // k
            if group in self._waiting and np.array_equal(flat, self._group_ids[group]):
                return [group]
        groups: list[int] = []
        if flat.dtype.kind in "iu" and flat.size and flat.size % k == 0:
            for chunk in flat.reshape(-1, k).tolist():
                group = chunk[0] // k if 0 <= chunk[0] < self.num_envs else -1
                if group < 0 or group in groups or chunk != self._group_ids[group].tolist():
                    break
                groups.append(group)
            else:
                if all(group in self._waiting for group in groups):
                    return groups
        raise ValueError(
            f"send() takes the env_ids of batches recv() returned and that wait for actions, each batch whole"
            f" and in order, but got env_id={ids.tolist() if hasattr(ids, 'tolist') else ids!r}. Waiting:"
            f" {self._waiting_ids()} (pass info['env_id'] of recv())."
        )

    def _waiting_ids(self) -> list[list[int]]:
        return [self._group_ids[group].tolist() for group in self._waiting]

    def _nothing_waiting(self) -> str:
        in_flight = sum(len(queue) for queue in self._in_flight)
        return f"({in_flight} batches are stepping, {len(self._ready)} are done and not received.)"

    def _needs_batches(self, method: str) -> None:
        """Refuse ``method`` (send, recv, async_reset) on a closed env or one stepped in lockstep."""
        if self.closed:
            raise closed_env_error(method, self)
        if self._layout.batch_size is None:
            raise RuntimeError(
                f"{method}() steps async batches, which this ProcessVectorEnv does not have: it steps every"
                " sub-env in lockstep (step()). Make it with batch_size=k (ProcessVectorEnv(..., batch_size=k),"
                " or make_vector_env('gym::...', num_envs=n, batch_size=k)), k dividing num_envs."
            )

    def _refuse_batches_in_flight(self, method: str) -> None:
        """Refuse ``method`` (which steps or resets every sub-env at once) while async batches are stepping
        or done and not received."""
        if any(self._in_flight) or self._ready:
            raise RuntimeError(
                f"{method} steps every sub-env at once, but batches sent with send() have not all been"
                f" received: recv() them first. {self._nothing_waiting()}"
            )

    def _forget_batches(self, during: str) -> None:
        """Wait for the answers of every batch in flight and drop them, with those not received (a full
        reset follows); a dead worker's batches are dropped too (the reset restarts it)."""
        try:
            while any(self._in_flight):
                self._arrivals(during)
        except BaseException as error:
            self._fail_batches(error)
        self._ready.clear()
        self._waiting = {}

    def _fail_batches(self, error: BaseException) -> NoReturn:
        """Raise ``error``, raised while async batches run: a fault (a worker's death) leaves the env refusing
        them until a reset (which restarts the worker); a Ctrl-C closes the env (the workers' answers would
        be out of step)."""
        if not isinstance(error, Exception):
            self.close()
        elif self.failure is None:
            self.failure = _failure_reason(error)
        raise error

    def _reset_arguments(
        self, mask: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> Callable[[int, int], Any]:
        """The arguments of the reset of the group of sub-envs ``start:stop``, by ``(start, stop)``."""
        seeds = seeds or [None] * self.num_envs

        def group_arguments(start: int, stop: int) -> Any:
            if mask is not None and not mask[start:stop].any():
                return _SKIP  # the group keeps its sub-envs as they are
            group_options = None if options is None and mask is None else dict(options or {})
            if mask is not None:
                group_options["reset_mask"] = mask[start:stop]  # type: ignore[index]
            if group_options is not None and PARAMS_OPTION in group_options:  # (checked for all)
                group_options[PARAMS_OPTION] = params_rows(
                    group_options[PARAMS_OPTION], np.arange(start, stop)
                )
            group_seeds = seeds[start:stop]
            return (None if all(s is None for s in group_seeds) else group_seeds), group_options

        return group_arguments

    def _reset_own(self, seeds: Any, options: Any) -> BlockInfos:
        assert self._own is not None
        observations, _ = self._own.reset(seed=seeds, options=options)
        write_rows(self._views.observations, observations, 0, self._layout.groups[0][1])
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
        self._refuse_batches_in_flight("step()")
        self._refuse_finished()  # before anything is sent to a worker
        actions = self._check_actions(actions, self._acting())
        write_rows(self._views.actions, actions, 0, self.num_envs)
        infos = self._run_everywhere("step", lambda start, stop: None, "step()", self._step_own)
        views = self._views
        if self._autoreset_mode == "disabled":
            self._note_ended(views.terminated | views.truncated)
        self._waiting = dict.fromkeys(range(len(self._layout.groups)))
        return self._results(infos, (views.rewards.copy(), views.terminated.copy(), views.truncated.copy()))

    def _step_own(self) -> BlockInfos:
        assert self._own is not None
        stop, views = self._layout.groups[0][1], self._views
        observations, rewards, terminated, truncated, _ = self._own.step(rows_of(views.actions, 0, stop))
        write_rows(views.observations, observations, 0, stop)
        views.rewards[:stop], views.terminated[:stop], views.truncated[:stop] = rewards, terminated, truncated
        return self._own.recorded()

    def _results(
        self, blocks: list[BlockInfos | None], step: tuple[np.ndarray, ...] | None, batch: int | None = None
    ) -> Any:
        """The batched observations (a fresh copy), ``step``'s arrays and the groups' infos (``blocks``, one
        per group) batched as one SyncVectorEnv batches them, on the device; with ``batch`` (a group), those
        of that group's sub-envs alone, their ids in ``info["env_id"]``."""
        observations = copy_batch(self._views.observations)
        info: dict[str, Any] = {}
        ended: list[EndedEpisode] = []
        for group, ((start, _), block) in enumerate(zip(self._layout.groups, blocks, strict=True)):
            if block is not None:
                for index, sub_env_info in block.infos:
                    info = self._add_info(info, sub_env_info, start + index)
                ended.extend((start + index, *episode) for index, *episode in block.ended)
                self._group_acting[group] = block.acting
        if ended:
            info = {**info, **_finals(ended, observations, self.num_envs, self._add_info)}
        if batch is not None:
            start, stop = self._layout.groups[batch]
            info = {**rows_of_info(info, start, stop, self.num_envs), "env_id": self._group_ids[batch]}
            observations = rows_of(observations, start, stop)
        return self._on_device(observations, step, info)

    def _on_device(self, observations: Any, step: tuple[np.ndarray, ...] | None, info: dict[str, Any]) -> Any:
        """The results ``(observations, info)`` or ``(observations, *step, info)``, as tensors on the device
        where the env has one."""
        device = self._device
        if device is not None:
            observations = observations_to_torch(observations, device)
            info = info_to_device(info, device) if info else info
            if step is not None:
                return (observations, *(torch.from_numpy(array).to(device) for array in step), info)
        return (observations, info) if step is None else (observations, *step, info)

    def _acting(self) -> list[int] | None:
        """The sub-envs whose action the next step uses, as the groups last reported them (None: all)."""
        if all(acting is None for acting in self._group_acting):
            return None
        return [
            start + row
            for (start, stop), acting in zip(self._layout.groups, self._group_acting, strict=True)
            for row in (range(stop - start) if acting is None else acting)
        ]

    def _run_everywhere(
        self,
        command: str,
        arguments: Callable[[int, int], Any],
        during: str,
        run_own: Callable[..., Any],
    ) -> list[Any]:
        """Send ``command`` to every group in a worker (with ``arguments(start, stop)`` of its sub-envs), run
        ``run_own`` on group 0 here meanwhile in lockstep, and gather every group's result; raise the first
        fault once all replied. A group whose arguments are ``_SKIP`` is left alone; its result is None.

        A fault leaves the env refusing ``step()`` until ``reset()``; Ctrl-C closes it."""
        groups = self._layout.groups
        results: list[Any] = [None] * len(groups)
        faults: list[BaseException] = []
        try:
            for group in self._worker_of:
                group_arguments = arguments(*groups[group])
                if group_arguments is not _SKIP:
                    try:
                        self._send(group, command, group_arguments, during)
                    except RuntimeError as death:
                        results[group] = death
            if self._layout.own:
                try:
                    own_arguments = arguments(*groups[0])
                    if own_arguments is not _SKIP:
                        results[0] = run_own() if own_arguments is None else run_own(*own_arguments)
                except Exception as error:
                    faults.append(error)
            while any(self._in_flight):
                for group, _, reply in self._arrivals(during):
                    assert group is not None
                    results[group] = reply
        except BaseException as error:
            if not isinstance(error, Exception):  # Ctrl-C: the workers' replies would be out of step
                self.close()
            raise
        faults.extend(reply for reply in results if isinstance(reply, BaseException))
        if faults:
            self.failure = _failure_reason(faults[0])
            raise faults[0]
        return results

    def _send(
        self, group: int | None, command: str, arguments: Any, during: str, worker: int | None = None
    ) -> None:
        """Send ``command`` to the worker of ``group`` (None: to all groups of ``worker``); a RuntimeError if
        the worker is gone."""
        local: int | None = None
        if group is not None:
            worker, local = self._worker_of[group]
        assert worker is not None
        process = self._workers[worker]
        try:
            process.connection.send((command, local, arguments))
        except OSError:  # its end of the pipe is gone: it died
            raise process.death(during) from None
        self._in_flight[worker].append((group, command))

    def _arrivals(self, during: str) -> list[tuple[int, str, Any]]:
        """Wait (blocked on the pipes and on the processes, so a death is seen at once) until a worker with
        commands to a group in flight answers or dies; each answer then in: ``(group, command, reply)``, the
        reply an exception for a fault, and for a dead worker's every command in flight."""
        return [
            (group, command, reply) for _, group, command, reply in self._answers(during) if group is not None
        ]

    def _answers(self, during: str) -> list[tuple[int, int | None, str, Any]]:
        """``_arrivals`` with each answer's worker first, and the answers to commands to all its groups."""
        busy = tuple(w for w, queue in enumerate(self._in_flight) if queue)
        poller = self._pollers.get(busy)
        if poller is None:  # (registered once per set of busy workers, not a selector a call)
            poller = self._pollers[busy] = _Poller([self._workers[w] for w in busy], busy)
        arrived: list[tuple[int, int | None, str, Any]] = []
        for w, readable in poller.ready():
            worker, queue = self._workers[w], self._in_flight[w]
            if readable:  # one answer (or the end of a dead worker's pipe); the next wait sees any other
                group, command = queue.popleft()
                reply = worker.reply(during)
                arrived.append((w, group, command, reply))
                if not (isinstance(reply, RuntimeError) and queue and not worker.process.is_alive()):
                    continue
            death = worker.death(during)  # (its process ended: every command in flight is lost)
            arrived.extend((w, group, command, death) for group, command in queue)
            queue.clear()
        return arrived

    # -- workers -------------------------------------------------------------------------------------

    def _restart_dead_workers(self) -> None:
        dead = [index for index, worker in enumerate(self._workers) if not worker.process.is_alive()]
        if dead:
            self._start_workers(dead)

    def _start_workers(self, indices: Iterable[int]) -> None:
        """Start (or restart) the worker processes ``indices`` and wait until each has made its sub-envs."""
        started = []
        for index in indices:
            groups = [self._layout.groups[g] for g in self._layout.workers[index]]
            start, stop = groups[0][0], groups[-1][1]
            worker = _Worker(index, groups, self._makers[start:stop], self._block_options, self._batch)
            if index < len(self._workers):
                self._workers[index].end()
                self._workers[index] = worker
                self._in_flight[index].clear()
                self._pollers.clear()
            else:
                self._workers.append(worker)
            started.append(worker)
        for worker in started:
            worker.wait_ready(self.single_observation_space, self.single_action_space, self.observation_mode)

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
            "call", lambda start, stop: (name, args, kwargs), lambda own: own.call(name, *args, **kwargs)
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
        return self._everywhere_tuple("get_attr", lambda start, stop: name, lambda own: own.get_attr(name))

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env: a list or tuple gives one value per sub-env, any
        other value is given to all (example: ``get_attr``)."""
        values = attribute_values(name, values, self.num_envs)
        own_stop = self._layout.groups[0][1]
        self._everywhere_tuple(
            "set_attr",
            lambda start, stop: (name, list(values[start:stop])),
            lambda own: own.set_attr(name, list(values[:own_stop])),
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
        return self._everywhere_tuple("render", lambda start, stop: None, lambda own: own.render())

    def _everywhere_tuple(
        self, command: str, arguments: Callable[[int, int], Any], run_own: Callable[[SyncVectorEnv], Any]
    ) -> tuple[Any, ...]:
        """Run a command that changes no step state on every sub-env (``run_own(env)`` on group 0's, here, in
        lockstep); one result per sub-env. Async batches in flight are received first and kept for recv()."""
        if self.closed:
            raise closed_env_error(command, self)
        during = f"{command}()"
        while any(self._in_flight):
            self._ready.extend(self._arrivals(during))
        replies: list[Any] = [None] * len(self._workers)
        for index, worker in enumerate(self._workers):
            try:
                self._send(None, command, arguments(worker.first, worker.stop), during, worker=index)
            except RuntimeError as death:
                replies[index] = death
        own: Any = None
        try:
            if self._own is not None:
                own = run_own(self._own)
        finally:
            while any(self._in_flight):
                for worker_index, _, _, reply in self._answers(during):
                    replies[worker_index] = reply
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
    """One worker process, its end of the pipe, and the groups of sub-envs it steps (``first:stop`` in all)."""

    def __init__(
        self,
        index: int,
        groups: list[tuple[int, int]],
        makers: Sequence[EnvMaker],
        options: dict[str, Any],
        batch: SharedBatch,
    ) -> None:
        """Spawn the worker of the sub-envs of ``groups`` (it makes them from ``makers`` with ``options``)."""
        self.index, self.first, self.stop = index, groups[0][0], groups[-1][1]
        self.observation_spaces: list[Any] = []  # its sub-envs', once it is ready
        super().__init__(
            serve,
            (_pickled_makers(makers, self.first), options, batch, groups),
            name=f"vecrl-worker-{index + 1}",
        )

    def __repr__(self) -> str:
        return f"worker {self.index + 1} (pid {self.process.pid}, sub-envs {self.first} to {self.stop - 1})"

    def wait_ready(self, observation_space: Any, action_space: Any, observation_mode: Any) -> None:
        """Wait until the worker has made its sub-envs; raise what making them raised, or a RuntimeError if
        their spaces differ from ``observation_space`` and ``action_space`` (the first sub-env's)."""
        reply = self.reply(_STARTING)
        if isinstance(reply, BaseException):
            self.end()
            raise reply
        _, their_action_space, *_, self.observation_spaces = reply
        first = _Spaces(observation_space, action_space)
        theirs = [_Spaces(space, their_action_space) for space in self.observation_spaces]
        try:
            check_same_spaces([first] * self.first + theirs, observation_mode)
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


class _Poller:
    """Waits, blocked, on the pipes and the processes of some workers (``select.poll``, registered once)."""

    def __init__(self, workers: list[_Worker], indices: tuple[int, ...]) -> None:
        self._poll = select.poll()
        self._index: dict[int, tuple[int, bool]] = {}  # by fd: the worker, and whether it is the pipe
        for worker, index in zip(workers, indices, strict=True):
            for fd, pipe in ((worker.connection.fileno(), True), (worker.process.sentinel, False)):
                self._poll.register(fd, select.POLLIN)
                self._index[fd] = index, pipe

    def ready(self) -> list[tuple[int, bool]]:
        """Once a worker has answered or died: each such worker, in order, and whether its pipe has something
        to read (an answer, or the end a death leaves); False: its process ended and its pipe is empty."""
        ready: dict[int, bool] = {}
        for fd, _ in self._poll.poll():
            index, pipe = self._index[fd]
            ready[index] = ready.get(index, False) or pipe
        return sorted(ready.items())


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


def _stop(workers: list[_Worker], own: RecordingSyncVectorEnv | None) -> None:
    """End every worker and close the sub-envs stepped here, if any (the env's finalizer)."""
    for worker in workers:
        worker.end()
    if own is not None:
        own.close()


def _failure_reason(error: BaseException) -> str:
    if isinstance(error, SubEnvError):
        return f"sub-env {error.index} raised {type(error.__cause__).__qualname__} in {error.during}"
    return str(error).split(".")[0]
