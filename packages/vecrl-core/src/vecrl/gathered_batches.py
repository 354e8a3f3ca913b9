"""Async batches (envpool's ``async_reset``, ``send``, ``recv``) for any host backend, gathered into lockstep
steps: a backend of ``vecrl.HostVectorEnv`` made with ``batch_size=k`` hands its sub-envs out ``k`` at a time,
in order, and steps them all once every batch's actions are sent. Its trajectories are lockstep's by
construction (the same ``step()``), so a loop written in envpool's shape (CleanRL's async PPO) runs on any
backend unchanged; the speed of batches that step while others wait is a backend's own (vecrl-gym's worker
processes, envpool's threads).

Examples:
    >>> import numpy as np
    >>> from gymnasium.spaces import Box, Discrete
    >>> from vecrl.host_vector_env import HostVectorEnv
    >>> class Clock(HostVectorEnv):
    ...     def __init__(self, num_envs, batch_size=None):
    ...         super().__init__(num_envs, Box(0.0, 9.0, (1,), np.float32), Discrete(2), batch_size=batch_size)
    ...         self.time = np.zeros(num_envs, np.float32)
    ...     def reset_rows(self, ids, seeds, options):
    ...         self.time[:] = 0.0
    ...         return self.time[:, None].copy(), {}
    ...     def step_rows(self, actions, ids):
    ...         self.time += 1.0
    ...         return self.time[:, None].copy(), np.ones(4), self.time > 9, self.time < 0, {}
    >>> env = Clock(4, batch_size=2)
    >>> env.async_reset(seed=0)
    >>> observation, reward, terminated, truncated, info = env.recv()
    >>> info["env_id"].tolist()
    [0, 1]
    >>> env.send(np.zeros(2, np.int64), info["env_id"])
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from vecrl.checks import checked_batch_size, closed_env_error
from vecrl.infos import rows_of_info
from vecrl.nests import first_leaf, map_batch


class GatheredBatches:
    """The async batches of ``env`` (a ``HostVectorEnv``), ``batch_size`` sub-envs each (see the module)."""

    def __init__(self, env: Any, batch_size: int) -> None:
        self.env = env
        self.size = checked_batch_size(batch_size, env.num_envs)
        self.count = env.num_envs // self.size
        self.ready: deque[int] = deque()  # the batches whose results wait for recv(), in order
        self.waiting: set[int] = set()  # the batches received, waiting for their actions
        self.sent: dict[int, Any] = {}  # the actions sent, by batch, until every batch's are in
        self.results: tuple[Any, ...] | None = None

    def async_reset(self, seed: Any = None, options: Any = None) -> None:
        """Reset every sub-env (as ``reset``); ``recv()`` then hands their observations out a batch at a time."""
        observation, info = self.env.reset(seed=seed, options=options)
        flags = np.zeros(self.env.num_envs, np.bool_)
        self.results = (observation, np.zeros(self.env.num_envs), flags, flags, info)
        self._start()

    def recv(self) -> tuple[Any, ...]:
        """The next batch's results, as ``step()`` gives them for its rows, its ids in ``info["env_id"]``."""
        if getattr(self.env, "closed", False):
            raise closed_env_error("recv", self.env)
        if not self.ready or self.results is None:
            raise RuntimeError(
                "recv() has no batch to hand out: every batch received waits for its actions (send them with"
                " send(actions, info['env_id'])), or async_reset() was not called."
            )
        batch = self.ready.popleft()
        self.waiting.add(batch)
        start, stop = batch * self.size, (batch + 1) * self.size
        observation, reward, terminated, truncated, info = self.results
        rows = (map_batch(lambda leaf: leaf[start:stop], observation), reward[start:stop])
        info = {**rows_of_info(info, start, stop, self.env.num_envs), "env_id": np.arange(start, stop)}
        return (*rows, terminated[start:stop], truncated[start:stop], info)

    def send(self, action: Any, env_id: Any) -> None:
        """Give the batch ``env_id`` (as ``recv()`` handed it out) its ``action``; once every batch has its
        actions, step every sub-env with them."""
        ids = np.asarray(env_id).ravel()
        batch = int(ids[0]) // self.size if len(ids) else -1
        if batch not in self.waiting or not np.array_equal(
            ids, np.arange(batch * self.size, (batch + 1) * self.size)
        ):
            raise ValueError(
                f"send() got env_id {ids.tolist()}, which is no batch received and waiting for its actions (the"
                f" batches waiting: {sorted(self.waiting)}, {self.size} sub-envs each); send the ids recv() gave."
            )
        rows = len(first_leaf(action))
        if rows != self.size:
            raise ValueError(
                f"send() got actions for {rows} sub-envs, for a batch of {self.size}: give one each."
            )
        self.waiting.discard(batch)
        self.sent[batch] = action
        if len(self.sent) < self.count:
            return
        actions = map_batch(
            lambda *leaves: np.concatenate(leaves), *(self.sent[b] for b in range(self.count))
        )
        try:
            self.results = self.env.step(actions)
        except Exception:  # (refused before anything stepped, as a bad action is: this batch may send again)
            del self.sent[batch]
            self.waiting.add(batch)
            raise
        self._start()

    def _start(self) -> None:
        self.ready, self.waiting, self.sent = deque(range(self.count)), set(), {}
