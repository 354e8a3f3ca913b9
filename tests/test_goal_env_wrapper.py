"""GoalEnvWrapper on a goal-conditioned Pendulum (reach a target angle) built with make_vector_env:
goal observations, one vectorized reward/success call per step, reset_done resampling only done rows,
terminate_on_success, set_goal, and every autoreset mode."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.spaces import Box

import vecrl
from vecrl import GoalEnvWrapper
from vecrl.compat import FINAL_OBS_KEY, GYMNASIUM_1
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
    assert env.reward_function.shapes == [(NUM_ENVS, 1)] and env.compute_success.shapes == [(NUM_ENVS, 1)]
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
    last = info[FINAL_OBS_KEY]  # the ended episodes' last goal observations
    assert sorted(last) == ["achieved_goal", "desired_goal", "observation"]
    assert torch.allclose(reward, -angle_error(angle(last["observation"]), last["desired_goal"]))
    assert torch.equal(last["achieved_goal"], angle(last["observation"]))
    assert torch.equal(obs["achieved_goal"], angle(obs["observation"]))  # of the new episode
    assert not torch.equal(obs["desired_goal"], last["desired_goal"])  # with new goals


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


@pytest.mark.parametrize("mode", ["next_step", "disabled"])
def test_after_episode_ends_reset_done_lets_a_loop_of_its_own_go_on_without_a_lost_step(mode):
    # xpag's loop restarts the ended rows itself: in next_step mode that cancels the env's own restart
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


def test_reset_done_leaves_alone_the_rows_a_same_step_step_restarted():
    env = target_angle_task(max_steps=2)
    env.reset(seed=5)
    env.step(torch.zeros(NUM_ENVS, 1))
    obs, _, _, truncated, _ = env.step(torch.zeros(NUM_ENVS, 1))
    assert truncated.all()
    again, _ = env.reset_done(truncated)  # (an xpag-style loop's call after every step)
    assert torch.equal(again["observation"], obs["observation"])  # the step's new episodes are kept
    assert torch.equal(again["desired_goal"], obs["desired_goal"])  # with the goals it gave them


def goal_tracking_run(mode, steps, terminate_on_success):
    """Every step of a run (goals before it, what it returned) on a task whose rows 0 and 1 start at their
    goal, so that success ends their episodes at once under terminate_on_success."""
    env = target_angle_task(
        autoreset_mode=mode, max_steps=4, terminate_on_success=terminate_on_success, threshold=0.3
    )
    obs, _ = env.reset(seed=8)
    env.set_goal(obs["achieved_goal"][:2], indices=[0, 1])
    records, goals = [], env.desired_goal
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(torch.zeros(NUM_ENVS, 1))
        records.append((goals, obs, reward, terminated | truncated, info))
        goals = obs["desired_goal"]
    return records


@pytest.mark.parametrize("terminate_on_success", [False, True])
@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_goals_change_exactly_at_episode_ends_in_every_mode(mode, terminate_on_success):
    # (disabled: to the end; with terminate_on_success, the first success ends the run: see below)
    steps = 11 if mode != "disabled" else 1 if terminate_on_success else 4
    records = goal_tracking_run(mode, steps, terminate_on_success)
    ended_before = torch.zeros(NUM_ENVS, dtype=torch.bool)
    episodes = torch.zeros(NUM_ENVS, dtype=torch.int64)
    for goals_before, obs, reward, done, info in records:
        changed = (obs["desired_goal"] != goals_before).any(dim=1)
        if mode == "same_step":  # the ending step starts the next episode, with its goal
            assert torch.equal(changed, done)
            if done.any():
                final = info[FINAL_OBS_KEY]
                assert torch.equal(info["_" + FINAL_OBS_KEY], done)
                assert torch.equal(final["desired_goal"][done], goals_before[done])  # the ended episode's
                assert torch.equal(final["achieved_goal"], angle(final["observation"]))
            else:
                assert FINAL_OBS_KEY not in info
        elif mode == "next_step":  # the step after it does, its reward 0
            assert torch.equal(changed, ended_before) and (reward[ended_before] == 0).all()
            assert not info["is_success"][ended_before].any()
        else:  # ended episodes stay ended
            assert not changed.any()
        episodes += done
        ended_before = done
    if mode != "disabled":
        assert (episodes >= 2).all()  # several episodes per row (4 steps each, or 1 on success)
    if terminate_on_success:
        assert records[0][3][:2].all()  # rows 0 and 1 succeeded at once
        if mode == "same_step":  # and were restarted: a new start beside the ended episode's last observation
            first_obs = records[0][1]["observation"][:2]
            assert not torch.equal(first_obs, records[0][4][FINAL_OBS_KEY]["observation"][:2])


def test_without_autoreset_a_row_ended_by_success_steps_again_only_after_it_is_reset():
    env = target_angle_task(autoreset_mode="disabled", max_steps=4, terminate_on_success=True, threshold=0.3)
    obs, _ = env.reset(seed=8)
    env.set_goal(obs["achieved_goal"][:2], indices=[0, 1])
    goals = env.desired_goal
    _, _, terminated, _, _ = env.step(torch.zeros(NUM_ENVS, 1))
    assert terminated[:2].all()
    with pytest.raises(RuntimeError, match=r"sub-env\(s\) \[0, 1\] reached their goal .*reset_done"):
        env.step(torch.zeros(NUM_ENVS, 1))
    obs, _ = env.reset_done(terminated)
    assert not torch.equal(obs["desired_goal"][:2], goals[:2])  # new goals for the restarted rows
    assert torch.equal(obs["desired_goal"][2:], goals[2:])
    env.step(torch.zeros(NUM_ENVS, 1))


def test_terminate_on_success_ends_the_successful_episodes_and_restarts_them():
    env = target_angle_task(terminate_on_success=True, max_steps=50, threshold=0.3)
    plain = target_angle_task(terminate_on_success=False, max_steps=50, threshold=0.3)
    for task in (env, plain):
        obs, _ = task.reset(seed=6)
        task.set_goal(obs["achieved_goal"][:2], indices=[0, 1])  # rows 0 and 1: already at their goal
    goals = env.desired_goal
    obs, _, terminated, truncated, info = env.step(torch.zeros(NUM_ENVS, 1))
    plain_obs, _, plain_terminated, _, plain_info = plain.step(torch.zeros(NUM_ENVS, 1))
    assert info["is_success"][:2].all() and torch.equal(info["is_success"], plain_info["is_success"])
    assert torch.equal(terminated, info["is_success"]) and not plain_terminated.any()
    # restarted in the same step: a new start and a new goal; the ended episode's last observation kept
    assert torch.equal(info[FINAL_OBS_KEY]["observation"][:2], plain_obs["observation"][:2])
    assert not torch.equal(obs["observation"][:2], plain_obs["observation"][:2])
    assert not torch.equal(obs["desired_goal"][:2], goals[:2])
    assert torch.equal(obs["observation"][2:], plain_obs["observation"][2:])


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


def test_set_goal_for_one_row_warns_of_nothing():
    # (a read-only broadcast of the goal made torch warn that it could not share it)
    env = target_angle_task()
    env.reset(seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.set_goal(torch.ones(1), indices=[2])
    assert env.desired_goal[2].tolist() == [1.0]


def test_compute_reward_is_a_goal_env_s_for_her_in_numpy_or_torch():
    env = target_angle_task()
    env.reset(seed=10)
    achieved, desired = np.zeros((3, 1), np.float32), np.full((3, 1), 0.5, np.float32)
    reward = env.compute_reward(achieved, desired, [{}, {}, {}])  # as HER relabels stored steps
    assert isinstance(reward, np.ndarray) and reward.tolist() == [-0.5, -0.5, -0.5]
    tensor_reward = env.compute_reward(torch.from_numpy(achieved), torch.from_numpy(desired), {})
    assert isinstance(tensor_reward, torch.Tensor) and tensor_reward.tolist() == [-0.5, -0.5, -0.5]
    needs_the_action = GoalEnvWrapper(
        env.env,
        GOALS,
        angle,
        lambda achieved, desired, action, *_: -action.abs().sum(-1),
        env.compute_success,
    )
    needs_the_action.reset(seed=0)
    with pytest.raises(TypeError, match="None for the action, observation, reward, terminated and truncated"):
        needs_the_action.compute_reward(achieved, desired, {})


def test_it_is_a_gymnasium_vector_env_that_gymnasium_s_vector_wrappers_take():
    if not GYMNASIUM_1:
        pytest.skip("gymnasium 0.29's vector wrappers take the old VectorEnvWrapper API")
    task = target_angle_task(max_steps=3)
    assert isinstance(task, gym.vector.VectorEnv)
    env = gym.wrappers.vector.TransformReward(task, lambda reward: 2 * reward)
    env.reset(seed=11)
    obs, reward, *_ = env.step(torch.zeros(NUM_ENVS, 1))
    assert torch.allclose(reward, -2 * angle_error(obs["achieved_goal"], obs["desired_goal"]))


def _probe(**changes):
    """A GoalEnvWrapper of the target-angle task with the functions in ``changes`` in place of its own."""
    functions = {
        "compute_achieved_goal": angle,
        "compute_reward": lambda achieved, desired, *_: -angle_error(achieved, desired),
        "compute_success": lambda achieved, desired: angle_error(achieved, desired) < 0.1,
        **changes,
    }
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=NUM_ENVS)
    return GoalEnvWrapper(env, GOALS, **functions)


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        (
            {"compute_achieved_goal": lambda o: o[:, :2]},
            ValueError,
            r"compute_achieved_goal gave shape \(4, 2\)",
        ),
        ({"compute_achieved_goal": lambda o: o[0, :1]}, ValueError, r"shape \(1,\) for 4 sub-envs.*\(4, 1\)"),
        (
            {"compute_reward": lambda achieved, desired, *_: -(achieved - desired).abs()},
            ValueError,
            r"compute_reward gave shape \(4, 1\).*a number per sub-env",
        ),
        (
            {"compute_success": lambda achieved, desired: angle_error(achieved, desired)},
            TypeError,
            "compute_success gave torch.float32 values; it must give a bool per sub-env",
        ),
    ],
)
def test_functions_that_give_the_wrong_shape_or_dtype_are_named(changes, error, words):
    env = _probe(**changes)
    with pytest.raises(error, match=words):
        env.reset(seed=0)
        env.step(torch.zeros(NUM_ENVS, 1))


def test_a_flag_that_is_no_bool_and_a_goal_that_is_not_finite_are_refused():
    with pytest.raises(TypeError, match="terminate_on_success must be True or False, but got 'yes'"):
        _probe(terminate_on_success="yes")
    env = _probe()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not finite"):
        env.set_goal(torch.tensor([float("nan")]))
