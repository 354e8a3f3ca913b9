"""The loop of a worker process: its groups of sub-envs, each a SyncVectorEnv, stepped on the caller's word.

A worker holds one group in lockstep (``ProcessVectorEnv.step`` steps every group at once) and several with
``batch_size`` (``send`` and ``recv`` step one group at a time, each in the order the caller sent them).
Arrays go through shared memory (``SharedBatch``); the pipe carries only the command and, back, the
block's infos unbatched (none when ``empty_info``), which the caller batches in sub-env order. An exception
is sent back as a ``vecrl.processes.RemoteFailure``, which the caller raises with the original type,
message and traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing.connection import Connection
from operator import itemgetter
from typing import Any

import cloudpickle
import numpy as np

from vecrl.nests import map_batch
from vecrl.processes import RemoteFailure, ignore_interrupts, messages
from vecrl_gym.shared_batch import SharedBatch, rows_of, write_rows
from vecrl_gym.sync_vector_env import SyncVectorEnv

#: A sub-env whose episode ended at a step: its index (within the block), last observation and last info.
EndedEpisode = tuple[int, Any, dict[str, Any]]


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

    def _finals(self, observation: Any, info: Any, ended: np.ndarray) -> dict[str, Any]:
        """Record the ended episodes (their last observations, the rows of the step's ``observation``, and
        infos) for the caller to batch; no info keys here."""
        for index in np.flatnonzero(ended).tolist():
            last = map_batch(itemgetter(index), observation)
            self.ended.append((index, last, info[index] if info else {}))
        return {}

    def recorded(self) -> BlockInfos:
        """The infos recorded since the last call (sub-envs numbered within the block)."""
        recorded = BlockInfos(self.infos, self.ended, self.acting_rows())
        self.infos, self.ended = [], []
        return recorded


@dataclass(frozen=True)
class BlockInfos:
    """A block's infos of one step or reset: ``(index, info)`` in the order the sub-envs gave them, the
    episodes that ended (``(index, last observation, last info)``) and the sub-envs whose action the next
    step uses (``SyncVectorEnv.acting_rows``)."""

    infos: list[tuple[int, dict[str, Any]]]
    ended: list[EndedEpisode]
    acting: list[int] | None


def serve(
    connection: Connection,
    makers: bytes,
    options: dict[str, Any],
    batch: SharedBatch,
    groups: list[tuple[int, int]],
) -> None:
    """Make the sub-envs of ``groups`` (``(start, stop)`` each, consecutive) from the cloudpickled ``makers``,
    one ``RecordingSyncVectorEnv`` a group, and serve the caller's commands ``(command, group, arguments)``
    (``group`` the index among this worker's, None for all of them) until it asks the worker to exit or goes
    away."""
    ignore_interrupts()
    first = groups[0][0]
    envs: list[RecordingSyncVectorEnv] = []
    try:
        every_maker = cloudpickle.loads(makers)
        for start, stop in groups:
            envs.append(RecordingSyncVectorEnv(every_maker[start - first : stop - first], **options))
    except BaseException as error:
        for env in envs:
            env.close()
        connection.send(("error", RemoteFailure.of(error, first)))
        return
    try:
        env = envs[0]
        connection.send(
            (
                "ready",
                (
                    env.single_observation_space,
                    env.single_action_space,
                    env.metadata,
                    env.render_mode,
                    # for observation_mode="different"
                    [sub_env.observation_space for group in envs for sub_env in group.envs],
                ),
            )
        )
        views = batch.views()
        for command, group, arguments in messages(connection):
            try:
                if group is None:
                    reply = _run_on_all(envs, groups, command, arguments)
                else:
                    start, stop = groups[group]
                    reply = _run(envs[group], views, start, stop, command, arguments)
            except Exception as error:
                offset = first if group is None else groups[group][0]
                connection.send(("error", RemoteFailure.of(error, offset)))
            else:
                connection.send(("ok", reply))
    finally:
        for env in envs:
            env.close()


def _run_on_all(
    envs: list[RecordingSyncVectorEnv], groups: list[tuple[int, int]], command: str, arguments: Any
) -> tuple[Any, ...]:
    """Carry out a command that changes no step state on every group; one result per sub-env."""
    results: list[Any] = []
    first = groups[0][0]
    for env, (start, stop) in zip(envs, groups, strict=True):
        if command == "set_attr":
            name, values = arguments
            env.set_attr(name, values[start - first : stop - first])
            continue
        results.extend(_run(env, None, start, stop, command, arguments))
    return tuple(results)


def _run(env: RecordingSyncVectorEnv, views: Any, start: int, stop: int, command: str, arguments: Any) -> Any:
    """Carry out one command on a group's env; the reply to send back."""
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
    if command == "render":
        return env.render()
    raise ValueError(f"unknown worker command {command!r}")
