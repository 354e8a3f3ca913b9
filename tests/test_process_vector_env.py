"""ProcessVectorEnv steps exactly like SyncVectorEnv (itself checked against gymnasium's SyncVectorEnv in
test_autoreset_modes.py): same seeds and actions give the same observations, rewards, flags and infos
(final observations and infos included), in every autoreset mode, with masked resets and budgets, for
MuJoCo (float64), Discrete and composite (Dict / Tuple) spaces, in blocks of uneven size."""

from __future__ import annotations

import threading

import composite_env
import gymnasium as gym
import numpy as np
import pytest
import torch
from test_autoreset_modes import MODES, assert_same

import vecrl
from vecrl.compat import GYMNASIUM_1
from vecrl_gym import ProcessVectorEnv, SyncVectorEnv

HOPPER = "Hopper-v5" if GYMNASIUM_1 else "Hopper-v4"  # gymnasium 0.29 has v4
CASES = [
    ("CartPole-v1", 12, {}),
    (HOPPER, 8, {}),
    (f"composite_env:{composite_env.ENV_ID}", 6, {}),
    ("FrozenLake-v1", 6, {"is_slippery": True}),
]


def makers(env_id: str, max_steps: int, kwargs: dict, num_envs: int) -> list:
    return [lambda: gym.make(env_id, max_episode_steps=max_steps, **kwargs)] * num_envs


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "max_steps", "kwargs"), CASES)
def test_workers_step_exactly_like_the_sync_env_in_every_mode(mode, env_id, max_steps, kwargs):
    num_envs = 5  # blocks of 2 and 3 sub-envs
    sync = SyncVectorEnv(makers(env_id, max_steps, kwargs, num_envs), autoreset_mode=mode)
    process = ProcessVectorEnv(
        makers(env_id, max_steps, kwargs, num_envs), num_workers=2, autoreset_mode=mode
    )
    try:
        sync.action_space.seed(0)
        assert_same(process.reset(seed=7), sync.reset(seed=7))
        ends = 0
        for t in range(40):
            actions = sync.action_space.sample()
            expected = sync.step(actions)
            assert_same(process.step(actions), expected, f"step {t}")
            finished = expected[2] | expected[3]
            ends += int(finished.sum())
            if mode == "disabled" and finished.any():
                seeds = [100 + t + i for i in range(num_envs)]
                options = {"reset_mask": finished}
                assert_same(
                    process.reset(seed=seeds, options=options), sync.reset(seed=seeds, options=options)
                )
        assert ends >= 3, "the rollout should cross several episode ends"
        if GYMNASIUM_1:  # gymnasium 0.29's envs keep no np_random_seed
            assert process.np_random_seed == sync.np_random_seed
    finally:
        sync.close()
        process.close()


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_budgets_and_masked_resets_in_mid_episode_match_the_sync_env(mode):
    options = {"num_episodes": 2, "autoreset_mode": mode, "seed_rule": "gymnasium"}
    sync = SyncVectorEnv(makers("CartPole-v1", 9, {}, 3), **options)
    process = ProcessVectorEnv(makers("CartPole-v1", 9, {}, 3), num_workers=3, **options)
    try:
        assert_same(process.reset(seed=3), sync.reset(seed=3))
        for t in range(30):
            actions = np.array([t % 2, 1, 0])
            assert_same(process.step(actions), sync.step(actions), f"step {t}")
            if t == 4:
                mask = {"reset_mask": np.array([False, True, False])}
                assert_same(
                    process.reset(seed=[None, 9, None], options=mask),
                    sync.reset(seed=[None, 9, None], options=mask),
                )
        assert np.isnan(sync.step(np.zeros(3, np.int64))[1]).all()  # every budget spent
    finally:
        sync.close()
        process.close()


def test_empty_info_sends_no_info_and_device_gives_tensors():
    sync = SyncVectorEnv(makers(HOPPER, 5, {}, 4), empty_info=True, device="cpu")
    process = ProcessVectorEnv(makers(HOPPER, 5, {}, 4), num_workers=2, empty_info=True, device="cpu")
    try:
        for ours, theirs in zip(process.reset(seed=1), sync.reset(seed=1), strict=True):
            assert type(ours) is type(theirs)
        actions = torch.full((4, 3), 0.5)
        for _ in range(8):
            ours, theirs = process.step(actions), sync.step(actions)
            for a, b in zip(ours[:4], theirs[:4], strict=True):
                assert isinstance(a, torch.Tensor) and torch.equal(a, b)
            assert ours[4] == theirs[4] == {}
    finally:
        sync.close()
        process.close()


def test_make_vector_env_with_workers_gives_the_same_tensors_as_without():
    env = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=6, num_workers=2)
    plain = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=6)
    try:
        assert isinstance(env.unwrapped, ProcessVectorEnv) and env.unwrapped.num_workers == 2
        assert torch.equal(env.reset(seed=5)[0], plain.reset(seed=5)[0])
        for _ in range(30):
            actions = torch.rand(6, 3) * 2 - 1
            for a, b in zip(env.step(actions)[:4], plain.step(actions)[:4], strict=True):
                assert torch.equal(a, b)
    finally:
        env.close()
        plain.close()


def test_call_get_attr_set_attr_and_render_reach_every_sub_env_in_order():
    sync = SyncVectorEnv(makers("CartPole-v1", 50, {"render_mode": "rgb_array"}, 3))
    process = ProcessVectorEnv(makers("CartPole-v1", 50, {"render_mode": "rgb_array"}, 3), num_workers=2)
    try:
        process.set_attr("gravity", [1.0, 2.0, 3.0])
        assert process.get_attr("gravity") == (1.0, 2.0, 3.0)
        process.set_attr("gravity", 9.0)
        assert process.call("get_wrapper_attr", "gravity") == (9.0, 9.0, 9.0)
        process.reset(seed=0)
        sync.reset(seed=0)
        frames = process.render()
        assert len(frames) == 3 and all(
            np.array_equal(a, b) for a, b in zip(frames, sync.render(), strict=True)
        )
        assert process.metadata["render_fps"] == sync.metadata["render_fps"]
    finally:
        sync.close()
        process.close()


def test_non_finite_actions_are_refused_but_those_of_spent_or_resetting_sub_envs_pass():
    env = ProcessVectorEnv(
        [lambda: gym.make("Pendulum-v1", max_episode_steps=2)] * 4, num_workers=2, num_episodes=1
    )
    try:
        env.reset(seed=0)
        with pytest.raises(ValueError, match=r"ProcessVectorEnv.*non-finite.*sub-envs \[3\].*No sub-env"):
            env.step(np.array([[0.0], [0.0], [0.0], [np.nan]], np.float32))
        env.step(np.zeros((4, 1), np.float32))
        assert env.step(np.zeros((4, 1), np.float32))[3].all()  # every budget is now spent
        reward = env.step(np.full((4, 1), np.nan, np.float32))[1]
        assert np.isnan(reward).all()
    finally:
        env.close()
    env = ProcessVectorEnv(
        [lambda: gym.make("CartPole-v1", max_episode_steps=1)] * 2, num_workers=2, autoreset_mode="next_step"
    )
    try:
        env.reset(seed=0)
        env.step(np.zeros(2, np.int64))
        assert env.step(np.array([5, 9]))[1].tolist() == [0.0, 0.0]  # both reset: actions ignored
        with pytest.raises(ValueError, match=r"sub-envs \[1\] are \[9\]"):
            env.step(np.array([0, 9]))
    finally:
        env.close()


@pytest.mark.skipif(not vecrl.compat.GYMNASIUM_1, reason="observation_mode is gymnasium >= 1.0's")
def test_observation_mode_different_gives_the_sync_envs_spaces():
    def bounded(low):
        def make():
            space = gym.spaces.Box(low, 10.0, (3,), np.float32)
            return gym.wrappers.TransformObservation(gym.make("Pendulum-v1"), lambda o: o, space)

        return make

    makers = [bounded(-1.0), bounded(-2.0), bounded(-3.0), bounded(-4.0)]
    sync = SyncVectorEnv(makers, observation_mode="different")
    process = ProcessVectorEnv(makers, num_workers=2, observation_mode="different")
    try:
        assert process.observation_space == sync.observation_space
        np.testing.assert_array_equal(process.reset(seed=0)[0], sync.reset(seed=0)[0])
        with pytest.raises(RuntimeError, match="Sub-env 2 has the observation space.*other bounds"):
            ProcessVectorEnv(makers[:1] * 2 + makers[1:2] * 2, num_workers=2)  # the worker's differ
    finally:
        sync.close()
        process.close()


def test_a_maker_that_does_not_pickle_is_named():
    lock = threading.Lock()

    def locked():
        assert lock
        return gym.make("CartPole-v1")

    with pytest.raises(
        TypeError,
        match=r"env_makers\[1\] \(<function .*locked.*cannot be sent to"
        r" ProcessVectorEnv's worker processes.*_thread.lock",
    ):
        ProcessVectorEnv([locked] * 2, num_workers=2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("env_id", "max_steps", "kwargs"), CASES)
def test_each_async_batch_is_what_a_sync_env_of_its_sub_envs_alone_gives(mode, env_id, max_steps, kwargs):
    # MuJoCo (float64), Dict/Tuple observations and Discrete ones, every mode: a batch recv() returns is the
    # result of a SyncVectorEnv of those sub-envs alone (same seeds, same actions), infos and final
    # observations included, whatever the order the batches come back in
    num_envs, k = 6, 2
    batches = ProcessVectorEnv(
        makers(env_id, max_steps, kwargs, num_envs), batch_size=k, num_workers=2, autoreset_mode=mode
    )
    alone = [
        SyncVectorEnv(makers(env_id, max_steps, kwargs, k), autoreset_mode=mode)
        for _ in range(0, num_envs, k)
    ]
    try:
        seeds = batches.sub_env_seeds(7)
        expected = [env.reset(seed=seeds[b * k : b * k + k]) for b, env in enumerate(alone)]
        alone[0].action_space.seed(0)
        batches.async_reset(seed=7)
        ends, stepping = 0, set(range(len(alone)))
        for t in range(25):
            for _ in range(len(stepping)):
                *got, info = batches.recv()
                ids = info.pop("env_id")
                b = int(ids[0]) // k
                assert ids.tolist() == list(range(b * k, b * k + k))
                want = expected[b]
                if len(want) == 2:  # (the reset: reward 0 and neither flag)
                    want = (want[0], np.zeros(k), np.zeros(k, bool), np.zeros(k, bool), want[1])
                assert_same((*got, info), want, f"step {t} batch {b}")
            for b in sorted(stepping):
                previous = expected[b]
                if mode == "disabled" and len(previous) == 5 and (previous[2] | previous[3]).any():
                    stepping.discard(b)  # (a finished sub-env: this batch stops, as lockstep must)
                    continue
                actions = alone[0].action_space.sample()
                expected[b] = alone[b].step(actions)
                ends += int((expected[b][2] | expected[b][3]).sum())
                batches.send(actions, np.arange(b * k, b * k + k))
            if not stepping:
                break
        assert ends >= 3
    finally:
        batches.close()
        for env in alone:
            env.close()
