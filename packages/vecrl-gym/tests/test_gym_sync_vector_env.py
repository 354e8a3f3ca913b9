"""SyncVectorEnv: eager autoreset, seeding, info batching and the VectorEnv surface, on real envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gym_helpers import (
    MUJOCO_ENV_ID,
    assert_same_info,
    hand_rollout,
    in_vecrl_layout,
    random_actions,
    sub_seeds,
)

from vecrl.compat import FINAL_INFO_KEY, FINAL_OBS_KEY, GYMNASIUM_1, AutoresetMode
from vecrl_gym import SyncVectorEnv


def make_env(env_id: str, num_envs: int, **kwargs) -> SyncVectorEnv:
    make_kwargs = kwargs.pop("make_kwargs", {})
    return SyncVectorEnv([lambda: gym.make(env_id, **make_kwargs)] * num_envs, **kwargs)


@pytest.mark.parametrize(
    ("env_id", "num_steps"),
    [("CartPole-v1", 120), ("Pendulum-v1", 30), ("Acrobot-v1", 30), (MUJOCO_ENV_ID, 60)],
)
def test_steps_like_a_plain_loop_over_gym_make_envs_with_eager_autoreset(env_id, num_steps):
    env = make_env(env_id, 3, make_kwargs={"max_episode_steps": 25})
    actions = random_actions(env, num_steps)
    first, expected_steps, _ = hand_rollout(env_id, sub_seeds(11, 3), actions, max_episode_steps=25)

    obs, _ = env.reset(seed=11)
    np.testing.assert_array_equal(obs, first)
    for batch, (exp_obs, exp_reward, exp_term, exp_trunc) in zip(actions, expected_steps, strict=True):
        obs, reward, terminated, truncated, _ = env.step(batch)
        np.testing.assert_array_equal(obs, exp_obs)
        np.testing.assert_array_equal(reward, exp_reward)
        np.testing.assert_array_equal(terminated, exp_term)
        np.testing.assert_array_equal(truncated, exp_trunc)
    assert any((te | tr).any() for _, _, te, tr in expected_steps), "the rollout should cross episode ends"


def test_results_have_the_batched_shapes_and_dtypes_of_the_spaces():
    env = make_env("Pendulum-v1", 4)
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 3) and obs.dtype == np.float32 and info == {}
    assert env.observation_space.shape == (4, 3) and env.action_space.shape == (4, 1)
    obs, reward, terminated, truncated, info = env.step(np.zeros((4, 1), dtype=np.float32))
    assert obs.shape == (4, 3) and obs.dtype == np.float32
    assert reward.shape == (4,) and reward.dtype == np.float64
    assert terminated.dtype == truncated.dtype == np.bool_ and terminated.shape == (4,)
    assert env.single_observation_space == gym.make("Pendulum-v1").observation_space


def test_returned_arrays_are_fresh_each_step_so_kept_references_stay_valid():
    env = make_env("CartPole-v1", 2)
    env.reset(seed=0)
    first = env.step(np.array([0, 1]))
    kept = [np.copy(a) for a in first[:4]]
    env.step(np.array([1, 0]))
    for before, after in zip(kept, first[:4], strict=True):
        np.testing.assert_array_equal(before, after)


def test_an_ended_episode_reports_its_last_observation_and_info_under_gymnasiums_keys():
    env = make_env("CartPole-v1", 3)
    env.reset(seed=3)
    final_observations = []
    for _ in range(40):
        observation, _, terminated, truncated, info = env.step(np.array([1, 1, 1]))
        ended = terminated | truncated
        if not ended.any():
            assert FINAL_OBS_KEY not in info
            continue
        np.testing.assert_array_equal(info[f"_{FINAL_OBS_KEY}"], ended)
        np.testing.assert_array_equal(info[f"_{FINAL_INFO_KEY}"], ended)
        # vecrl's layout: a batch like the observations, the returned observation where no episode ended
        assert (
            info[FINAL_OBS_KEY].dtype == observation.dtype and info[FINAL_OBS_KEY].shape == observation.shape
        )
        np.testing.assert_array_equal(info[FINAL_OBS_KEY][~ended], observation[~ended])
        final_observations += [info[FINAL_OBS_KEY][i] for i in np.flatnonzero(ended)]
    assert final_observations, "pushing right ends CartPole episodes within 40 steps"
    # The final observation is the one that ended the episode: the pole fell or the cart left the track.
    for final_obs in final_observations:
        assert abs(final_obs[2]) > 0.2095 or abs(final_obs[0]) > 2.4, final_obs


@pytest.mark.parametrize("device", [None, "cpu"])
def test_tuple_observations_final_observations_are_a_tuple_batch_like_the_observations(device):
    # Blackjack: Tuple(Discrete(32), Discrete(11), Discrete(2)) observations, episodes of one or two steps
    env = make_env("Blackjack-v1", 4, device=device)
    env.reset(seed=0)
    ends = 0
    for step in range(6):
        observation, _, terminated, truncated, info = env.step(np.full(4, step % 2))
        ended = np.asarray(terminated | truncated)
        if not ended.any():
            continue
        ends += int(ended.sum())
        finals, mask = info[FINAL_OBS_KEY], info[f"_{FINAL_OBS_KEY}"]
        assert isinstance(finals, tuple) and len(finals) == 3
        assert type(mask) is type(observation[0]) and np.asarray(mask).tolist() == ended.tolist()
        for leaf, final in zip(observation, finals, strict=True):
            assert type(final) is type(leaf) and final.dtype == leaf.dtype and final.shape == leaf.shape
            np.testing.assert_array_equal(np.asarray(final)[~ended], np.asarray(leaf)[~ended])
    assert ends, "Blackjack episodes end within a few steps"


HOPPER_ENV_ID = "Hopper-v5" if GYMNASIUM_1 else "Hopper-v4"


@pytest.mark.parametrize("device", [None, "cpu"])
@pytest.mark.parametrize(
    ("env_id", "make_kwargs"),
    [
        ("FrozenLake-v1", {"is_slippery": True}),
        (MUJOCO_ENV_ID, {}),
        # Hopper's reset info and step info have different keys, and its final infos are not empty.
        (HOPPER_ENV_ID, {"max_episode_steps": 6}),
        ("Pendulum-v1", {"max_episode_steps": 4}),
    ],
)
@pytest.mark.skipif(
    GYMNASIUM_1 and AutoresetMode is None,
    reason="gymnasium 1.0's SyncVectorEnv has no same-step mode to compare with",
)
def test_info_is_batched_exactly_as_gymnasiums_own_same_step_sync_vector_env(env_id, make_kwargs, device):
    seeds = [5, 6, 7]
    ours = SyncVectorEnv([lambda: gym.make(env_id, **make_kwargs)] * 3, device=device)
    same_step = {"autoreset_mode": AutoresetMode.SAME_STEP} if GYMNASIUM_1 else {}  # 0.29: same-step only
    theirs = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **make_kwargs)] * 3, **same_step)
    actions = random_actions(ours, 30)

    ours_obs, ours_info = as_numpy(ours.reset(seed=seeds), device)
    theirs_obs, theirs_info = theirs.reset(seed=seeds)
    np.testing.assert_array_equal(ours_obs, theirs_obs)
    assert_same_info(ours_info, theirs_info)
    ends = 0
    for batch in actions:
        ours_step, theirs_step = as_numpy(ours.step(batch), device), theirs.step(batch)
        for a, b in zip(ours_step[:4], theirs_step[:4], strict=True):
            np.testing.assert_array_equal(a, b)
        assert_same_info(ours_step[4], in_vecrl_layout(theirs_step[0], theirs_step[4]))
        ends += int((theirs_step[2] | theirs_step[3]).sum())
    assert ends >= 2 or env_id == MUJOCO_ENV_ID, "the rollout should cross episode ends"


def as_numpy(result: tuple, device: str | None) -> tuple:
    """A step or reset result with every tensor (also in info) as a numpy array; with a ``device``, the
    numeric and bool arrays must all have been tensors, and nothing else."""
    if device is None:
        return result

    def convert(value):
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        assert not (isinstance(value, np.ndarray) and value.dtype.kind in "biuf"), (
            "a numeric array was not moved"
        )
        return value.numpy() if isinstance(value, torch.Tensor) else value

    return tuple(convert(item) for item in result)


def test_empty_info_reports_an_empty_dict_even_when_episodes_end():
    env = make_env("FrozenLake-v1", 2, empty_info=True)
    _, info = env.reset(seed=0)
    assert info == {}
    for _ in range(30):
        *_, info = env.step(np.array([1, 1]))
        assert info == {}


def test_reset_with_an_int_seed_derives_evotorchs_sub_seeds():
    env = make_env("CartPole-v1", 4)
    obs, _ = env.reset(seed=123)
    expected = [gym.make("CartPole-v1").reset(seed=s)[0] for s in sub_seeds(123, 4)]
    np.testing.assert_array_equal(obs, np.stack(expected))


def test_reset_with_a_list_of_seeds_seeds_each_sub_env_with_its_own():
    env = make_env("CartPole-v1", 3)
    obs, _ = env.reset(seed=[4, None, 6])
    np.testing.assert_array_equal(obs[0], gym.make("CartPole-v1").reset(seed=4)[0])
    np.testing.assert_array_equal(obs[2], gym.make("CartPole-v1").reset(seed=6)[0])


def test_seed_then_reset_equals_reset_with_the_seed_and_the_seed_is_used_once():
    env = make_env("Acrobot-v1", 2)
    env.seed(9)
    seeded_obs, _ = env.reset()
    np.testing.assert_array_equal(seeded_obs, env.reset(seed=9)[0])
    unseeded_obs, _ = env.reset()
    assert not np.array_equal(unseeded_obs, seeded_obs)


def test_a_pending_seed_reaches_the_env_through_a_wrapper_and_seed_none_cancels_it():
    env = make_env("Acrobot-v1", 2)
    seeded_obs, _ = env.reset(seed=9)
    env.seed(9)
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(env) if GYMNASIUM_1 else env
    obs, _ = wrapped.reset()  # passes seed=None on, which keeps the pending seed
    np.testing.assert_array_equal(obs, seeded_obs)
    env.seed(9)
    env.seed(None)
    obs, _ = env.reset(seed=None)
    assert not np.array_equal(obs, seeded_obs)


def test_same_seed_and_actions_reproduce_the_whole_trajectory():
    def trajectory():
        env = make_env("Pendulum-v1", 2, make_kwargs={"max_episode_steps": 10})
        actions = random_actions(env, 25)
        steps = [env.reset(seed=2)[0]]
        steps += [env.step(a)[0] for a in actions]
        return np.stack(steps)

    np.testing.assert_array_equal(trajectory(), trajectory())


def test_reset_options_reach_every_sub_env():
    env = make_env("Pendulum-v1", 2)
    obs, _ = env.reset(seed=0, options={"x_init": 0.0, "y_init": 0.0})
    np.testing.assert_array_equal(obs, np.array([[1.0, 0.0, 0.0]] * 2, dtype=np.float32))


def test_device_gives_torch_tensors_on_that_device_with_the_same_values():
    numpy_env = make_env("FrozenLake-v1", 2)
    torch_env = make_env("FrozenLake-v1", 2, device="cpu")
    np_obs, _ = numpy_env.reset(seed=1)
    t_obs, t_info = torch_env.reset(seed=1)
    assert isinstance(t_obs, torch.Tensor) and torch.equal(t_obs, torch.from_numpy(np_obs))
    assert isinstance(t_info["prob"], torch.Tensor)
    for _ in range(12):
        np_step = numpy_env.step(np.array([1, 1]))
        t_step = torch_env.step(torch.tensor([1, 1]))
        for a, t in zip(np_step[:4], t_step[:4], strict=True):
            assert isinstance(t, torch.Tensor) and t.device.type == "cpu"
            assert torch.equal(t, torch.from_numpy(a))
        if FINAL_OBS_KEY in t_step[4]:
            assert isinstance(t_step[4][f"_{FINAL_OBS_KEY}"], torch.Tensor)


def test_device_other_than_cpu_moves_the_results_there():
    env = make_env("Pendulum-v1", 2, device="meta")  # a real non-CPU device available everywhere
    obs, _ = env.reset(seed=0)
    assert obs.device.type == "meta" and obs.shape == (2, 3)
    obs, reward, terminated, truncated, _ = env.step(torch.zeros(2, 1))
    assert {t.device.type for t in (obs, reward, terminated, truncated)} == {"meta"}
    assert reward.dtype == torch.float64 and terminated.dtype == torch.bool


def test_actions_may_be_numpy_torch_or_nested_lists():
    env = make_env("Pendulum-v1", 2)
    env.reset(seed=0)
    env.step(np.zeros((2, 1), dtype=np.float32))
    env.step(torch.zeros(2, 1, requires_grad=True))
    env.step([[0.5], [-0.5]])


def test_metadata_declares_same_step_autoreset_and_keeps_the_sub_envs_metadata():
    env = make_env("CartPole-v1", 2)
    # gymnasium's enum where it has one (>= 1.1), else the mode's name
    assert env.metadata["autoreset_mode"] == (
        AutoresetMode.SAME_STEP if AutoresetMode is not None else "same_step"
    )
    assert env.metadata["render_fps"] == gym.make("CartPole-v1").metadata["render_fps"]
    assert isinstance(env, gym.vector.VectorEnv)


def test_call_get_attr_and_set_attr_reach_the_sub_envs():
    env = make_env("CartPole-v1", 2)
    assert env.get_attr("gravity") == (9.8, 9.8)
    env.set_attr("gravity", [1.0, 2.0])
    assert env.get_attr("gravity") == (1.0, 2.0)
    env.set_attr("gravity", 3.0)
    assert env.call("get_wrapper_attr", "gravity") == (3.0, 3.0)
    assert env.call("gravity") == (3.0, 3.0)


def test_render_returns_one_frame_per_sub_env():
    env = make_env("CartPole-v1", 2, make_kwargs={"render_mode": "rgb_array"})
    env.reset(seed=0)
    frames = env.render()
    assert len(frames) == 2 and frames[0].shape == (400, 600, 3)
    assert env.render_mode == "rgb_array"


def test_close_closes_the_sub_envs_and_is_idempotent():
    env = make_env("CartPole-v1", 2, make_kwargs={"render_mode": "rgb_array"})
    env.reset(seed=0)
    env.render()
    env.close()
    env.close()
    assert env.closed
    assert not any(sub_env.unwrapped.isopen for sub_env in env.envs)


def test_gymnasium_029_style_step_async_and_wait_step_like_step():
    env, twin = make_env("CartPole-v1", 2), make_env("CartPole-v1", 2)
    np.testing.assert_array_equal(env.reset(seed=1)[0], twin.reset_wait(seed=1)[0])
    twin.step_async(np.array([0, 1]))
    for a, b in zip(env.step(np.array([0, 1]))[:4], twin.step_wait()[:4], strict=True):
        np.testing.assert_array_equal(a, b)


def _bounded_pendulum(low: float):
    """Pendulum whose observation space has its own lower bound (observations unchanged)."""

    def make():
        space = gym.spaces.Box(low, 10.0, (3,), np.float32)
        return gym.wrappers.TransformObservation(gym.make("Pendulum-v1"), lambda o: o, space)

    return make


@pytest.mark.skipif(not GYMNASIUM_1, reason="observation_mode is gymnasium >= 1.0's")
def test_observation_mode_different_batches_spaces_as_gymnasium_does():
    makers = [_bounded_pendulum(-1.0), _bounded_pendulum(-2.0), _bounded_pendulum(-3.0)]
    ours = SyncVectorEnv(makers, observation_mode="different")
    theirs = gym.vector.SyncVectorEnv(makers, observation_mode="different")
    assert ours.observation_space == theirs.observation_space
    assert ours.single_observation_space == theirs.single_observation_space
    np.testing.assert_array_equal(ours.reset(seed=[1, 2, 3])[0], theirs.reset(seed=[1, 2, 3])[0])
    with pytest.raises(RuntimeError, match="other bounds.*observation_mode='different'"):
        SyncVectorEnv(makers)  # "same" (the default) needs equal spaces
    with pytest.raises(RuntimeError, match="shape or dtype differs"):
        SyncVectorEnv([makers[0], lambda: gym.make("CartPole-v1")], observation_mode="different")
    custom = (gym.spaces.Box(-5.0, 5.0, (3, 3), np.float32), gym.spaces.Box(-5.0, 5.0, (3,), np.float32))
    assert SyncVectorEnv(makers, observation_mode=custom).observation_space == custom[0]


@pytest.mark.parametrize(("mode", "error"), [("differnt", ValueError), ((1, 2), TypeError)])
def test_a_bad_observation_mode_says_what_is_expected(mode, error):
    with pytest.raises(error, match="observation_mode"):
        SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 2, observation_mode=mode)


class _ResetTakesNoOptions(gym.Env):
    """An env written before gymnasium's reset took options: ``reset(self, seed=None)``."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None):  # type: ignore[override]
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, True, False, {}


def test_an_env_whose_reset_takes_no_options_resets_and_autoresets():
    env = SyncVectorEnv([_ResetTakesNoOptions] * 2)  # (a TypeError for options=None before)
    observation, _ = env.reset(seed=0)
    assert observation.shape == (2, 2)
    assert env.step(np.array([0, 1]))[1].tolist() == [1.0, 1.0]  # each episode ends: an autoreset
    env.close()
