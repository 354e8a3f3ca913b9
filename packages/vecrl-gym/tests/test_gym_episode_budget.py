"""num_episodes: each sub-env runs a fixed number of episodes, then reports NaN until the next reset."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gym_helpers import hand_rollout, random_actions, sub_seeds

from vecrl.compat import FINAL_OBS_KEY
from vecrl_gym import SyncVectorEnv


def pendulum_env(num_envs: int, max_steps: int, **kwargs) -> SyncVectorEnv:
    return SyncVectorEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=max_steps)] * num_envs, **kwargs)


def test_the_last_budgeted_episode_reports_its_final_step_then_nan_until_reset():
    env = pendulum_env(2, max_steps=3, num_episodes=2)
    actions = [np.zeros((2, 1), dtype=np.float32)] * 8
    _, expected, _ = hand_rollout(
        "Pendulum-v1", sub_seeds(0, 2), actions, num_episodes=2, max_episode_steps=3
    )
    env.reset(seed=0)
    results = [env.step(a) for a in actions]

    # Step 3 ends episode 1: the new episode's first observation comes back. Step 6 ends episode 2.
    obs3, _, _, trunc3, info3 = results[2]
    assert trunc3.all() and FINAL_OBS_KEY in info3
    np.testing.assert_array_equal(obs3, expected[2][0])
    obs6, reward6, term6, trunc6, info6 = results[5]
    np.testing.assert_array_equal(obs6, expected[5][0])
    np.testing.assert_array_equal(obs6, np.stack(info6[FINAL_OBS_KEY]))  # its own final observation
    assert np.isfinite(reward6).all() and trunc6.all() and not term6.any()
    for obs, reward, terminated, truncated, info in results[6:]:
        assert np.isnan(obs).all() and np.isnan(reward).all()
        assert terminated.all() and truncated.all() and info == {}


def test_envs_ending_on_the_same_step_are_each_counted_once():
    env = pendulum_env(3, max_steps=2, num_episodes=1)
    env.reset(seed=1)
    _, _, _, truncated, _ = env.step(np.zeros((3, 1), dtype=np.float32))
    assert not truncated.any()
    obs, reward, _, truncated, info = env.step(np.zeros((3, 1), dtype=np.float32))
    assert truncated.all() and np.isfinite(obs).all() and np.isfinite(reward).all()
    np.testing.assert_array_equal(info[f"_{FINAL_OBS_KEY}"], [True, True, True])
    obs, reward, terminated, truncated, _ = env.step(np.zeros((3, 1), dtype=np.float32))
    assert np.isnan(obs).all() and terminated.all() and truncated.all()


def test_sub_envs_spend_their_budgets_independently():
    env = SyncVectorEnv(
        [
            lambda: gym.make("Pendulum-v1", max_episode_steps=2),
            lambda: gym.make("Pendulum-v1", max_episode_steps=5),
        ],
        num_episodes=1,
    )
    env.reset(seed=2)
    rows = [env.step(np.zeros((2, 1), dtype=np.float32)) for _ in range(4)]
    obs, reward, terminated, truncated, _ = rows[2]
    assert np.isnan(obs[0]).all() and np.isnan(reward[0]) and terminated[0] and truncated[0]
    assert np.isfinite(obs[1]).all() and not terminated[1] and not truncated[1]


def test_reset_in_the_middle_of_a_budget_restarts_every_counter():
    env = pendulum_env(2, max_steps=2, num_episodes=1)
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.zeros((2, 1), dtype=np.float32))
    env.reset(seed=0)
    obs, _, _, truncated, _ = env.step(np.zeros((2, 1), dtype=np.float32))
    assert np.isfinite(obs).all() and not truncated.any()
    obs, _, _, truncated, _ = env.step(np.zeros((2, 1), dtype=np.float32))
    assert np.isfinite(obs).all() and truncated.all()


def test_a_spent_sub_env_was_reset_like_evotorch_so_later_unseeded_resets_match():
    actions = [np.full((2, 1), 0.5, dtype=np.float32)] * 5
    env = pendulum_env(2, max_steps=2, num_episodes=1)
    env.reset(seed=4)
    for a in actions:
        env.step(a)
    _, _, hand_envs = hand_rollout(
        "Pendulum-v1", sub_seeds(4, 2), actions, num_episodes=1, max_episode_steps=2
    )
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, np.stack([e.reset()[0] for e in hand_envs]))


def test_a_spent_sub_env_with_integer_observations_reports_zero():
    env = SyncVectorEnv([lambda: gym.make("FrozenLake-v1", is_slippery=False)] * 2, num_episodes=1)
    env.reset(seed=0)
    down = np.array([1, 1])
    for _ in range(3):  # down, down, down: into the hole at row 3
        obs, *_ = env.step(down)
    assert obs.tolist() == [12, 12]
    obs, reward, terminated, truncated, _ = env.step(down)
    assert obs.dtype == np.int64 and obs.tolist() == [0, 0]
    assert np.isnan(reward).all() and terminated.all() and truncated.all()


def test_budget_with_random_play_matches_the_plain_loop_and_on_a_device():
    env = SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 3, num_episodes=2, device="cpu")
    actions = random_actions(env, 150, seed=3)
    _, expected, _ = hand_rollout("CartPole-v1", sub_seeds(8, 3), actions, num_episodes=2)
    env.reset(seed=8)
    for a, (exp_obs, exp_reward, exp_term, exp_trunc) in zip(actions, expected, strict=True):
        obs, reward, terminated, truncated, _ = env.step(torch.from_numpy(a))
        torch.testing.assert_close(obs, torch.from_numpy(exp_obs).float(), equal_nan=True, rtol=0, atol=0)
        torch.testing.assert_close(reward, torch.from_numpy(exp_reward), equal_nan=True, rtol=0, atol=0)
        assert terminated.tolist() == exp_term.tolist() and truncated.tolist() == exp_trunc.tolist()
    assert terminated.all() and truncated.all(), "150 random CartPole steps spend a budget of 2 episodes"


def test_actions_of_spent_sub_envs_are_ignored_and_those_of_live_ones_still_checked():
    env = SyncVectorEnv(
        [
            lambda: gym.make("CartPole-v1", max_episode_steps=1),
            lambda: gym.make("CartPole-v1", max_episode_steps=50),
        ],
        num_episodes=1,
        device="cpu",
    )
    env.reset(seed=0)
    env.step(np.array([0, 1]))  # sub-env 0 spends its budget
    _, reward, terminated, _, _ = env.step(np.array([7, 1]))  # 7: no action of Discrete(2), but unused
    assert torch.isnan(reward[0]) and bool(terminated[0]) and reward[1] == 1.0
    with pytest.raises(ValueError, match=r"the actions of sub-envs \[1\] are \[7\]"):
        env.step(np.array([0, 7]))
    with pytest.raises(ValueError, match=r"expected actions of shape \(2,\)"):
        env.step(np.array([0]))
