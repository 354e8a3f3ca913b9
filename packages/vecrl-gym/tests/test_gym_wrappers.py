"""gymnasium's own vector wrappers work on top of SyncVectorEnv (gymnasium.wrappers.vector on 1.x,
the vector-aware gym.Wrapper classes on 0.29)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gym_helpers import VECTOR_WRAPPERS, hand_rollout, random_actions, sub_seeds

from vecrl.compat import GYMNASIUM_1, AutoresetMode
from vecrl_gym import SyncVectorEnv


def pendulums(num_envs: int = 3, max_steps: int = 7) -> SyncVectorEnv:
    return SyncVectorEnv([lambda: gym.make("Pendulum-v1", max_episode_steps=max_steps)] * num_envs)


def episode_returns_by_hand(steps: list[tuple[np.ndarray, ...]]) -> list[list[float]]:
    """Per sub-env, the return of every finished episode of a hand rollout."""
    num_envs = len(steps[0][1])
    running, finished = np.zeros(num_envs), [[] for _ in range(num_envs)]
    for _, reward, terminated, truncated in steps:
        running += reward
        for i in np.flatnonzero(terminated | truncated):
            finished[i].append(running[i])
            running[i] = 0.0
    return finished


@pytest.mark.skipif(
    GYMNASIUM_1 and AutoresetMode is None,
    reason="gymnasium 1.0's vector wrappers assume next-step autoreset (autoreset modes came in 1.1)",
)
def test_record_episode_statistics_over_transform_reward_sees_the_right_episode_returns():
    env = VECTOR_WRAPPERS.RecordEpisodeStatistics(
        VECTOR_WRAPPERS.TransformReward(pendulums(), lambda r: 2 * r)
    )
    actions = random_actions(env, 30)
    _, steps, _ = hand_rollout("Pendulum-v1", sub_seeds(5, 3), actions, max_episode_steps=7)
    expected = episode_returns_by_hand(steps)

    env.reset(seed=5)
    recorded: list[list[float]] = [[] for _ in range(3)]
    lengths: list[int] = []
    for a in actions:
        *_, info = env.step(a)
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                recorded[i].append(float(info["episode"]["r"][i]))
                lengths.append(int(info["episode"]["l"][i]))
    assert [len(r) for r in recorded] == [4, 4, 4]
    assert set(lengths) == {7}
    for got, want in zip(recorded, expected, strict=True):
        np.testing.assert_allclose(got, 2 * np.array(want), rtol=1e-5)


@pytest.mark.filterwarnings("ignore:.*precision lowered by casting to float32")  # inside RescaleAction
def test_rescale_action_maps_the_unit_box_onto_the_action_bounds():
    wrapped = VECTOR_WRAPPERS.RescaleAction(pendulums(2), min_action=-1.0, max_action=1.0)
    plain = pendulums(2)
    np.testing.assert_array_equal(wrapped.reset(seed=1)[0], plain.reset(seed=1)[0])
    for a in random_actions(wrapped, 10):
        np.testing.assert_allclose(wrapped.step(a)[0], plain.step(2.0 * a)[0], rtol=1e-6)


def test_clip_action_clips_to_the_action_bounds():
    wrapped = VECTOR_WRAPPERS.ClipAction(pendulums(2))
    plain = pendulums(2)
    wrapped.reset(seed=2)
    plain.reset(seed=2)
    too_big = np.array([[5.0], [-7.0]], dtype=np.float32)
    np.testing.assert_array_equal(wrapped.step(too_big)[0], plain.step(np.array([[2.0], [-2.0]]))[0])


@pytest.mark.skipif(
    AutoresetMode is None, reason="gymnasium >= 1.1: vector wrappers that read autoreset_mode"
)
def test_gymnasium_1_wrappers_see_same_step_autoreset_without_warning(recwarn):
    env = gym.wrappers.vector.RecordEpisodeStatistics(pendulums(2))
    assert not [w for w in recwarn if "autoreset_mode" in str(w.message)]
    assert env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
