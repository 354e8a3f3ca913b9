"""vecrl_gym.SyncVectorEnv in each autoreset mode steps exactly like gymnasium's own SyncVectorEnv in that
mode (same seeds, same actions), masked resets included; and what each mode means for num_episodes."""

from __future__ import annotations

import composite_env
import gymnasium as gym
import numpy as np
import pytest
import torch

import vecrl
from vecrl.autoreset import autoreset_mode_value
from vecrl.compat import FINAL_OBS_KEY, AutoresetMode
from vecrl.final_observations import observations_before_restart
from vecrl_gym import SyncVectorEnv

MODES = ("same_step", "next_step", "disabled")
needs_autoreset_modes = pytest.mark.skipif(
    AutoresetMode is None, reason="gymnasium's SyncVectorEnv has autoreset modes from 1.1 on"
)
ENVS = [("CartPole-v1", 12), ("Pendulum-v1", 5)]  # short time limits: episodes end often
# Every space gymnasium batches densely (Dict and Tuple, nested; MultiBinary, MultiDiscrete, Discrete with a
# start; int and float Boxes), in observations and actions; and a MuJoCo env (float64 observations).
MORE_ENVS = [(composite_env.ENV_ID, 6), ("Hopper-v5", 8)]


def makers(env_id: str, max_steps: int, num_envs: int = 3) -> list:
    return [lambda: gym.make(env_id, max_episode_steps=max_steps)] * num_envs


def assert_same(actual, expected, path="result"):
    """Deep equality of batched results and infos: tuples, dicts, arrays (numeric or object), scalars."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), (
            f"{path}: {actual} != {expected}"
        )
        for key in expected:
            assert_same(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, np.ndarray) and expected.dtype == object:
        assert actual.dtype == object and actual.shape == expected.shape, path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, f"{path}[{i}]")
    elif isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype, f"{path}: {actual.dtype} != {expected.dtype}"
        np.testing.assert_array_equal(actual, expected, err_msg=path)
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


@needs_autoreset_modes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "max_steps"), ENVS + MORE_ENVS)
def test_each_mode_steps_like_gymnasiums_sync_vector_env_in_that_mode(mode, env_id, max_steps):
    ours = SyncVectorEnv(makers(env_id, max_steps), autoreset_mode=mode)
    theirs = gym.vector.SyncVectorEnv(
        makers(env_id, max_steps), autoreset_mode=AutoresetMode(ours.metadata["autoreset_mode"])
    )
    assert ours.metadata["autoreset_mode"] == theirs.metadata["autoreset_mode"]
    ours.action_space.seed(0)
    seeds = [10, 11, 12]
    assert_same(ours.reset(seed=seeds), theirs.reset(seed=seeds))
    ends = 0
    for t in range(40):
        actions = ours.action_space.sample()
        ours_step, theirs_step = ours.step(actions), theirs.step(actions)
        if FINAL_OBS_KEY in theirs_step[4]:  # gymnasium's object array, as vecrl lays final observations out
            final = observations_before_restart(theirs_step[0], theirs_step[4])
            theirs_step = (*theirs_step[:4], {**theirs_step[4], FINAL_OBS_KEY: final})
        assert_same(ours_step, theirs_step, f"step {t}")
        finished = ours_step[2] | ours_step[3]
        ends += int(finished.sum())
        if mode == "disabled" and finished.any():  # the user resets the finished sub-envs, seeding them
            mask_seeds = [100 + t, 200 + t, 300 + t]
            assert_same(
                ours.reset(seed=mask_seeds, options={"reset_mask": finished}),
                theirs.reset(seed=mask_seeds, options={"reset_mask": finished.copy()}),
            )
    assert ends >= 3, "the rollout should cross several episode ends"


@needs_autoreset_modes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "max_steps"), [ENVS[0], *MORE_ENVS])
def test_with_the_gymnasium_seed_rule_reset_seed_s_reproduces_gymnasium_step_for_step(
    mode, env_id, max_steps
):
    ours = SyncVectorEnv(makers(env_id, max_steps), autoreset_mode=mode, seed_rule="gymnasium")
    theirs = gym.vector.SyncVectorEnv(makers(env_id, max_steps), autoreset_mode=autoreset_mode_value(mode))
    ours.action_space.seed(1)
    assert_same(ours.reset(seed=7), theirs.reset(seed=7))
    assert ours.np_random_seed == theirs.np_random_seed == (7, 8, 9)
    for t in range(30):
        actions = ours.action_space.sample()
        ours_step, theirs_step = ours.step(actions), theirs.step(actions)
        if FINAL_OBS_KEY in theirs_step[4]:  # gymnasium's object array, as vecrl lays final observations out
            final = observations_before_restart(theirs_step[0], theirs_step[4])
            theirs_step = (*theirs_step[:4], {**theirs_step[4], FINAL_OBS_KEY: final})
        assert_same(ours_step, theirs_step, f"step {t}")
        finished = ours_step[2] | ours_step[3]
        if mode == "disabled" and finished.any():  # an int seed gives sub-env i the seed S + i here too
            assert_same(
                ours.reset(seed=50 + t, options={"reset_mask": finished}),
                theirs.reset(seed=50 + t, options={"reset_mask": finished.copy()}),
            )


@needs_autoreset_modes
@pytest.mark.parametrize("mode", MODES)
def test_through_make_vector_env_every_dense_space_arrives_as_tensors_nested_like_gymnasiums_arrays(mode):
    env = vecrl.make_vector_env(
        f"gym::{composite_env.ENV_ID}", num_envs=3, autoreset_mode=mode, seed_rule="gymnasium"
    )
    theirs = gym.vector.SyncVectorEnv(makers(composite_env.ENV_ID, 6), **gymnasium_mode(mode))
    env.action_space.seed(2)
    observation, _ = env.reset(seed=3)
    assert_same(to_numpy(observation), theirs.reset(seed=3)[0])
    for t in range(20):
        actions = env.action_space.sample()  # numpy leaves: given to ours as torch tensors
        torch_actions = (torch.from_numpy(actions[0]), torch.from_numpy(actions[1]), to_torch(actions[2]))
        observation, reward, terminated, truncated, _ = env.step(torch_actions)
        expected = theirs.step(actions)
        assert isinstance(observation["pair"], tuple) and observation["pair"][1].dtype == torch.int32
        assert_same(to_numpy((observation, reward, terminated, truncated)), expected[:4], f"step {t}")
        if mode == "disabled" and (terminated | truncated).any():
            mask = (terminated | truncated).numpy()
            env.reset(seed=t, options={"reset_mask": mask})
            theirs.reset(seed=t, options={"reset_mask": mask.copy()})


def test_a_bad_part_of_a_tuple_action_is_refused_by_path_before_any_sub_env_steps():
    env = vecrl.make_vector_env(f"gym::{composite_env.ENV_ID}", num_envs=2)
    env.reset(seed=0)
    actions = env.action_space.sample()
    bad = (actions[0], actions[1], {"door": np.array([[1, 2], [2, 0]]), "flag": actions[2]["flag"]})
    with pytest.raises(ValueError, match=r"actions\[2\]\['door'\] .* values outside .* sub-envs \[1\]"):
        env.step(bad)
    with pytest.raises(ValueError, match=r"actions must be a tuple of 3 batched actions"):
        env.step(actions[:2])
    assert env.get_attr("_elapsed_steps") == (0, 0)  # nobody stepped


def gymnasium_mode(mode: str) -> dict:
    return {"autoreset_mode": autoreset_mode_value(mode)} if AutoresetMode is not None else {}


def to_numpy(x):
    return vecrl.arrays.tree_from_torch(x, "numpy")


def to_torch(x):
    return vecrl.arrays.tree_to_torch(x)


@needs_autoreset_modes
@pytest.mark.parametrize("mode", MODES)
def test_a_masked_reset_in_mid_episode_matches_gymnasium_and_touches_only_the_masked_rows(mode):
    ours = SyncVectorEnv(makers("Pendulum-v1", 50), autoreset_mode=mode)
    theirs = gym.vector.SyncVectorEnv(
        makers("Pendulum-v1", 50), autoreset_mode=AutoresetMode(ours.metadata["autoreset_mode"])
    )
    ours.reset(seed=[1, 2, 3])
    theirs.reset(seed=[1, 2, 3])
    actions = np.full((3, 1), 0.5, dtype=np.float32)
    before = ours.step(actions)[0]
    theirs.step(actions)
    mask = np.array([False, True, False])
    obs, info = ours.reset(seed=[7, 8, 9], options={"reset_mask": mask, "x_init": 0.1})
    assert_same((obs, info), theirs.reset(seed=[7, 8, 9], options={"reset_mask": mask.copy(), "x_init": 0.1}))
    np.testing.assert_array_equal(obs[~mask], before[~mask])
    np.testing.assert_array_equal(obs[1], gym.make("Pendulum-v1").reset(seed=8, options={"x_init": 0.1})[0])
    for _ in range(3):
        assert_same(ours.step(actions), theirs.step(actions))


def test_the_reset_mask_may_be_a_tensor_or_a_list_and_the_callers_options_are_left_alone():
    env = SyncVectorEnv(makers("CartPole-v1", 50), autoreset_mode="disabled")
    first, _ = env.reset(seed=0)
    options = {"reset_mask": torch.tensor([True, False, False])}
    obs, _ = env.reset(seed=[5, 6, 7], options=options)
    assert "reset_mask" in options
    np.testing.assert_array_equal(obs[1:], first[1:])
    np.testing.assert_array_equal(obs[0], gym.make("CartPole-v1").reset(seed=5)[0])


def test_a_reset_mask_that_is_a_string_is_refused_as_a_mask_of_the_wrong_shape():
    # (ints and a wrong length are refused on every backend: vecrl.testing.check_autoreset_modes)
    env = SyncVectorEnv(makers("CartPole-v1", 50))
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"reset_mask'\] must be a boolean array of shape \(3,\)"):
        env.reset(options={"reset_mask": "all"})


@pytest.mark.parametrize("num_workers", [None, 2])
def test_an_all_false_reset_mask_is_refused_as_gymnasium_refuses_it(num_workers):
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=4, num_workers=num_workers, autoreset_mode="disabled"
    )
    try:
        first, _ = env.reset(seed=0)
        with pytest.raises(
            ValueError, match=r"reset_mask'\] is all False, so the reset would reset no sub-env"
        ):
            env.reset(options={"reset_mask": torch.zeros(4, dtype=torch.bool)})
        # a mask that leaves a worker's whole block alone: that block keeps its sub-envs as they are
        obs, _ = env.reset(
            seed=[5, 6, 7, 8], options={"reset_mask": torch.tensor([True, False, False, False])}
        )
        torch.testing.assert_close(obs[1:], first[1:])
        assert env.step(torch.zeros(4, dtype=torch.int64))[1].tolist() == [1.0] * 4
    finally:
        env.close()


def test_next_step_ignores_the_action_of_the_reset_step_and_reports_reward_zero():
    env = SyncVectorEnv(makers("Pendulum-v1", 2, num_envs=1), autoreset_mode="next_step")
    env.reset(seed=[4])
    env.step(np.zeros((1, 1), dtype=np.float32))
    last_obs, _, _, truncated, _ = env.step(np.zeros((1, 1), dtype=np.float32))
    assert truncated[0]
    obs, reward, terminated, truncated, _ = env.step(np.full((1, 1), 2.0, dtype=np.float32))
    assert reward[0] == 0.0 and not terminated[0] and not truncated[0]
    assert not np.array_equal(obs, last_obs)  # a new episode's first observation, not a step from the last


def test_disabled_refuses_to_step_a_finished_sub_env_until_it_is_reset():
    env = SyncVectorEnv(makers("Pendulum-v1", 2), autoreset_mode="disabled")
    env.reset(seed=0)
    zeros = np.zeros((3, 1), dtype=np.float32)
    env.step(zeros)
    *_, truncated, _ = env.step(zeros)
    assert truncated.all()
    with pytest.raises(RuntimeError, match=r"sub-envs \[0, 1, 2\] have ended.*reset_mask"):
        env.step(zeros)
    env.reset(options={"reset_mask": np.array([True, True, True])})
    env.step(zeros)


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_num_episodes_runs_that_many_episodes_per_sub_env_in_both_autoreset_modes(mode):
    env = SyncVectorEnv(makers("Pendulum-v1", 3, num_envs=2), autoreset_mode=mode, num_episodes=2)
    env.reset(seed=1)
    zeros = np.zeros((2, 1), dtype=np.float32)
    ends, spent_steps = 0, 0
    for _ in range(12):
        obs, reward, terminated, truncated, _ = env.step(zeros)
        if np.isnan(reward).all():
            spent_steps += 1
            assert np.isnan(obs).all() and terminated.all() and truncated.all()
        else:
            ends += int(truncated.sum())
    assert ends == 4 and spent_steps > 0
    obs, _ = env.reset(options={"reset_mask": np.array([True, False])})  # restarts that sub-env's budget
    assert not np.isnan(obs[0]).any() and np.isnan(obs[1]).all()
    _, reward, *_ = env.step(zeros)
    assert not np.isnan(reward[0]) and np.isnan(reward[1])


def test_num_episodes_with_autoreset_disabled_is_a_value_error():
    with pytest.raises(ValueError, match="num_episodes=2 cannot be combined with autoreset_mode='disabled'"):
        SyncVectorEnv(makers("CartPole-v1", 5), autoreset_mode="disabled", num_episodes=2)


def test_an_unknown_autoreset_mode_is_a_value_error_listing_the_modes():
    with pytest.raises(ValueError, match="'same_step', 'next_step', 'disabled'"):
        SyncVectorEnv(makers("CartPole-v1", 5), autoreset_mode="eager")


@needs_autoreset_modes
def test_gymnasiums_enum_and_spelling_are_accepted_and_declared_in_the_metadata():
    for mode in (AutoresetMode.NEXT_STEP, "NextStep", "next_step"):
        env = SyncVectorEnv(makers("CartPole-v1", 5), autoreset_mode=mode)
        assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP is env.autoreset_mode


@pytest.mark.skipif(AutoresetMode is not None, reason="gymnasium without AutoresetMode (0.29, 1.0)")
def test_without_gymnasiums_enum_the_metadata_declares_the_mode_by_name():
    assert (
        SyncVectorEnv(makers("CartPole-v1", 5), autoreset_mode="next_step").metadata["autoreset_mode"]
        == "next_step"
    )


@needs_autoreset_modes
def test_gymnasiums_normalize_observation_works_on_top_in_next_step_mode():
    wrapper = gym.wrappers.vector.NormalizeObservation
    with pytest.raises(ValueError, match="NEXT_STEP"):
        wrapper(SyncVectorEnv(makers("Pendulum-v1", 5)))
    ours = wrapper(SyncVectorEnv(makers("Pendulum-v1", 5), autoreset_mode="next_step"))
    theirs = wrapper(gym.vector.SyncVectorEnv(makers("Pendulum-v1", 5)))  # gymnasium's default: next_step
    np.testing.assert_allclose(ours.reset(seed=[1, 2, 3])[0], theirs.reset(seed=[1, 2, 3])[0], rtol=1e-6)
    ours.action_space.seed(3)
    for _ in range(12):
        actions = ours.action_space.sample()
        np.testing.assert_allclose(ours.step(actions)[0], theirs.step(actions)[0], rtol=1e-5, atol=1e-6)


def test_make_vector_env_passes_the_autoreset_mode_through_gym_kwargs():
    env = vecrl.make_vector_env(
        "gym::Pendulum-v1", num_envs=2, gym_kwargs={"autoreset_mode": "next_step", "max_episode_steps": 2}
    )
    assert env.autoreset_mode == env.unwrapped.autoreset_mode == autoreset_mode_value("next_step")
    env.reset(seed=0)
    env.step(torch.zeros(2, 1))
    _, _, _, truncated, _ = env.step(torch.zeros(2, 1))
    assert truncated.all()
    _, reward, _, truncated, _ = env.step(torch.zeros(2, 1))
    assert torch.equal(reward, torch.zeros(2, dtype=torch.float64)) and not truncated.any()


def test_a_single_env_refuses_an_autoreset_mode():
    with pytest.raises(ValueError, match="autoreset_mode='next_step' with num_envs=None"):
        vecrl.make_vector_env("gym::CartPole-v1", autoreset_mode="next_step")
