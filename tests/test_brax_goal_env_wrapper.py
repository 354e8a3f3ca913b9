"""vecrl.GoalEnvWrapper on a brax env made with make_vector_env("brax::fast"): a goal-conditioned task
"reach position g" (the achieved goal is the position, the first observation component), with goal
observations, batched reward and success, terminate_on_success, and reset_done restarting and
resampling only the done rows."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box

import vecrl
from vecrl import GoalEnvWrapper
from vecrl.autoreset import declared_autoreset_mode

NUM_ENVS = 4
EPISODE_LENGTH = 3
GOALS = Box(0.0, 0.01, (1,), dtype=np.float32)
PUSH = torch.ones(NUM_ENVS, 1)
TOLERANCE = 1e-4


def position(observation):
    return observation[:, 0:1]


def reach_task(autoreset_mode="same_step", terminate_on_success=False):
    env = vecrl.make_vector_env(
        "brax::fast",
        num_envs=NUM_ENVS,
        brax_kwargs={"episode_length": EPISODE_LENGTH, "autoreset_mode": autoreset_mode},
    )
    return GoalEnvWrapper(
        env,
        goal_space=GOALS,
        compute_achieved_goal=position,
        compute_reward=lambda achieved, desired, *_: -(achieved - desired).abs().squeeze(-1),
        compute_success=lambda achieved, desired: (achieved - desired).abs().squeeze(-1) < TOLERANCE,
        terminate_on_success=terminate_on_success,
    )


def test_brax_observations_become_goal_dicts_of_torch_tensors_with_batched_reward_and_success():
    env = reach_task()
    obs, _ = env.reset(seed=0)
    assert sorted(obs) == ["achieved_goal", "desired_goal", "observation"]
    assert obs["desired_goal"].shape == (NUM_ENVS, 1) and GOALS.contains(obs["desired_goal"][0].numpy())
    obs, reward, terminated, truncated, info = env.step(PUSH)
    assert torch.equal(obs["achieved_goal"], position(obs["observation"]))
    assert torch.allclose(reward, -(obs["achieved_goal"] - obs["desired_goal"]).abs().squeeze(-1))
    assert info["is_success"].dtype == torch.bool and info["is_success"].shape == (NUM_ENVS,)


def test_the_reward_at_a_same_step_episode_end_comes_from_the_finished_episodes_last_position():
    env = reach_task()
    env.reset(seed=1)
    env.set_goal(torch.zeros(1))
    for _ in range(EPISODE_LENGTH):
        obs, reward, _, truncated, _ = env.step(PUSH)
    assert truncated.all() and (obs["observation"] == 0).all()  # already the next episode's start
    assert torch.allclose(reward, torch.full((NUM_ENVS,), -0.0024))  # -(position after 3 steps)


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_reset_done_restarts_and_resamples_the_goals_of_the_done_rows_only(mode):
    env = reach_task(mode)
    assert declared_autoreset_mode(env.env) == mode
    before, _ = env.reset(seed=2)
    stepped, *_ = env.step(PUSH)
    done = torch.tensor([True, False, True, False])
    obs, _ = env.reset_done(done)
    assert (obs["observation"][done] == 0).all()
    assert torch.equal(obs["observation"][~done], stepped["observation"][~done])
    assert torch.equal(obs["desired_goal"][~done], before["desired_goal"][~done])
    assert not torch.isclose(obs["desired_goal"][done], before["desired_goal"][done]).any()
    obs, *_ = env.step(PUSH)
    np.testing.assert_allclose(
        obs["achieved_goal"].squeeze(-1).numpy(), [4e-4, 12e-4, 4e-4, 12e-4], rtol=1e-5
    )


def test_terminate_on_success_ends_the_successful_episodes_and_reset_done_restarts_them():
    env = reach_task(terminate_on_success=True)
    env.reset(seed=3)
    env.set_goal(torch.tensor([[0.0004], [0.0012], [0.0012], [0.0012]]))  # reached after 1 and 2 steps
    _, _, terminated, _, info = env.step(PUSH)
    assert terminated.tolist() == [True, False, False, False] and info["is_success"].tolist()[0]
    obs, _ = env.reset_done(terminated)
    assert (obs["observation"][0] == 0).all() and (obs["observation"][1:, 0] > 0).all()
    _, _, terminated, _, _ = env.step(PUSH)
    assert terminated.tolist() == [False, True, True, True]
