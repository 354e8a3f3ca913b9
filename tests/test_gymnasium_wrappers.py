"""make_vector_env's env is a gymnasium vector env: its surface, and gymnasium's own vector wrappers
(applied to it, or given as vector_wrappers) giving the results they give on gymnasium's SyncVectorEnv."""

from __future__ import annotations

import functools

import gymnasium as gym
import numpy as np
import pytest
import torch
from packaging.version import Version

import vecrl
from vecrl.autoreset import autoreset_mode_value
from vecrl.compat import GYMNASIUM_1, GYMNASIUM_VERSION, AutoresetMode

needs_vector_wrappers = pytest.mark.skipif(
    AutoresetMode is None, reason="gymnasium.wrappers.vector and autoreset modes (gymnasium >= 1.1)"
)
MODES = ("same_step", "next_step", "disabled")


def test_the_env_is_a_gymnasium_vector_env_with_gymnasiums_surface():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3, render_mode="rgb_array")
    single = gym.make("CartPole-v1")
    assert isinstance(env, gym.vector.VectorEnv) and isinstance(env, vecrl.TorchWrapper)
    assert env.num_envs == 3 and env.single_observation_space == single.observation_space
    assert env.observation_space.shape == (3, 4) and env.single_action_space == single.action_space
    assert env.autoreset_mode == env.metadata["autoreset_mode"] == autoreset_mode_value("same_step")
    assert env.get_attr("gravity") == (9.8, 9.8, 9.8)
    env.set_attr("gravity", [1.0, 2.0, 3.0])
    assert env.call("get_wrapper_attr", "gravity") == (1.0, 2.0, 3.0)
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 3 and frames[0].shape == (400, 600, 3)
    if GYMNASIUM_1:
        assert len(env.np_random_seed) == 3 and all(isinstance(seed, int) for seed in env.np_random_seed)
    env.close()
    assert env.closed


def test_a_brax_env_is_a_gymnasium_vector_env_too():
    pytest.importorskip("brax")
    env = vecrl.make_vector_env("brax::fast", num_envs=2)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.autoreset_mode == env.unwrapped.autoreset_mode == autoreset_mode_value("same_step")


def hand_counted_episodes(env, mode: str, steps: int, seed: int = 0):
    """Run ``env`` with random actions and count each finished episode's return and length by hand, by the
    rule of ``mode``; also collect what RecordEpisodeStatistics reported."""
    env.action_space.seed(seed)
    env.reset(seed=seed)
    returns, lengths = np.zeros(env.num_envs), np.zeros(env.num_envs, dtype=int)
    resetting = np.zeros(env.num_envs, dtype=bool)  # next_step: this step resets, it is no episode's step
    counted, reported = [], []
    for _ in range(steps):
        _, reward, terminated, truncated, info = env.step(torch.as_tensor(env.action_space.sample()))
        reward, done = reward.numpy(), (terminated | truncated).numpy()
        returns[~resetting] += reward[~resetting]
        lengths[~resetting] += 1
        for index in np.flatnonzero(done):
            counted.append((index, returns[index], lengths[index]))
            reported.append((index, info["episode"]["r"][index], info["episode"]["l"][index]))
        returns[done | resetting], lengths[done | resetting] = 0.0, 0
        resetting = done if mode == "next_step" else np.zeros_like(done)
        if mode == "disabled" and done.any():
            env.reset(options={"reset_mask": done})
    return counted, reported


@needs_vector_wrappers
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "max_steps"), [("CartPole-v1", 15), ("Pendulum-v1", 7)])
def test_record_episode_statistics_reports_the_returns_and_lengths_counted_by_hand(mode, env_id, max_steps):
    def make() -> vecrl.TorchWrapper:
        return vecrl.make_vector_env(
            f"gym::{env_id}",
            num_envs=4,
            autoreset_mode=mode,
            max_episode_steps=max_steps,
            vector_wrappers=[gym.wrappers.vector.RecordEpisodeStatistics],
        )

    if mode == "same_step" and Version("1.4") > GYMNASIUM_VERSION:  # its wrapper would miscount: refused
        with pytest.raises(ValueError, match="one step short"):
            make()
        return
    env = make()
    counted, reported = hand_counted_episodes(env, mode, steps=50)
    assert len(counted) >= 8
    for (index, ret, length), (r_index, r_ret, r_length) in zip(counted, reported, strict=True):
        assert (index, length) == (r_index, r_length)
        assert ret == pytest.approx(r_ret)


@needs_vector_wrappers
def test_normalize_observation_normalizes_as_on_gymnasiums_own_vector_env():
    wrapper = gym.wrappers.vector.NormalizeObservation
    ours = vecrl.make_vector_env(
        "gym::Pendulum-v1",
        num_envs=3,
        autoreset_mode="next_step",
        seed_rule="gymnasium",
        vector_wrappers=[wrapper],
    )
    theirs = wrapper(gym.make_vec("Pendulum-v1", num_envs=3, vectorization_mode="sync"))  # next_step
    np.testing.assert_allclose(ours.reset(seed=5)[0].numpy(), theirs.reset(seed=5)[0], rtol=1e-6)
    ours.action_space.seed(0)
    for _ in range(10):
        actions = ours.action_space.sample()
        observation = ours.step(torch.from_numpy(actions))[0]
        assert isinstance(observation, torch.Tensor)
        np.testing.assert_allclose(observation.numpy(), theirs.step(actions)[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="NEXT_STEP or DISABLED"):  # gymnasium's own rule for this wrapper
        vecrl.make_vector_env("gym::Pendulum-v1", num_envs=3, vector_wrappers=[wrapper])


@needs_vector_wrappers
def test_reward_and_action_wrappers_applied_to_the_env_change_what_they_should():
    def pendulums(**kwargs):
        env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=2, **kwargs)
        env.reset(seed=3)
        return env

    plain = pendulums()
    doubled = gym.wrappers.vector.TransformReward(pendulums(), lambda reward: 2 * reward)
    clipped = gym.wrappers.vector.ClipAction(pendulums())
    rescaled = gym.wrappers.vector.RescaleAction(pendulums(), min_action=-1.0, max_action=1.0)
    # the same wrappers beneath the tensors, where they see numpy actions
    clipped_beneath = pendulums(vector_wrappers=[gym.wrappers.vector.ClipAction])
    rescale = functools.partial(gym.wrappers.vector.RescaleAction, min_action=-1.0, max_action=1.0)
    rescaled_beneath = pendulums(vector_wrappers=[rescale])
    for _ in range(5):
        expected = plain.step(torch.full((2, 1), 2.0))
        assert torch.equal(doubled.step(torch.full((2, 1), 2.0))[1], 2 * expected[1])
        assert torch.equal(torch.as_tensor(clipped.step(torch.full((2, 1), 7.5))[0]), expected[0])
        assert torch.equal(torch.as_tensor(rescaled.step(torch.full((2, 1), 1.0))[0]), expected[0])
        assert torch.equal(clipped_beneath.step(torch.full((2, 1), 7.5))[0], expected[0])
        assert torch.equal(rescaled_beneath.step(torch.full((2, 1), 1.0))[0], expected[0])


@needs_vector_wrappers
def test_record_video_records_the_sub_envs_frames(tmp_path):
    pytest.importorskip("moviepy")
    env = gym.wrappers.vector.RecordVideo(
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, render_mode="rgb_array"), str(tmp_path)
    )
    env.reset(seed=0)
    for _ in range(20):
        env.step(torch.zeros(2, dtype=torch.int64))
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert videos and videos[0].stat().st_size > 0


def test_wrappers_are_applied_to_each_sub_env_as_make_vec_does():
    env = vecrl.make_vector_env(
        "gym::CartPole-v1",
        num_envs=2,
        wrappers=[lambda env: gym.wrappers.TransformReward(env, lambda reward: 10 * reward)],  # 0.29 and 1.x
    )
    env.reset(seed=0)
    assert env.step(torch.zeros(2, dtype=torch.int64))[1].tolist() == [10.0, 10.0]
    single = vecrl.make_vector_env("gym::CartPole-v1", wrappers=[gym.wrappers.FlattenObservation])
    assert isinstance(single.env, gym.wrappers.FlattenObservation)


@pytest.mark.parametrize(
    ("wrappers", "message"),
    [
        (gym.wrappers.FlattenObservation, r"wrappers must be a list .* wrappers=\[FlattenObservation\]"),
        ([gym.wrappers.FlattenObservation, "clip"], r"wrappers\[1\] is 'clip', which is not callable"),
    ],
)
def test_wrappers_that_are_not_a_list_of_callables_are_a_type_error(wrappers, message):
    with pytest.raises(TypeError, match=message):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, wrappers=wrappers)


def test_vector_wrappers_need_a_vector_env_and_callables():
    with pytest.raises(ValueError, match="vector_wrappers wrap a vector env.*Pass num_envs"):
        vecrl.make_vector_env("gym::CartPole-v1", vector_wrappers=[lambda env: env])
    with pytest.raises(TypeError, match=r"vector_wrappers\[0\] is 3, which is not callable"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, vector_wrappers=[3])


@needs_vector_wrappers
def test_vector_wrappers_keep_the_classic_api_outermost():
    env = vecrl.make_vector_env(
        "gym::CartPole-v1",
        num_envs=2,
        force_classic_api=True,
        autoreset_mode="next_step",  # (as every gymnasium's RecordEpisodeStatistics counts)
        vector_wrappers=[gym.wrappers.vector.RecordEpisodeStatistics],
    )
    assert isinstance(env.reset(seed=0), torch.Tensor)
    observation, reward, done, info = env.step(torch.zeros(2, dtype=torch.int64))
    assert observation.shape == (2, 4) and done.dtype == torch.bool
