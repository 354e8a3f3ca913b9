"""GoalEnvWrapper on a goal-conditioned Pendulum (reach a target angle) built with make_vector_env:
goal observations, one vectorized reward/success call per step, reset_done resampling only done rows,
terminate_on_success, set_goal, and every autoreset mode."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.spaces import Box

import vecrl
from vecrl import GoalEnvWrapper
from vecrl.compat import FINAL_OBS_KEY
from vecrl_gym import SyncVectorEnv

GOALS = Box(-np.pi, np.pi, (1,), dtype=np.float32)
NUM_ENVS = 4


def angle(observation):
    """The pendulum's angle, from its observation (cos, sin, velocity): the achieved goal."""
    return torch.atan2(observation[:, 1:2], observation[:, 0:1])


def angle_error(achieved, desired):
    return torch.remainder(achieved - desired + torch.pi, 2 * torch.pi).sub(torch.pi).abs().squeeze(-1)


class Calls:
    """Counts the calls of a batched goal function and keeps the shapes it saw."""

    def __init__(self, function):
        self.function, self.shapes = function, []

    def __call__(self, *args):
        self.shapes.append(tuple(args[0].shape))
        return self.function(*args)


def target_angle_task(autoreset_mode="same_step", max_steps=5, terminate_on_success=False, threshold=0.1):
    env = vecrl.make_vector_env(
        "gym::Pendulum-v1",
        num_envs=NUM_ENVS,
        gym_kwargs={"max_episode_steps": max_steps, "autoreset_mode": autoreset_mode},
    )
    return GoalEnvWrapper(
        env,
        goal_space=GOALS,
        compute_achieved_goal=angle,
        compute_reward=Calls(lambda achieved, desired, *_: -angle_error(achieved, desired)),
        compute_success=Calls(lambda achieved, desired: angle_error(achieved, desired) < threshold),
        terminate_on_success=terminate_on_success,
    )


def test_observations_are_goal_dicts_and_reward_and_success_come_from_one_batched_call_per_step():
    env = target_angle_task()
    obs, _ = env.reset(seed=0)
    assert sorted(obs) == ["achieved_goal", "desired_goal", "observation"]
    assert obs["desired_goal"].shape == (NUM_ENVS, 1) and obs["desired_goal"].dtype == torch.float32
    assert GOALS.contains(obs["desired_goal"][0].numpy())
    assert torch.equal(obs["achieved_goal"], angle(obs["observation"]))
    assert env.observation_space["desired_goal"].shape == (NUM_ENVS, 1)
    obs, reward, terminated, truncated, info = env.step(torch.zeros(NUM_ENVS, 1))
    assert env.compute_reward.shapes == [(NUM_ENVS, 1)] and env.compute_success.shapes == [(NUM_ENVS, 1)]
    assert torch.allclose(reward, -angle_error(obs["achieved_goal"], obs["desired_goal"]))
    assert info["is_success"].dtype == torch.bool and info["is_success"].shape == (NUM_ENVS,)


def test_a_seeded_reset_reproduces_the_goals():
    first, _ = target_angle_task().reset(seed=3)
    second, _ = target_angle_task().reset(seed=3)
    assert torch.equal(first["desired_goal"], second["desired_goal"])


def test_at_a_same_step_episode_end_the_reward_comes_from_the_finished_episodes_last_observation():
    env = target_angle_task(max_steps=2)
    env.reset(seed=1)
    env.step(torch.zeros(NUM_ENVS, 1))
    obs, reward, _, truncated, info = env.step(torch.zeros(NUM_ENVS, 1))
    assert truncated.all()
    last = torch.from_numpy(np.stack(list(info[FINAL_OBS_KEY])))
    assert torch.allclose(reward, -angle_error(angle(last), obs["desired_goal"]))
    assert torch.equal(obs["achieved_goal"], angle(obs["observation"]))  # of the new episode


@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_reset_done_starts_new_episodes_with_new_goals_only_for_the_done_rows(mode):
    env = target_angle_task(autoreset_mode=mode, max_steps=50)
    env.reset(seed=2)
    stepped, *_ = env.step(torch.zeros(NUM_ENVS, 1))
    done = torch.tensor([True, False, True, False])
    obs, _ = env.reset_done(done)
    kept = ~done
    assert torch.equal(obs["desired_goal"][kept], stepped["desired_goal"][kept])
    assert not torch.equal(obs["desired_goal"][done], stepped["desired_goal"][done])
    assert torch.equal(obs["observation"][kept], stepped["observation"][kept])
    assert not torch.equal(obs["observation"][done], stepped["observation"][done])  # new episodes
    assert torch.equal(env.desired_goal, obs["desired_goal"])


@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_after_episode_ends_reset_done_lets_every_mode_continue_without_a_lost_step(mode):
    env = target_angle_task(autoreset_mode=mode, max_steps=3)
    env.reset(seed=4)
    for _ in range(3):
        obs, reward, terminated, truncated, _ = env.step(torch.zeros(NUM_ENVS, 1))
    done = terminated | truncated
    assert done.all()
    before = obs["desired_goal"]
    obs, _ = env.reset_done(done)
    assert not torch.equal(obs["desired_goal"], before)
    obs, reward, terminated, truncated, _ = env.step(torch.zeros(NUM_ENVS, 1))
    assert not (terminated | truncated).any() and (reward != 0).all()  # a real step of the new episodes


def test_a_same_step_env_does_not_reset_again_the_sub_envs_it_already_restarted():
    env = target_angle_task(max_steps=2)
    env.reset(seed=5)
    env.step(torch.zeros(NUM_ENVS, 1))
    obs, _, _, truncated, _ = env.step(torch.zeros(NUM_ENVS, 1))
    assert truncated.all()
    again, _ = env.reset_done(truncated)
    assert torch.equal(again["observation"], obs["observation"])  # the env's own new episodes are kept
    assert not torch.equal(again["desired_goal"], obs["desired_goal"])


def test_terminate_on_success_ends_the_successful_episodes_and_reset_done_restarts_them():
    env = target_angle_task(terminate_on_success=True, max_steps=50, threshold=0.3)
    plain = target_angle_task(terminate_on_success=False, max_steps=50, threshold=0.3)
    for task in (env, plain):
        obs, _ = task.reset(seed=6)
        task.set_goal(obs["achieved_goal"][:2], indices=[0, 1])  # rows 0 and 1: already at their goal
    obs, _, terminated, truncated, info = env.step(torch.zeros(NUM_ENVS, 1))
    _, _, plain_terminated, _, plain_info = plain.step(torch.zeros(NUM_ENVS, 1))
    assert info["is_success"][:2].all() and torch.equal(info["is_success"], plain_info["is_success"])
    assert torch.equal(terminated, info["is_success"]) and not plain_terminated.any()
    restarted, _ = env.reset_done(terminated | truncated)
    assert not torch.equal(restarted["observation"][:2], obs["observation"][:2])  # really reset
    assert torch.equal(restarted["observation"][2:], obs["observation"][2:])


def test_set_goal_sets_all_rows_or_chosen_rows_without_touching_earlier_observations():
    env = target_angle_task()
    obs, _ = env.reset(seed=7)
    kept = obs["desired_goal"].clone()
    env.set_goal(torch.zeros(1))
    assert torch.equal(env.desired_goal, torch.zeros(NUM_ENVS, 1))
    env.set_goal(torch.tensor([[1.0], [2.0]]), indices=torch.tensor([False, True, False, True]))
    assert env.desired_goal[:, 0].tolist() == [0.0, 1.0, 0.0, 2.0]
    assert torch.equal(obs["desired_goal"], kept)  # goal arrays are never changed in place
    with pytest.raises(ValueError, match=r"goal of shape \(3, 1\) for 4 sub-env"):
        env.set_goal(torch.zeros(3, 1))


def test_works_on_a_numpy_vector_env_with_numpy_goal_functions():
    def numpy_angle(observation):
        return np.arctan2(observation[:, 1:2], observation[:, 0:1])

    env = GoalEnvWrapper(
        SyncVectorEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=3)] * 2, autoreset_mode="next_step"),
        goal_space=GOALS,
        compute_achieved_goal=numpy_angle,
        compute_reward=lambda achieved, desired, *_: -np.abs(achieved - desired)[:, 0],
        compute_success=lambda achieved, desired: np.abs(achieved - desired)[:, 0] < 0.1,
    )
    obs, _ = env.reset(seed=0)
    assert isinstance(obs["desired_goal"], np.ndarray) and obs["desired_goal"].dtype == np.float32
    obs, reward, terminated, truncated, info = env.step(np.zeros((2, 1), dtype=np.float32))
    assert isinstance(reward, np.ndarray) and info["is_success"].dtype == bool
    obs, _ = env.reset_done(np.array([True, False]))
    assert isinstance(obs["desired_goal"], np.ndarray)


def test_misuse_is_a_clear_error():
    env = target_angle_task()
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(torch.zeros(NUM_ENVS, 1))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"one bool per sub-env, of shape \(4,\)"):
        env.reset_done(torch.tensor([True, False]))
    with pytest.raises(TypeError, match="goal_space must be a gymnasium Box"):
        GoalEnvWrapper(env.env, gym.spaces.Discrete(3), angle, lambda *a: 0, lambda *a: 0)
    with pytest.raises(TypeError, match="wraps a vector env"):
        GoalEnvWrapper(vecrl.make_vector_env("gym::Pendulum-v1"), GOALS, angle, lambda *a: 0, lambda *a: 0)
