"""Every user error is raised early and says what was received and what was expected."""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest
import torch
from gym_helpers import MUJOCO_ENV_ID
from gymnasium.spaces import Box, Discrete, Text

import vecrl
from vecrl_gym import SyncVectorEnv


class WithActionSpace(gym.ActionWrapper):
    """A real env whose declared action space is replaced (to build mismatching sub-envs)."""

    def __init__(self, env: gym.Env, action_space: gym.Space) -> None:
        super().__init__(env)
        self.action_space = action_space

    def action(self, action):
        return action


class WithObservationSpace(gym.ObservationWrapper):
    """A real env whose declared observation space is replaced."""

    def __init__(self, env: gym.Env, observation_space: gym.Space) -> None:
        super().__init__(env)
        self.observation_space = observation_space

    def observation(self, observation):
        return observation


class RecordsClose(gym.Wrapper):
    closed_envs: ClassVar[list[gym.Env]] = []

    def close(self):
        RecordsClose.closed_envs.append(self)
        super().close()


def cartpoles(num_envs: int) -> SyncVectorEnv:
    env = SyncVectorEnv([lambda: gym.make("CartPole-v1")] * num_envs)
    env.reset(seed=0)
    return env


def pendulums(num_envs: int) -> SyncVectorEnv:
    env = SyncVectorEnv([lambda: gym.make("Pendulum-v1")] * num_envs)
    env.reset(seed=0)
    return env


def test_no_sub_env_is_an_error():
    with pytest.raises(ValueError, match="at least one sub-environment"):
        SyncVectorEnv([])


def test_an_env_instead_of_an_env_maker_is_an_error_naming_its_index():
    with pytest.raises(TypeError, match=r"env_makers\[1\] is .* not callable"):
        SyncVectorEnv([lambda: gym.make("CartPole-v1"), gym.make("CartPole-v1")])


@pytest.mark.parametrize("num_episodes", [0, -1, 1.5, True, "2"])
def test_num_episodes_must_be_a_positive_int(num_episodes):
    with pytest.raises(ValueError, match=f"num_episodes must be a positive int.*{num_episodes!r}"):
        SyncVectorEnv([lambda: gym.make("CartPole-v1")], num_episodes=num_episodes)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (
            lambda: gym.make("Acrobot-v1"),
            r"Sub-env 1 has the observation space Box\(.*\(6,\), float32\), but sub-env 0",
        ),
        (lambda: gym.make("FrozenLake-v1"), "Sub-env 1 has the observation space Discrete"),
        (
            lambda: gym.make(MUJOCO_ENV_ID),
            "Sub-env 1 has the observation space Box.*float64.* sub-env 0 has Box",
        ),
        (
            lambda: gym.make("MountainCarContinuous-v0"),
            "Sub-env 1 has the action space Box.* sub-env 0 has Discrete",
        ),
        (
            lambda: WithActionSpace(gym.make("MountainCar-v0"), Discrete(4)),
            r"Sub-env 1 has the action space Discrete\(4\), but sub-env 0 has Discrete\(3\)",
        ),
    ],
)
def test_sub_envs_must_agree_on_their_spaces_and_the_error_names_the_sub_env(second, message):
    # a RuntimeError, as gymnasium's own SyncVectorEnv raises for differing sub-env spaces
    first = "MountainCar-v0" if "action space" in message else "CartPole-v1"
    with pytest.raises(RuntimeError, match=message):
        SyncVectorEnv([lambda: gym.make(first), second])


def test_box_action_shapes_must_agree():
    with pytest.raises(
        RuntimeError, match=r"Sub-env 2 has the action space Box\(.*\(2,\), float32\), but sub-env 0"
    ):
        SyncVectorEnv(
            [lambda: gym.make("Pendulum-v1")] * 2
            + [lambda: WithActionSpace(gym.make("Pendulum-v1"), Box(-2.0, 2.0, (2,)))]
        )


def test_spaces_gymnasium_cannot_batch_densely_are_a_type_error_naming_the_space():
    with pytest.raises(TypeError, match=r"is Text\(.*a Text space, which has a dynamic shape"):
        SyncVectorEnv([lambda: WithObservationSpace(gym.make("CartPole-v1"), Text(5))])


def test_a_failed_construction_closes_the_sub_envs_already_made():
    RecordsClose.closed_envs.clear()
    with pytest.raises(RuntimeError, match="Sub-env 1"):
        SyncVectorEnv([lambda: RecordsClose(gym.make("CartPole-v1")), lambda: gym.make("Acrobot-v1")])
    assert len(RecordsClose.closed_envs) == 1


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.array([0, 1]), r"expected actions of shape \(3,\).*leading \(batch\) dimension is 2"),
        (torch.tensor([0, 1, 1, 0]), r"leading \(batch\) dimension is 4"),
        (np.zeros((3, 1), dtype=np.int64), r"one action of shape \(1,\) per sub-env"),
        (np.array([0.0, 1.0, 1.0]), "expected integer actions.*float64.*discrete_to_continuous_act"),
        (torch.tensor([0.0, 1.0, 1.0]), "expected integer actions.*float32"),
    ],
)
def test_discrete_actions_of_the_wrong_shape_or_dtype_are_a_value_error(actions, message):
    with pytest.raises(ValueError, match=message):
        cartpoles(3).step(actions)


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        (np.zeros(2), r"expected actions of shape \(2, 1\).*one action of shape \(\) per sub-env"),
        (torch.zeros(2, 2), r"expected actions of shape \(2, 1\).*one action of shape \(2,\) per sub-env"),
    ],
)
def test_box_actions_of_the_wrong_shape_are_a_value_error(actions, message):
    with pytest.raises(ValueError, match=message):
        pendulums(2).step(actions)


@pytest.mark.parametrize(
    ("env_id", "action"), [("CartPole-v1", np.int64(1)), ("Pendulum-v1", np.float32(0.5)), ("CartPole-v1", 1)]
)
def test_a_scalar_action_is_a_type_error_as_in_gymnasium(env_id, action):
    env = SyncVectorEnv([lambda: gym.make(env_id)] * 2)
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"expected actions of shape .*received a 0-d \(scalar\) action"):
        env.step(action)
    theirs = gym.vector.SyncVectorEnv([lambda: gym.make(env_id)] * 2)
    theirs.reset(seed=0)
    with pytest.raises(TypeError):
        theirs.step(action)


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        (-1, r"seed is -1, but seeds must be ints in \[0, 2\*\*32\)"),
        (2**32, r"seed is 4294967296"),
        ([0, -5], r"seed\[1\] is -5, but seeds must be ints"),
        ([1, 2, 3], "one seed per sub-env \\(2\\), but 3 were given"),
        ([1, "x"], r"seed\[1\] is 'x'; each per-sub-env seed must be None or an int"),
        (1.5, "seed must be None, an int .* but got 1.5"),
        ("7", "but got '7'"),
    ],
)
def test_bad_seeds_are_a_value_error_in_reset_and_in_seed(seed, message):
    env = cartpoles(2)
    with pytest.raises(ValueError, match=message):
        env.reset(seed=seed)
    with pytest.raises(ValueError, match=message):
        env.seed(seed)


def test_set_attr_needs_one_value_per_sub_env():
    with pytest.raises(ValueError, match="received 3 values for 2 sub-envs"):
        cartpoles(2).set_attr("gravity", [1.0, 2.0, 3.0])


def test_box_bounds_must_agree_too():
    """(they were accepted: the batched space, made from sub-env 0's, then described sub-env 1 wrongly)"""
    with pytest.raises(
        RuntimeError, match=r"Sub-env 1 has the action space .* \(the same shape and dtype, other bounds\)"
    ):
        SyncVectorEnv(
            [
                lambda: gym.make("Pendulum-v1"),
                lambda: WithActionSpace(gym.make("Pendulum-v1"), Box(-1.0, 1.0, (1,))),
            ]
        )


def test_drawing_classic_control_without_a_display_prints_nothing_from_sdl():
    import os
    import subprocess
    import sys

    script = (
        "import vecrl\n"
        "env = vecrl.make_vector_env('gym::CartPole-v1', num_envs=1, render_mode='rgb_array')\n"
        "env.reset(seed=0)\n"
        "print(env.unwrapped.render_frames([env.unwrapped.render_snapshot(0)])[0].shape)\n"
    )
    bare = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER", "XDG_RUNTIME_DIR")
    }
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=bare, timeout=120
    )
    assert result.returncode == 0 and result.stdout.strip() == "(400, 600, 3)", result.stderr
    assert "XDG_RUNTIME_DIR" not in result.stderr, result.stderr


@pytest.mark.parametrize("index", [5, -1, 1.0, True])
def test_a_snapshot_of_a_sub_env_that_is_not_there_names_those_that_are(index):
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(IndexError, match=r"this env has 2 sub-envs, 0 to 1"):
        env.unwrapped.render_snapshot(index)
    env.close()
