"""SB3VecEnv on vecrl's backends against stable-baselines3 itself: DummyVecEnv's results step for step,
PPO training, the VecEnv surface, brax, and the mistakes a new user makes.

These need the gym backend (vecrl-gym), which the `tests` session and the `isolation(core+gym+sb3)` row
(the README's install) install; the `isolation(core+sb3)` row, with vecrl-sb3 alone, runs test_sb3_alone.py.
"""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

import vecrl
from vecrl_sb3 import SB3VecEnv

pytest.importorskip("vecrl_gym")


def assert_same_infos(ours: list[dict], theirs: list[dict]) -> None:
    assert len(ours) == len(theirs)
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert sorted(a) == sorted(b), f"sub-env {index}: {sorted(a)} != {sorted(b)}"
        for key in b:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"sub-env {index}, {key}")


@pytest.mark.parametrize(("env_id", "max_steps"), [("CartPole-v1", 15), ("Hopper-v5", 6)])
def test_steps_like_sb3s_dummy_vec_env_given_the_same_seed(env_id, max_steps):
    ours = SB3VecEnv(
        vecrl.make_vector_env(
            f"gym::{env_id}", num_envs=3, seed_rule="gymnasium", max_episode_steps=max_steps
        )
    )
    theirs = DummyVecEnv([lambda: gym.make(env_id, max_episode_steps=max_steps)] * 3)
    assert ours.seed(5) == theirs.seed(5) == [5, 6, 7]
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    assert_same_infos(ours.reset_infos, theirs.reset_infos)
    space = theirs.action_space
    space.seed(0)
    dones_seen = 0
    for _ in range(40):
        actions = np.stack([space.sample() for _ in range(3)])
        (obs, rewards, dones, infos), expected = ours.step(actions), theirs.step(actions)
        np.testing.assert_array_equal(obs, expected[0])
        assert rewards.dtype == expected[1].dtype == np.float32
        np.testing.assert_array_equal(rewards, expected[1])
        np.testing.assert_array_equal(dones, expected[2])
        assert_same_infos(infos, expected[3])
        assert_same_infos(ours.reset_infos, theirs.reset_infos)
        dones_seen += int(dones.sum())
    assert dones_seen >= 3


def test_ppo_trains_on_it_and_sees_the_episodes_monitor_reports():
    env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=8, wrappers=[Monitor]))
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=3072)
    assert model.num_timesteps >= 3072
    assert len(model.ep_info_buffer) > 20  # episode returns reached SB3 through the final infos
    assert all(info["r"] == info["l"] for info in model.ep_info_buffer)  # CartPole: reward 1 per step
    env.close()


def test_a_brax_env_steps_with_terminal_observations():
    pytest.importorskip("brax")
    env = SB3VecEnv(vecrl.make_vector_env("brax::fast", num_envs=2, episode_length=3))
    env.seed(0)
    first = env.reset()
    assert first.shape == (2, env.observation_space.shape[0]) and env.get_attr("render_mode") == [None, None]
    for _ in range(3):
        obs, rewards, dones, infos = env.step(np.zeros((2, env.action_space.shape[0]), np.float32))
    assert dones.all()
    assert all(
        info["TimeLimit.truncated"] and info["terminal_observation"].shape == first.shape[1:]
        for info in infos
    )


def test_the_vec_env_surface_reaches_the_sub_envs():
    env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=3, wrappers=[Monitor]))
    assert env.get_attr("gravity") == [9.8, 9.8, 9.8]
    env.set_attr("gravity", 1.6, indices=[1])
    assert env.get_attr("gravity") == [9.8, 1.6, 9.8]
    assert env.env_method("get_wrapper_attr", "gravity", indices=[0, 1]) == [9.8, 1.6]
    assert env.env_is_wrapped(Monitor) == [True, True, True]
    assert env.env_is_wrapped(gym.wrappers.FlattenObservation, indices=2) == [False]
    assert [type(sub_env).__name__ for sub_env in env.envs] == ["Monitor"] * 3  # as DummyVecEnv.envs
    assert env.envs[1].get_wrapper_attr("gravity") == 1.6
    workers = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_workers=2))
    with pytest.raises(AttributeError, match="keeps no sub-env objects in this process.*get_attr"):
        _ = workers.envs
    workers.close()


def test_mistakes_are_errors_that_say_how_to_fix_them():
    with pytest.raises(TypeError, match="takes a vecrl vector env.*num_envs"):
        SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1"))
    with pytest.raises(ValueError, match="autoresets in the same step.*autoreset_mode='same_step'"):
        SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, autoreset_mode="next_step"))
    with pytest.raises(ValueError, match="without an episode budget.*num_episodes=2"):
        SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=2))
    with pytest.raises(ValueError, match="force_classic_api=True. Make it without force_classic_api"):
        SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, force_classic_api=True))


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda env: env.step_wait(), RuntimeError, r"step_wait\(\) was called without step_async"),
        (lambda env: env.seed("3"), ValueError, "seed must be None or an int >= 0, got '3'"),
        (lambda env: env.seed(True), ValueError, "seed must be None or an int >= 0, got True"),
        (lambda env: env.seed(-1), ValueError, "seed must be None or an int >= 0"),
        (
            lambda env: env.get_attr("spec", indices=[7]),
            IndexError,
            r"indices \[7\] name no sub-env: this VecEnv has 3",
        ),
        (lambda env: env.step(None), TypeError, "expects numeric actions, one per sub-env"),
        (lambda env: env.step("0101"), TypeError, "expects numeric actions, one per sub-env"),
        (
            lambda env: env.step([[0], [1, 0], 0]),
            ValueError,
            "one action per sub-env, of one shape, but got a ragged",
        ),
    ],
)
def test_calls_out_of_order_and_actions_that_are_not_numbers_are_clear_errors(call, error, words):
    env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=3))
    env.reset()
    with pytest.raises(error, match=words):
        call(env)
    env.step(np.array([0, 1, 0]))  # the env still steps after the refused call
    env.close()


class _Echo(gym.Env):
    """Echoes its Dict or Tuple action as the observation, so a step shows which action each sub-env got."""

    observation_space = gym.spaces.Box(-2.0, 2.0, (3,), np.float32)

    def __init__(self, kind: str) -> None:
        parts = (gym.spaces.Discrete(2), gym.spaces.Box(-1.0, 1.0, (2,), np.float32))
        self.kind = kind
        self.action_space = (
            gym.spaces.Dict(a=parts[0], b=parts[1]) if kind == "dict" else gym.spaces.Tuple(parts)
        )

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(3, np.float32), {}

    def step(self, action):
        a, b = (action["a"], action["b"]) if self.kind == "dict" else action
        return np.array([a, *b], np.float32), 0.0, False, False, {}


gym.register("vecrl-test/Echo-v0", entry_point=_Echo)


@pytest.mark.parametrize("kind", ["dict", "tuple"])
def test_dict_and_tuple_actions_one_per_sub_env_step_as_in_dummy_vec_env(kind):
    def pack(a, b):
        return {"a": a, "b": b} if kind == "dict" else (a, b)

    actions = [pack(1, np.array([0.5, -0.5], np.float32)), pack(0, np.array([0.25, 1.0], np.float32))]
    ours = SB3VecEnv(vecrl.make_vector_env("gym::vecrl-test/Echo-v0", num_envs=2, kind=kind))
    theirs = DummyVecEnv([lambda: _Echo(kind)] * 2)
    ours.reset(), theirs.reset()
    expected = theirs.step(actions)[0]
    np.testing.assert_array_equal(ours.step(actions)[0], expected)
    batched = (
        {"a": np.array([1, 0]), "b": np.stack([a["b"] for a in actions])}
        if kind == "dict"
        else (np.array([1, 0]), np.stack([a[1] for a in actions]))
    )
    np.testing.assert_array_equal(ours.step(batched)[0], expected)  # vecrl's own form still steps
    with pytest.raises(ValueError, match="sub-env 1's has"):
        ours.step([actions[0], {"a": 0}] if kind == "dict" else [actions[0], (0,)])


def episodes_seen_by_ppo(env: SB3VecEnv) -> int:
    model = PPO("MlpPolicy", env, n_steps=64, seed=0, device="cpu")
    model.learn(total_timesteps=512)  # one rollout of 8 x 64 steps
    return len(model.ep_info_buffer)


def test_a_vector_wrapper_s_episode_statistics_reach_ppo_as_monitor_s_do():
    # SB3 reads info["episode"] where a row's episode ended: gymnasium's RecordEpisodeStatistics reports it
    # at the vector level, beside the ended episode's own last info
    monitored = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=8, wrappers=[Monitor]))
    recorded = SB3VecEnv(
        vecrl.make_vector_env(
            "gym::CartPole-v1", num_envs=8, vector_wrappers=[gym.wrappers.vector.RecordEpisodeStatistics]
        )
    )
    monitored.seed(0)
    recorded.seed(0)
    assert episodes_seen_by_ppo(recorded) == episodes_seen_by_ppo(monitored) > 0


def test_monitor_s_episode_records_are_python_numbers_as_in_dummy_vec_env():
    env = SB3VecEnv(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, wrappers=[Monitor]))
    env.reset()
    for _ in range(200):
        _, _, dones, infos = env.step(np.ones(2, dtype=np.int64))
        if dones.any():
            break
    episode = infos[int(np.flatnonzero(dones)[0])]["episode"]
    assert {type(value) for value in episode.values()} <= {int, float}
    json.dumps(episode)  # (numpy scalars would not be)


def test_gymnasium_s_vector_wrappers_around_a_vecrl_env_reach_ppo():
    # the autoreset mode is read through the wrappers (metadata), which do not forward attributes
    env = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.vector.VectorWrapper(vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, array_type="numpy"))
    )
    # (gymnasium's NormalizeObservation takes no same-step env, which SB3 needs: SB3's VecNormalize does it)
    normalized = VecNormalize(SB3VecEnv(env))
    model = PPO("MlpPolicy", normalized, n_steps=64, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512 and len(model.ep_info_buffer) > 5
    assert normalized.obs_rms.count > 512
    env.close()


def test_gymnasium_s_numpy_wrappers_around_a_torch_env_name_the_way_to_fix_it():
    env = gym.wrappers.vector.RecordEpisodeStatistics(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))
    with pytest.raises(TypeError, match=r"vector_wrappers=\[RecordEpisodeStatistics\].*array_type=\"numpy\""):
        SB3VecEnv(env)
