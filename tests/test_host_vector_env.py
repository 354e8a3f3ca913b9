"""A backend written on ``vecrl.HostVectorEnv`` says only how to reset and step a set of its sub-envs, and
passes vecrl's whole conformance spec (``vecrl.testing``): modes, budgets, final observations, masked
resets, seeds, errors, close."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Dict, Discrete

import vecrl
from vecrl import testing
from vecrl.host_vector_env import HostVectorEnv


class RandomWalk(HostVectorEnv):
    """Each sub-env walks from a random start by +-1 and noise of its own random stream; an episode ends past
    +-3 (terminated) or after ``time_limit`` steps (truncated). Its info counts each sub-env's steps."""

    def __init__(self, num_envs: int, time_limit: int = 4, **episode_options) -> None:
        self._take_episode_options(**episode_options)
        super().__init__(num_envs, Box(-np.inf, np.inf, (2,), np.float32), Discrete(2))
        self.time_limit = time_limit
        self.rngs = [np.random.default_rng() for _ in range(num_envs)]
        self.position = np.zeros(num_envs, np.float32)
        self.time = np.zeros(num_envs, np.int64)
        self.stepped: list[list[int]] = []  # the sub-envs of each _step_rows call

    def _reset_rows(self, ids, seeds, options):
        ids = np.arange(self.num_envs) if ids is None else ids
        for k, i in enumerate(ids):
            if seeds is not None and seeds[k] is not None:
                self.rngs[i] = np.random.default_rng(seeds[k])
            self.position[i] = self.rngs[i].uniform(-1.0, 1.0)
            self.time[i] = 0
        return self._observe(ids), {"time": self.time[ids].copy()}

    def _step_rows(self, actions, ids):
        ids = np.arange(self.num_envs) if ids is None else ids
        self.stepped.append(ids.tolist())
        for k, i in enumerate(ids):
            self.position[i] += 2.0 * actions[k] - 1.0 + self.rngs[i].normal(0.0, 0.1)
            self.time[i] += 1
        terminated = np.abs(self.position[ids]) > 3.0
        truncated = ~terminated & (self.time[ids] >= self.time_limit)
        return (
            self._observe(ids),
            -np.abs(self.position[ids]),
            terminated,
            truncated,
            {"time": self.time[ids].copy()},
        )

    def _observe(self, ids):
        return np.stack([self.position[ids], self.time[ids].astype(np.float32)], axis=1)


def make_walk(env_name, *, num_envs=None, **kwargs):
    return RandomWalk(num_envs, **kwargs)


@pytest.fixture(scope="module")
def walk():
    registration = vecrl.register_backend(
        vecrl.Backend("walk", make=make_walk, keywords=("num_episodes", "autoreset_mode", "seed_rule"))
    )
    yield testing.maker("walk")
    registration.unregister()


def test_a_host_backend_passes_the_conformance_spec(walk):
    testing.check_backend(walk, "Walk", num_envs=3)
    testing.check_autoreset_modes(walk, "Walk", num_envs=3, num_steps=12)
    testing.check_seed_lists(walk, "Walk", num_envs=3)


def test_next_step_resets_the_ended_sub_envs_itself_and_reports_their_reset_info():
    env = RandomWalk(3, time_limit=2, autoreset_mode="next_step")
    env.reset(seed=0)
    env.step(np.ones(3, np.int64))
    _, _, terminated, truncated, _ = env.step(np.ones(3, np.int64))
    assert (terminated | truncated).all()  # every episode ends by its time limit
    observation, reward, terminated, truncated, info = env.step(np.array([1, 7, 1]))  # (7 is ignored)
    assert not (terminated | truncated).any() and (reward == 0).all() and reward.dtype == np.float64
    assert (info["time"] == 0).all() and (observation[:, 1] == 0).all()
    assert len(env.stepped) == 2  # the reset step stepped no sub-env


def test_spent_sub_envs_are_not_stepped_and_report_nan_rows():
    env = RandomWalk(3, time_limit=2, num_episodes=1)
    env.reset(seed=1)
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step(np.zeros(3, np.int64))
    assert len(env.stepped) == 2  # the third step had no live sub-env to step
    assert np.isnan(observation).all() and np.isnan(reward).all() and terminated.all() and truncated.all()
    env.reset(options={"reset_mask": np.array([False, True, False])})
    env.step(np.zeros(3, np.int64))
    assert env.stepped[-1] == [1]


def test_a_masked_reset_keeps_the_other_rows_and_widens_their_info():
    env = RandomWalk(3, autoreset_mode="disabled")
    first, _ = env.reset(seed=2)
    observation, info = env.reset(
        seed=[None, 9, None], options={"reset_mask": torch.tensor([False, True, False])}
    )
    again, _ = RandomWalk(1).reset(seed=[9])
    assert (observation[[0, 2]] == first[[0, 2]]).all() and (observation[1] == again[0]).all()
    assert info["time"].shape == (3,)


def test_array_observations_only():
    class NestedEnv(HostVectorEnv):
        def __init__(self):
            self._take_episode_options()
            super().__init__(2, Dict({"x": Discrete(2)}), Discrete(2))

    with pytest.raises(TypeError, match="array observations"):
        NestedEnv()
