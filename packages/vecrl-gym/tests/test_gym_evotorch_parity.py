"""With the same seed and actions, SyncVectorEnv reproduces EvoTorch 0.6.1's SyncVectorEnv step for step.

Needs evotorch (installed only for benchmarks; skipped elsewhere). The plain-loop parity tests in
test_gym_sync_vector_env.py and test_gym_episode_budget.py check the same behaviour without it.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gym_helpers import random_actions

import vecrl
from vecrl_gym import SyncVectorEnv

evotorch_vecrl = pytest.importorskip("evotorch.neuroevolution.net.vecrl")


def assert_same_step(ours, theirs):
    for a, b in zip(ours[:4], theirs[:4], strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize(
    ("env_id", "num_episodes", "make_kwargs"),
    [("CartPole-v1", 2, {}), ("CartPole-v1", None, {}), ("Pendulum-v1", 1, {"max_episode_steps": 6})],
)
def test_sync_vector_env_matches_evotorch_including_unseeded_resets_after_the_budget(
    env_id, num_episodes, make_kwargs
):
    makers = [lambda: gym.make(env_id, **make_kwargs)] * 3
    ours = SyncVectorEnv(makers, num_episodes=num_episodes)
    theirs = evotorch_vecrl.SyncVectorEnv(makers, num_episodes=num_episodes)
    actions = random_actions(ours, 80, seed=1)

    np.testing.assert_array_equal(ours.reset(seed=7)[0], theirs.reset(seed=7)[0])
    for a in actions:
        assert_same_step(ours.step(a), theirs.step(a))
    # Unseeded resets continue each sub-env's own random stream: they match only if the sub-envs were
    # reset exactly as often as EvoTorch resets them (including when a budget runs out).
    np.testing.assert_array_equal(ours.reset()[0], theirs.reset()[0])
    for a in actions[:20]:
        assert_same_step(ours.step(a), theirs.step(a))
    ours.seed(3)
    theirs.seed(3)
    np.testing.assert_array_equal(ours.reset()[0], theirs.reset()[0])


def test_make_vector_env_matches_evotorchs_make_vector_env():
    ours = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    theirs = evotorch_vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    assert torch.equal(ours.reset(seed=5)[0], theirs.reset(seed=5)[0])
    generator = torch.Generator().manual_seed(0)
    for _ in range(60):
        action = torch.randint(0, 2, (4,), generator=generator)
        for a, b in zip(ours.step(action)[:4], theirs.step(action)[:4], strict=True):
            torch.testing.assert_close(a, b, equal_nan=True, rtol=0, atol=0)
