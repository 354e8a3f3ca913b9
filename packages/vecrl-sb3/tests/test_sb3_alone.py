"""SB3VecEnv with nothing but vecrl-core and stable-baselines3: a gymnasium vector env of the user's own,
wrapped in vecrl's TorchWrapper, steps as SB3's DummyVecEnv and trains PPO."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv

import vecrl
from vecrl.compat import AutoresetMode
from vecrl_sb3 import SB3VecEnv

pytestmark = pytest.mark.skipif(AutoresetMode is None, reason="same-step autoreset in gymnasium >= 1.1")


def own_vector_env(num_envs: int) -> vecrl.TorchWrapper:
    sync = gym.vector.SyncVectorEnv(
        [lambda: gym.make("CartPole-v1", max_episode_steps=20)] * num_envs,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    return vecrl.TorchWrapper(sync)


def test_a_users_own_gymnasium_vector_env_steps_like_dummy_vec_env():
    ours = SB3VecEnv(own_vector_env(3))  # gymnasium's int seed rule: S + i, as SB3's
    theirs = DummyVecEnv([lambda: gym.make("CartPole-v1", max_episode_steps=20)] * 3)
    ours.seed(1), theirs.seed(1)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    dones_seen = 0
    for _ in range(50):
        actions = rng.integers(0, 2, 3)
        (obs, rewards, dones, infos), expected = ours.step(actions), theirs.step(actions)
        np.testing.assert_array_equal(obs, expected[0])
        np.testing.assert_array_equal(rewards, expected[1])
        np.testing.assert_array_equal(dones, expected[2])
        for mine, their in zip(infos, expected[3], strict=True):
            assert sorted(mine) == sorted(their)
            if "terminal_observation" in their:
                np.testing.assert_array_equal(mine["terminal_observation"], their["terminal_observation"])
        dones_seen += int(dones.sum())
    assert dones_seen >= 3


def test_ppo_runs_a_few_rollouts():
    model = PPO("MlpPolicy", SB3VecEnv(own_vector_env(4)), n_steps=128, batch_size=128, n_epochs=1, seed=0)
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024


def test_per_sub_env_options_are_refused_when_given_not_at_the_next_reset():
    env = SB3VecEnv(own_vector_env(2))
    with pytest.raises(ValueError, match="one options dict, but set_options\\(\\) got different ones"):
        env.set_options([{"low": -0.1}, {"low": -0.2}])
    env.set_options([{"low": -0.1}, {"low": -0.1}])  # the same for both: taken
    env.set_options({"low": -0.1})
    assert env.reset().shape == (2, 4)
    env.close()
