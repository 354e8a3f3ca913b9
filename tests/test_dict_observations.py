"""Dict observation spaces (of Box leaves, possibly nested) through BaseVectorEnv, SyncVectorEnv and
TorchWrapper, on gymnasium-robotics' PointMaze (a native goal env); clear errors for other spaces."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Dict, Discrete, Graph, MultiDiscrete, Sequence, Text, Tuple

import vecrl
from vecrl.compat import GYMNASIUM_1, AutoresetMode
from vecrl.final_observations import observations_before_restart
from vecrl.testing import check_backend
from vecrl_gym import SyncVectorEnv, make_gym_env

MAZE = (
    "gymnasium_robotics:PointMaze_UMaze-v3"  # gymnasium.make imports gymnasium_robotics, which registers it
)
needs_robotics = pytest.mark.skipif(
    not GYMNASIUM_1 or __import__("importlib").util.find_spec("gymnasium_robotics") is None,
    reason="gymnasium-robotics (PointMaze) is installed with gymnasium 1.x only",
)
KEYS = {"achieved_goal": 2, "desired_goal": 2, "observation": 4}


class Idle(vecrl.BaseVectorEnv):
    pass


def mazes(num_envs: int = 3, **kwargs) -> SyncVectorEnv:
    make_kwargs = {"max_episode_steps": 4, "reward_type": "dense", **kwargs.pop("make_kwargs", {})}
    return SyncVectorEnv([lambda: gym.make(MAZE, **make_kwargs)] * num_envs, **kwargs)


def test_nested_dict_observation_spaces_batch_leaf_by_leaf():
    space = Dict({"pos": Box(-1.0, 1.0, (2,)), "more": Dict({"vel": Box(-1.0, 1.0, (3,))})})
    env = Idle(4, space, Discrete(2))
    assert env.observation_space["pos"].shape == (4, 2)
    assert env.observation_space["more"]["vel"].shape == (4, 3)


@pytest.mark.parametrize(
    ("space", "named"),
    [
        (Text(5), "observation space is Text"),
        (Graph(Box(0.0, 1.0, (2,)), None), "observation space is Graph"),
        (Dict({"ok": Box(0.0, 1.0, (2,)), "bad": Sequence(Discrete(3))}), r"entry \['bad'\] is Sequence\("),
        (Dict({"inner": Tuple([Discrete(2), Text(3)])}), r"entry \['inner'\]\[1\] is Text"),
    ],
)
def test_spaces_gymnasium_cannot_batch_densely_are_a_type_error_naming_the_space(space, named):
    with pytest.raises(TypeError, match=named):
        Idle(2, space, Discrete(2))


def test_dict_and_tuple_action_spaces_batch_like_observations():
    env = Idle(2, Box(0.0, 1.0, (2,)), Dict({"a": Box(0.0, 1.0, (2,)), "b": Tuple([Discrete(3)])}))
    assert env.action_space["a"].shape == (2, 2) and env.action_space["b"][0] == MultiDiscrete([3, 3])


@needs_robotics
def test_point_maze_observations_are_batched_like_gymnasiums_own_sync_vector_env():
    ours = mazes()
    same_step = {"autoreset_mode": AutoresetMode.SAME_STEP} if AutoresetMode is not None else {}
    theirs = gym.vector.SyncVectorEnv(
        [lambda: gym.make(MAZE, max_episode_steps=4, reward_type="dense")] * 3, **same_step
    )
    assert ours.observation_space == theirs.observation_space
    ours.action_space.seed(0)
    results = [(ours.reset(seed=[1, 2, 3]), theirs.reset(seed=[1, 2, 3]))]
    for _ in range(6):  # crosses an episode end (4 steps): final observations are dicts in info
        actions = ours.action_space.sample()
        results.append((ours.step(actions), theirs.step(actions)))
    for ours_result, theirs_result in results:
        for key, size in KEYS.items():
            assert ours_result[0][key].shape == (3, size)
            np.testing.assert_array_equal(ours_result[0][key], theirs_result[0][key])
        for a, b in zip(ours_result[1:-1], theirs_result[1:-1], strict=True):  # reward and flags of steps
            np.testing.assert_array_equal(a, b)
    final = results[4][0][-1]["final_obs"]  # vecrl's layout: a dict of batches, like the observations
    theirs_final = observations_before_restart(results[4][1][0], results[4][1][-1])
    for key in KEYS:
        np.testing.assert_array_equal(final[key], theirs_final[key])


@needs_robotics
def test_point_maze_through_make_vector_env_gives_dicts_of_tensors_and_follows_the_backend_contract():
    check_backend(make_gym_env, MAZE, num_envs=2, max_episode_steps=3)
    env = vecrl.make_vector_env(f"gym::{MAZE}", num_envs=3, gym_kwargs={"max_episode_steps": 5})
    obs, _ = env.reset(seed=0)
    assert set(obs) == set(KEYS) and all(isinstance(t, torch.Tensor) for t in obs.values())
    assert env.array_type == "torch" and obs["observation"].shape == (3, 4)
    obs, reward, *_ = env.step(torch.zeros(3, 2))
    assert obs["desired_goal"].dtype == torch.float64 and reward.shape == (3,)


@needs_robotics
def test_the_plain_env_id_works_once_gymnasium_robotics_is_imported():
    import gymnasium_robotics

    gym.register_envs(gymnasium_robotics)  # a no-op that documents why the import is there
    env = vecrl.make_vector_env("gym::PointMaze_UMaze-v3", num_envs=2)
    assert env.reset(seed=0)[0]["achieved_goal"].shape == (2, 2)


@needs_robotics
def test_the_device_path_moves_every_leaf_and_shares_memory_on_the_cpu():
    on_cpu = mazes(2, device="cpu")
    obs, _ = on_cpu.reset(seed=0)
    assert all(isinstance(t, torch.Tensor) for t in obs.values())
    on_meta = mazes(2, device="meta")
    obs, _ = on_meta.reset(seed=0)
    obs, reward, *_ = on_meta.step(torch.zeros(2, 2))
    assert {t.device.type for t in obs.values()} == {"meta"} and reward.device.type == "meta"


@needs_robotics
def test_spent_sub_envs_report_nan_in_every_leaf():
    env = mazes(2, num_episodes=1, make_kwargs={"max_episode_steps": 2})
    env.reset(seed=0)
    for _ in range(2):
        obs, *_ = env.step(np.zeros((2, 2)))
    assert not np.isnan(obs["observation"]).any()  # the last step reports the final observation
    obs, reward, terminated, truncated, _ = env.step(np.zeros((2, 2)))
    assert all(np.isnan(leaf).all() for leaf in obs.values()) and np.isnan(reward).all()
    assert terminated.all() and truncated.all()


@needs_robotics
def test_a_masked_reset_keeps_the_other_rows_of_every_leaf():
    env = mazes(3)
    first, _ = env.reset(seed=[1, 2, 3])
    obs, _ = env.reset(seed=[4, 5, 6], options={"reset_mask": np.array([False, True, False])})
    for key in KEYS:
        np.testing.assert_array_equal(obs[key][[0, 2]], first[key][[0, 2]])
    np.testing.assert_array_equal(obs["desired_goal"][1], gym.make(MAZE).reset(seed=5)[0]["desired_goal"])


@needs_robotics
def test_the_envs_own_compute_reward_agrees_with_the_reward_the_wrapper_reports():
    env = vecrl.make_vector_env(
        f"gym::{MAZE}", num_envs=3, gym_kwargs={"reward_type": "dense", "autoreset_mode": "next_step"}
    )
    maze = env.unwrapped.envs[0].unwrapped
    env.reset(seed=3)
    generator = torch.Generator().manual_seed(0)
    for _ in range(5):
        obs, reward, *_ = env.step(torch.rand(3, 2, generator=generator) * 2 - 1)
        expected = maze.compute_reward(obs["achieved_goal"].numpy(), obs["desired_goal"].numpy(), None)
        np.testing.assert_allclose(reward.numpy(), expected, rtol=1e-12)


@needs_robotics
def test_torch_wrapper_turns_gymnasiums_own_dict_observations_into_dicts_of_tensors():
    env = vecrl.TorchWrapper(gym.vector.SyncVectorEnv([lambda: gym.make(MAZE)] * 2))
    obs, _ = env.reset(seed=0)
    assert (
        obs["observation"].shape == (2, 4)
        and env.single_observation_space == gym.make(MAZE).observation_space
    )
    single = vecrl.TorchWrapper(gym.make(MAZE))
    obs, _ = single.reset(seed=0)
    obs, *_ = single.step(torch.zeros(2))
    assert obs["achieved_goal"].shape == (2,) and isinstance(obs["achieved_goal"], torch.Tensor)


class TorchDictEnv(vecrl.BaseVectorEnv):
    """A vector env computing in torch, with nested Dict observations; records the actions it gets."""

    def __init__(self):
        space = Dict({"pos": Box(-1.0, 1.0, (2,)), "more": Dict({"vel": Box(-1.0, 1.0, (1,))})})
        super().__init__(2, space, Box(-1.0, 1.0, (1,)))
        self.actions = []

    def reset(self, *, seed=None, options=None):
        return {"pos": torch.zeros(2, 2), "more": {"vel": torch.zeros(2, 1)}}, {}

    def step(self, action):
        self.actions.append(action)
        obs = {"pos": torch.ones(2, 2), "more": {"vel": action}}
        return obs, torch.ones(2), torch.zeros(2, dtype=torch.bool), torch.zeros(2, dtype=torch.bool), {}


def test_torch_wrapper_learns_the_array_type_from_the_first_leaf_of_nested_dict_observations():
    inner = TorchDictEnv()
    env = vecrl.TorchWrapper(inner)
    obs, _ = env.reset()
    assert env.array_type == "torch" and obs["more"]["vel"].shape == (2, 1)
    obs, *_ = env.step(np.full((2, 1), 0.5, dtype=np.float32))
    assert isinstance(inner.actions[0], torch.Tensor)
    assert torch.equal(obs["more"]["vel"], torch.full((2, 1), 0.5))
