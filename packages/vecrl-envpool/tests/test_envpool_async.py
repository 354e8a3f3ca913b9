"""envpool's async mode through vecrl (``batch_size < num_envs``): its results are envpool's own for the same
seeds and actions, every sub-env's trajectory is lockstep's, and misuse is a clear error."""

from __future__ import annotations

from collections import defaultdict

import envpool
import numpy as np
import pytest
import torch

import vecrl

NUM_ENVS, BATCH, STEPS = 8, 2, 60


def action_of(sub_env: int, step: int) -> int:
    return (sub_env + step * 3 + step // 7) % 2


def async_loop(env, received) -> dict[int, list[tuple]]:
    """Run every sub-env STEPS steps through send/recv; each sub-env's (observation, reward, terminated,
    truncated) in order."""
    records: dict[int, list[tuple]] = defaultdict(list)
    left = NUM_ENVS
    while left:
        observation, reward, terminated, truncated, info = received(env)
        ids = np.asarray(info["env_id"]).tolist()
        for position, i in enumerate(ids):
            records[i].append(
                (
                    np.asarray(observation[position]).tolist(),
                    float(reward[position]),
                    bool(terminated[position]),
                    bool(truncated[position]),
                )
            )
        sending = [i for i in ids if len(records[i]) <= STEPS]
        left -= len(ids) - len(sending)
        if sending:
            env.send(
                np.array([action_of(i, len(records[i]) - 1) for i in sending]), np.array(sending, np.int32)
            )
    return records


def test_async_results_are_envpools_own_and_every_trajectory_locksteps():
    ours = vecrl.make_vector_env(
        "envpool::CartPole-v1", num_envs=NUM_ENVS, batch_size=BATCH, autoreset_mode="next_step", num_threads=2
    )
    ours.async_reset(seed=3)
    got = async_loop(ours, lambda env: env.recv())
    ours.close()
    theirs = envpool.make(
        "CartPole-v1", env_type="gymnasium", num_envs=NUM_ENVS, batch_size=BATCH, seed=3, num_threads=2
    )
    theirs.async_reset()
    expected = async_loop(theirs, lambda env: env.recv())
    assert got == expected
    lockstep = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=NUM_ENVS, autoreset_mode="next_step")
    observation, _ = lockstep.reset(seed=3)
    rows = {i: [(observation[i].tolist(), 0.0, False, False)] for i in range(NUM_ENVS)}
    for t in range(STEPS):
        results = lockstep.step(torch.tensor([action_of(i, t) for i in range(NUM_ENVS)]))
        for i in range(NUM_ENVS):
            rows[i].append(
                (results[0][i].tolist(), float(results[1][i]), bool(results[2][i]), bool(results[3][i]))
            )
    assert got == rows
    assert any(r[2] for i in rows for r in rows[i])  # episodes ended and restarted within the steps


def test_step_gathers_every_batch_and_misuse_is_refused():
    env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=4, batch_size=2, autoreset_mode="next_step")
    observation, info = env.reset(seed=0)  # every batch gathered, in sub-env order
    assert observation.shape == (4, 4)
    assert env.step(torch.zeros(4, dtype=torch.int64))[0].shape == (4, 4)
    env.async_reset(seed=0)
    _, _, _, _, info = env.recv()
    with pytest.raises(ValueError, match="wait for actions"):
        env.send(torch.zeros(2, dtype=torch.int64), torch.tensor([9, 9]))
    with pytest.raises(RuntimeError, match="recv"):
        env.step(torch.zeros(4, dtype=torch.int64))
    with pytest.raises(ValueError, match="shape"):
        env.send(torch.zeros(3, dtype=torch.int64), info["env_id"])
    env.send(torch.zeros(2, dtype=torch.int64), info["env_id"])
    with pytest.raises(ValueError, match="reset_mask"):
        env.async_reset(options={"reset_mask": np.array([True, False, False, False])})
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.recv()
