"""Async batches on the gym backend (``ProcessVectorEnv(..., batch_size=k)``: ``async_reset``, ``send``,
``recv``): every sub-env's trajectory is lockstep's for the same actions whatever order the batches come
back in, and every misuse is a clear error that leaves no process behind."""

from __future__ import annotations

import os
import random
import signal
import time
from collections import defaultdict
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

import vecrl
import vecrl.testing
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY
from vecrl_gym import ProcessVectorEnv, SyncVectorEnv

NUM_ENVS, BATCH = 8, 2
MASSPOLE = [0.05, 0.1, 0.2, 0.4, 0.8, 0.1, 0.3, 0.05]


@pytest.fixture
def no_process_left():
    with vecrl.testing.no_process_left():
        yield


class Jitter(gym.Wrapper):
    """CartPole whose steps and resets wait a random time (0 to 2 ms, unseeded), so that the batches of an
    async env come back in a different order on each run."""

    def step(self, action):
        time.sleep(random.random() * 0.002)
        return self.env.step(action)

    def reset(self, **kwargs):
        time.sleep(random.random() * 0.002)
        return self.env.reset(**kwargs)


def jittery() -> gym.Env:
    return Jitter(gym.make("CartPole-v1"))


def action_of(sub_env: int, step: int) -> int:
    """The action sub-env ``sub_env`` takes at its step ``step`` (the same on every path)."""
    return (sub_env * 7 + step * 3 + step // 5) % 2


Record = tuple[np.ndarray, float, bool, bool, Any]


def row(observation, reward, terminated, truncated, info, index: int, position: int) -> Record:
    final = None
    mask = info.get(FINAL_OBS_MASK_KEY)
    if mask is not None and bool(mask[position]):
        final = np.asarray(info[FINAL_OBS_KEY][position])
    return (
        np.asarray(observation[position]),
        float(reward[position]),
        bool(terminated[position]),
        bool(truncated[position]),
        final,
    )


def lockstep(steps: int, reset_options: dict | None, **options: Any) -> dict[int, list[Record]]:
    env = SyncVectorEnv([jittery] * NUM_ENVS, **options)
    observation, info = env.reset(seed=11, options=reset_options)
    zero, false = np.zeros(NUM_ENVS), np.zeros(NUM_ENVS, bool)
    records = {i: [row(observation, zero, false, false, {}, i, i)] for i in range(NUM_ENVS)}
    for t in range(steps):
        actions = np.array([action_of(i, t) for i in range(NUM_ENVS)])
        try:
            results = env.step(actions)
        except RuntimeError:  # (autoreset disabled: a sub-env has finished)
            break
        for i in range(NUM_ENVS):
            records[i].append(row(*results, i, i))
    env.close()
    return records


def in_batches(
    steps: int, reset_options: dict | None, **options: Any
) -> tuple[dict[int, list[Record]], list]:
    env = ProcessVectorEnv([jittery] * NUM_ENVS, batch_size=BATCH, num_workers=2, **options)
    env.async_reset(seed=11, options=reset_options)
    records: dict[int, list[Record]] = defaultdict(list)
    order, stepping = [], NUM_ENVS // BATCH
    while stepping:
        results = env.recv()
        ids = results[-1]["env_id"].tolist()
        order.append(ids[0] // BATCH)
        for position, i in enumerate(ids):
            records[i].append(row(*results, i, position))
        done = [r[2] or r[3] for i in ids for r in records[i][-1:]]
        if len(records[ids[0]]) > steps or (options.get("autoreset_mode") == "disabled" and any(done)):
            stepping -= 1
            continue
        env.send(np.array([action_of(i, len(records[i]) - 1) for i in ids]), results[-1]["env_id"])
    env.close()
    return records, order


def same(a: list[Record], b: list[Record]) -> bool:
    for x, y in zip(a, b, strict=False):
        rewards = np.array([x[1], y[1]])
        if not (np.array_equal(x[0], y[0], equal_nan=True) and x[2:4] == y[2:4]):
            return False
        if not (rewards[0] == rewards[1] or np.isnan(rewards).all()):
            return False
        if (x[4] is None) != (y[4] is None) or (x[4] is not None and not np.array_equal(x[4], y[4])):
            return False
    return True


@pytest.mark.races  # (the batches' order is the workers' timing)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"autoreset_mode": "next_step"},
        {"autoreset_mode": "disabled"},
        {"num_episodes": 2},
        {"autoreset_mode": "next_step", "num_episodes": 1},
    ],
    ids=["same_step", "next_step", "disabled", "budget", "next_step-budget"],
)
def test_every_sub_envs_trajectory_is_locksteps_whatever_order_the_batches_come_in(options, no_process_left):
    steps = 40
    reset_options = {"params": {"masspole": MASSPOLE}}
    expected = lockstep(steps, reset_options, **options)
    for _ in range(2):
        got, order = in_batches(steps, reset_options, **options)
        for i in range(NUM_ENVS):
            compared = min(len(got[i]), len(expected[i]))
            assert compared >= 2, (i, len(got[i]), len(expected[i]))
            if options.get("autoreset_mode") != "disabled":
                assert compared == steps + 1
            assert same(got[i][:compared], expected[i][:compared]), i
        assert sorted(set(order)) == list(range(NUM_ENVS // BATCH))
    if options.get("num_episodes") == 2:  # the budget ran out within the steps: NaN rows came back alike
        assert any(np.isnan(r[1]) for i in range(NUM_ENVS) for r in got[i])


def test_make_vector_env_gives_async_batches_that_speak_torch(no_process_left):
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=4, batch_size=2, num_workers=2, discrete_to_continuous_act=True
    )
    env.async_reset(seed=0)
    seen = {(0, 1): 0, (2, 3): 0}
    while min(seen.values()) < 3:  # (until each batch came back 3 times, in whatever order: no clock)
        observation, reward, terminated, truncated, info = env.recv()
        assert isinstance(observation, torch.Tensor) and observation.shape == (2, 4)
        assert reward.dtype == torch.float64 and terminated.dtype == torch.bool
        seen[tuple(info["env_id"].tolist())] += 1
        env.send(torch.tensor([[0.2, 0.9], [0.8, 0.1]]), info["env_id"])
    with pytest.raises(RuntimeError, match="recv"):  # the batches sent and not received: step() refuses
        env.step(torch.zeros(4, 2))
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.recv()


def test_sending_for_ids_not_received_or_a_wrong_batch_is_refused_before_anything_steps(no_process_left):
    env = ProcessVectorEnv([lambda: gym.make("CartPole-v1")] * 4, batch_size=2, num_workers=2)
    with pytest.raises(RuntimeError, match="not reset|before reset|no batch"):
        env.send(np.zeros(2, np.int64))
    env.async_reset(seed=0)
    with pytest.raises(RuntimeError, match="no batch to step: recv"):
        env.send(np.zeros(2, np.int64))
    ids = env.recv()[-1]["env_id"]
    other = [2, 3] if ids.tolist() == [0, 1] else [0, 1]
    with pytest.raises(ValueError, match=r"env_id=\[\d, \d\]\. Waiting: \[\[\d, \d\]\]"):
        env.send(np.zeros(2, np.int64), other)  # still stepping
    with pytest.raises(ValueError, match="Waiting"):
        env.send(np.zeros(2, np.int64), ids[::-1])  # out of order
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        env.send(np.zeros(3, np.int64), ids)
    with pytest.raises(ValueError, match="out of range|Discrete"):
        env.send(np.array([0, 5]), ids)
    env.send(np.zeros(2, np.int64), ids)  # nothing was half-sent: the right call still works
    env.recv(), env.recv()
    with pytest.raises(RuntimeError, match="no batch to wait for"):
        env.recv()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.recv()


@pytest.mark.races
def test_a_worker_that_dies_mid_batch_is_an_error_naming_it_and_reset_recovers(no_process_left):
    env = ProcessVectorEnv([lambda: gym.make("CartPole-v1")] * 4, batch_size=2, num_workers=2)
    env.async_reset(seed=0)
    for _ in range(2):
        ids = env.recv()[-1]["env_id"]
        env.send(np.zeros(2, np.int64), ids)
    victim = env._workers[1].process
    os.kill(victim.pid, signal.SIGKILL)
    victim.join()  # (an event: the process has ended; its batch may have been answered before)
    with pytest.raises(RuntimeError, match=r"worker 2 \(pid \d+, sub-envs 2 to 3\) died \(signal SIGKILL\)"):
        for _ in range(3):  # the death is seen at the recv or the send that reaches the dead worker
            ids = env.recv()[-1]["env_id"]
            env.send(np.zeros(2, np.int64), ids)
    with pytest.raises(RuntimeError, match="reset"):
        env.send(np.zeros(2, np.int64), [0, 1])
    env.async_reset(seed=0)  # starts a new worker
    assert sorted(tuple(env.recv()[-1]["env_id"].tolist()) for _ in range(2)) == [(0, 1), (2, 3)]
    env.close()


def test_lockstep_envs_refuse_async_calls_and_bad_batch_sizes_in_one_line(no_process_left):
    with pytest.raises(
        TypeError, match=r"SyncVectorEnv\(\) steps every sub-env at once, so it takes no batch_size"
    ):
        SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2, batch_size=1)
    with pytest.raises(
        ValueError, match=r"batch_size must be an int that divides num_envs=6 .* Sizes that fit: 1, 2, 3, 6"
    ):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=6, batch_size=4)
    with pytest.raises(ValueError, match=r"num_workers must be an int from 1 to num_envs / batch_size = 2"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, batch_size=2, num_workers=3)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_workers=2)
    with pytest.raises(
        RuntimeError, match=r"recv\(\) steps async batches, which this ProcessVectorEnv does not have"
    ):
        env.recv()
    env.close()
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(
        AttributeError, match=r"send\(\) steps async batches of sub-envs, which SyncVectorEnv"
    ):
        env.send(torch.zeros(2, dtype=torch.int64))
    with pytest.raises(ValueError, match="batch_size"):
        vecrl.make_vector_env("gym::CartPole-v1", batch_size=2)  # one plain env
