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
from vecrl_gym import ProcessVectorEnv, SyncVectorEnv


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
    with pytest.raises(
        ValueError, match="RecordEpisodeStatistics would record an empty or NaN episode per step"
    ):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1, vector_wrappers=[wrapper])
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1)
    with pytest.raises(ValueError, match="num_episodes=1 cannot be combined with vector_wrappers"):
        vecrl.numpy_view.with_vector_wrappers(env, [wrapper])


@pytest.mark.parametrize("num_workers", [None, 2], ids=["sync", "workers"])
def test_gymnasium_s_wrapper_around_a_budget_env_made_by_hand_is_refused_at_its_reset(num_workers):
    # it recorded an empty episode (return 0, length 0) on every step after the budget was spent
    wrapper, mode = record_episode_statistics()
    kwargs = {} if num_workers is None else {"num_workers": num_workers}
    makers = [lambda: gym.make("CartPole-v1")] * 2
    env = (SyncVectorEnv if num_workers is None else ProcessVectorEnv)(
        makers, num_episodes=1, autoreset_mode=mode, **kwargs
    )
    wrapped = wrapper(env)
    with pytest.raises(
        ValueError, match=f"num_episodes=1 cannot be combined with gymnasium's {wrapper.__name__}"
    ):
        wrapped.reset(seed=0)
    env.reset(seed=0)  # unwrapped, the budget works
    for _ in range(600):
        *_, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.int64))
    assert (terminated & truncated).all()  # both spent
    env.close()
    made = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1)  # through the TorchWrapper
    with pytest.raises(
        ValueError, match=f"num_episodes=1 cannot be combined with gymnasium's {wrapper.__name__}"
    ):
        wrapper(made).reset(seed=0)
    made.close()
    unbudgeted = wrapper(SyncVectorEnv(makers, autoreset_mode=mode))  # no budget: the wrapper counts
    unbudgeted.reset(seed=0)
    unbudgeted.close()
