"""HostVectorEnv.pause: paused sub-envs cost nothing and report a spent budget's results until a reset
restarts them; a full reset drops a pause made on an env without a budget."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from vecrl import EpisodeOptions, HostVectorEnv


class Clock(HostVectorEnv):
    """Each sub-env counts its steps (an episode lasts 3); ``stepped`` counts each sub-env's steps."""

    def __init__(self, num_envs: int, **options) -> None:
        space = Box(0.0, 10.0, (1,), np.float32)
        super().__init__(num_envs, space, Discrete(2), episode_options=EpisodeOptions(**options))
        self.time = np.zeros(num_envs, np.float32)
        self.stepped = np.zeros(num_envs, np.int64)

    def reset_rows(self, ids, seeds, options):
        ids = np.arange(self.num_envs) if ids is None else ids
        self.time[ids] = 0.0
        return self.time[ids, None].copy(), {}

    def step_rows(self, actions, ids):
        ids = np.arange(self.num_envs) if ids is None else ids
        self.time[ids] += 1.0
        self.stepped[ids] += 1
        time = self.time[ids]
        return time[:, None].copy(), np.ones_like(time, np.float64), time >= 3.0, time < 0.0, {}


def _step(env: Clock, times: int = 1):
    for _ in range(times):
        result = env.step(np.zeros(env.num_envs, np.int64))
    return result


def test_a_paused_sub_env_is_not_stepped_until_a_masked_reset():
    env = Clock(3)
    env.reset()
    env.pause(np.array([False, True, False]))
    obs, reward, terminated, truncated, _ = _step(env, 5)
    assert env.stepped.tolist() == [5, 0, 5]
    assert np.isnan(reward[1]) and terminated[1] and truncated[1] and np.isnan(obs[1, 0])
    env.reset(options={"reset_mask": np.array([False, True, False])})
    _step(env, 2)
    assert env.stepped.tolist() == [7, 2, 7]


def test_a_full_reset_drops_the_pause_and_the_budget_it_made():
    env = Clock(2)
    env.reset()
    env.pause(np.array([True, True]))
    _step(env)
    env.reset()
    _, reward, _, _, _ = _step(env, 4)  # past an episode's end: same-step autoreset as before
    assert reward.tolist() == [1.0, 1.0] and env.stepped.tolist() == [4, 4]


def test_pause_under_a_budget_spends_it():
    env = Clock(2, num_episodes=2)
    env.reset()
    env.pause(np.array([True, False]))
    _step(env, 6)
    assert env.stepped.tolist() == [0, 6]


def test_pause_refuses_other_autoreset_modes_and_other_shapes():
    with pytest.raises(
        ValueError, match="needs same_step autoreset; this env's autoreset mode is 'next_step'"
    ):
        Clock(2, autoreset_mode="next_step").pause(np.array([True, False]))
    with pytest.raises(ValueError, match=r"a bool per sub-env, shape \(2,\); got shape \(3,\)"):
        Clock(2).pause(np.array([True, False, True]))
