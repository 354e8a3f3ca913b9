"""make_gym_env and the ``gym`` plugin, reached through vecrl.make_vector_env."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
import torch
from gym_helpers import MUJOCO_ENV_ID, sub_seeds

import vecrl
from vecrl.testing import check_backend
from vecrl_gym import SyncVectorEnv, make_gym_env


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        # (CartPole-v1: tests/test_backend_conformance.py, on the case this package's pyproject declares)
        ("Pendulum-v1", {"empty_info": True}),
        ("Acrobot-v1", {"num_episodes": 1}),
        (MUJOCO_ENV_ID, {"device": "cpu"}),
    ],
)
def test_the_gym_backend_follows_the_vecrl_backend_contract(env_id, kwargs):
    check_backend(make_gym_env, env_id, num_envs=3, **kwargs)


def test_make_vector_env_finds_the_gym_backend_by_prefix_and_by_default():
    for name in ("gym::CartPole-v1", "CartPole-v1"):
        env = vecrl.make_vector_env(name, num_envs=2)
        assert isinstance(env, vecrl.TorchWrapper) and isinstance(env.unwrapped, SyncVectorEnv)


def test_gym_kwargs_and_plain_kwargs_reach_gymnasium_make():
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=2, gym_kwargs={"max_episode_steps": 2}, g=1.0)
    env.reset(seed=0)
    assert env.unwrapped.get_attr("g") == (1.0, 1.0)
    env.step(torch.zeros(2, 1))
    *_, truncated, _ = env.step(torch.zeros(2, 1))
    assert truncated.all()


def test_make_gym_env_returns_torch_tensors_and_takes_torch_actions():
    env = make_gym_env("CartPole-v1", num_envs=3, num_episodes=1)
    obs, _ = env.reset(seed=0)
    expected = torch.stack(
        [torch.from_numpy(gym.make("CartPole-v1").reset(seed=s)[0]) for s in sub_seeds(0, 3)]
    )
    assert torch.equal(obs, expected)
    obs, reward, terminated, truncated, _ = env.step(torch.tensor([0, 1, 0]))
    assert obs.shape == (3, 4) and reward.dtype == torch.float64 and terminated.dtype == torch.bool


def test_discrete_to_continuous_act_and_clip_actions_work_through_the_wrapper():
    env = make_gym_env("CartPole-v1", num_envs=2, discrete_to_continuous_act=True)
    env.reset(seed=0)
    assert env.single_action_space.shape == (2,)
    env.step(torch.tensor([[0.1, 0.9], [0.8, 0.2]]))
    env = make_gym_env("Pendulum-v1", num_envs=2, clip_actions=True)
    env.reset(seed=0)
    env.step(torch.full((2, 1), 50.0))


def test_the_classic_api_returns_done():
    env = make_gym_env("CartPole-v1", num_envs=2, force_classic_api=True)
    assert env.reset(seed=0).shape == (2, 4)
    assert len(env.step(torch.tensor([0, 1]))) == 4


def test_num_envs_none_gives_one_plain_gymnasium_env():
    env = make_gym_env("CartPole-v1")
    assert not isinstance(env.unwrapped, gym.vector.VectorEnv)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4,)


@pytest.mark.parametrize(("option", "value"), [("empty_info", True), ("num_episodes", 2), ("device", "cpu")])
def test_vector_only_options_without_num_envs_are_a_value_error(option, value):
    with pytest.raises(ValueError, match=f"received {option}=.* with num_envs=None.*pass num_envs="):
        make_gym_env("CartPole-v1", **{option: value})


@pytest.mark.parametrize("num_envs", [0, -2, 1.5, True])
def test_num_envs_must_be_a_positive_int(num_envs):
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        make_gym_env("CartPole-v1", num_envs=num_envs)


def test_the_plugin_module_imports_without_jax_or_brax():
    code = "import sys, vecrl_gym.plugin; print(sorted({'jax', 'brax'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_seeding_through_the_torch_wrapper_reaches_the_sync_vector_env():
    env = make_gym_env("Acrobot-v1", num_envs=2)
    env.seed(4)
    assert torch.equal(env.reset()[0], env.reset(seed=4)[0])


def test_the_gym_backend_follows_the_autoreset_rules_every_backend_follows_in_worker_processes_too():
    # (in one process: tests/test_backend_conformance.py, on the case this package's pyproject declares)
    from vecrl.testing import check_autoreset_modes

    check_autoreset_modes(make_gym_env, "CartPole-v1", max_episode_steps=6, num_workers=2)
