"""On every gymnasium the matrix covers (0.29, 1.0, newest), make_vector_env's env is a gymnasium vector env
and that version's RecordEpisodeStatistics, given as vector_wrappers, counts the episodes right."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from packaging.version import Version

import vecrl
from vecrl.compat import GYMNASIUM_1, GYMNASIUM_VERSION


def record_episode_statistics() -> tuple[type, str]:
    """The installed gymnasium's RecordEpisodeStatistics for vector envs, and the autoreset mode it counts
    episodes by (1.0 to 1.3's assume next-step autoreset; vecrl refuses them over same-step envs)."""
    if not GYMNASIUM_1:
        return gym.wrappers.RecordEpisodeStatistics, "same_step"
    if Version("1.4") > GYMNASIUM_VERSION:
        return gym.wrappers.vector.RecordEpisodeStatistics, "next_step"
    return gym.wrappers.vector.RecordEpisodeStatistics, "same_step"


def test_the_env_is_a_vector_env_of_the_installed_gymnasium():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    assert isinstance(env, gym.vector.VectorEnv) and isinstance(env, vecrl.TorchWrapper)
    assert env.num_envs == 2 and env.get_attr("gravity") == (9.8, 9.8)
    assert env.call("get_wrapper_attr", "gravity") == (9.8, 9.8)


def test_record_episode_statistics_reports_each_episodes_length_and_return():
    wrapper, mode = record_episode_statistics()
    env = vecrl.make_vector_env(
        "gym::Pendulum-v1", num_envs=3, max_episode_steps=5, autoreset_mode=mode, vector_wrappers=[wrapper]
    )
    env.reset(seed=0)
    returns, reported = np.zeros(3), []
    for _ in range(12):
        observation, reward, terminated, truncated, info = env.step(torch.zeros(3, 1))
        assert isinstance(observation, torch.Tensor)
        returns += reward.numpy()
        if (terminated | truncated).any():
            reported.append((info["episode"]["l"].tolist(), info["episode"]["r"]))
            np.testing.assert_allclose(info["episode"]["r"], returns, rtol=1e-5)
            returns[:] = 0.0
            if mode == "next_step":  # the next step resets: reward 0, and no episode's step
                env.step(torch.zeros(3, 1))
    assert [lengths for lengths, _ in reported] == [[5, 5, 5], [5, 5, 5]]


def test_an_episode_budget_with_vector_wrappers_is_refused_saying_why():
    wrapper, _ = record_episode_statistics()
    with pytest.raises(ValueError, match="RecordEpisodeStatistics would record a NaN episode per step"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1, vector_wrappers=[wrapper])
