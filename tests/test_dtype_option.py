"""make_vector_env(dtype=...): floating observations (final ones included) and rewards cast once, the spaces
saying so, so that a float32 network runs on MuJoCo's float64 observations; the rest left as it is."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vecrl
from vecrl.compat import FINAL_OBS_KEY, GYMNASIUM_1

HOPPER = "gym::Hopper-v5" if GYMNASIUM_1 else "gym::Hopper-v4"  # (gymnasium 0.29 has v4)


def test_float32_makes_mujoco_s_float64_observations_and_rewards_float32():
    plain = vecrl.make_vector_env(HOPPER, num_envs=2)
    env = vecrl.make_vector_env(HOPPER, num_envs=2, dtype=torch.float32, gym_kwargs={"max_episode_steps": 3})
    assert plain.single_observation_space.dtype == np.float64
    assert env.single_observation_space.dtype == np.float32 and env.observation_space.dtype == np.float32
    obs, _ = env.reset(seed=0)
    expected, _ = plain.reset(seed=0)
    assert obs.dtype == torch.float32 and torch.equal(obs, expected.float())
    layer = torch.nn.Linear(obs.shape[1], 3)  # float32, as torch makes it
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(torch.tanh(layer(obs)).detach())
    assert obs.dtype == reward.dtype == torch.float32 and truncated.all()
    assert info[FINAL_OBS_KEY].dtype == torch.float32
    assert env.single_observation_space.contains(obs[0].numpy())
    # the reward space says the rewards' dtype (TorchRL types its reward spec from it)
    assert plain.reward_space.dtype == np.float64 and env.reward_space.dtype == np.float32


def test_what_is_not_floating_keeps_its_dtype():
    env = vecrl.make_vector_env("gym::FrozenLake-v1", num_envs=2, dtype=torch.float32)
    obs, _ = env.reset(seed=0)
    assert (
        obs.dtype == torch.int64
        and env.single_observation_space
        == vecrl.make_vector_env("gym::FrozenLake-v1", num_envs=2).single_observation_space
    )
    _, reward, *_ = env.step(torch.zeros(2, dtype=torch.int64))
    assert reward.dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.int32, "float32", torch.bfloat16])
def test_a_dtype_that_is_not_a_floating_one_numpy_has_is_refused(dtype):
    with pytest.raises(ValueError, match="dtype must be None or a torch floating dtype"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, dtype=dtype)
