import gymnasium
import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Discrete

from vecrl import BaseVectorEnv, TorchWrapper


class OldApiEnv:
    """An env of the old gym API: reset returns obs only, step returns 4 items."""

    observation_space = Box(-1.0, 1.0, (2,), np.float32)
    action_space = Discrete(3)

    @property
    def unwrapped(self):
        return self

    def reset(self):
        self.last_action = None
        return np.zeros(2, np.float32)

    def step(self, action):
        self.last_action = action
        return np.ones(2, np.float32), 1.0, True, {"old": True}


class RecordingVectorEnv(BaseVectorEnv):
    """Returns arrays made by `make_array`, records the actions it gets."""

    def __init__(self, make_array=np.asarray, action_space=None):
        super().__init__(
            2, Box(-1.0, 1.0, (3,), np.float32), action_space or Box(-0.5, 0.5, (2,), np.float32)
        )
        self.make_array = make_array
        self.actions = []

    def reset(self, *, seed=None, options=None):
        return self.make_array(np.zeros((2, 3), np.float32)), {}

    def step(self, action):
        self.actions.append(action)
        obs = self.make_array(np.ones((2, 3), np.float32))
        return obs, self.make_array(np.ones(2, np.float32)), np.array([0.0, 1.0]), np.array([0, 1]), {}


def test_single_env_results_come_back_as_tensors():
    env = TorchWrapper(gymnasium.make("Pendulum-v1"))
    obs, info = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and obs.shape == (3,) and isinstance(info, dict)
    obs, reward, terminated, truncated, _ = env.step(torch.tensor([0.5]))
    assert reward.dtype in (torch.float32, torch.float64)
    assert terminated.dtype == torch.bool and truncated.dtype == torch.bool
    assert env.array_type == "numpy"


def test_vector_env_exposes_single_spaces_and_num_envs():
    env = TorchWrapper(RecordingVectorEnv())
    assert env.num_envs == 2
    assert env.single_observation_space.shape == (3,)
    assert env.single_action_space == Box(-0.5, 0.5, (2,), np.float32)
    assert env.unwrapped is env.env


def test_gymnasiums_own_vector_env_works_too():
    venv = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
    env = TorchWrapper(venv)
    obs, _ = env.reset(seed=1)
    assert obs.shape == (3, 4)
    obs, reward, terminated, truncated, _ = env.step(torch.tensor([0, 1, 0]))
    assert reward.shape == (3,) and terminated.dtype == torch.bool
    env.close()


def test_step_before_reset_is_a_clear_error():
    env = TorchWrapper(gymnasium.make("CartPole-v1"))
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(torch.tensor(0))


def test_float_and_int_done_flags_become_bools():
    env = TorchWrapper(RecordingVectorEnv())
    env.reset()
    _, _, terminated, truncated, _ = env.step(torch.zeros(2, 2))
    assert terminated.tolist() == [False, True] and truncated.tolist() == [False, True]


def test_classic_api_returns_obs_only_and_a_combined_done():
    env = TorchWrapper(gymnasium.make("CartPole-v1"), force_classic_api=True)
    obs = env.reset(seed=0)
    assert isinstance(obs, torch.Tensor)
    for _ in range(200):
        obs, reward, done, info = env.step(torch.tensor(1))
        if done:
            break
    assert done.item() is True


def test_old_api_envs_are_accepted():
    env = TorchWrapper(OldApiEnv())
    obs = env.reset()
    assert obs.tolist() == [0.0, 0.0]
    obs, reward, done, info = env.step(torch.tensor(2))
    assert done.item() is True and info == {"old": True}


def test_discrete_actions_become_a_box_and_the_argmax_is_applied():
    inner = OldApiEnv()
    env = TorchWrapper(inner, discrete_to_continuous_act=True)
    assert env.action_space == Box(-np.inf, np.inf, (3,), np.float32)
    env.reset()
    env.step(torch.tensor([0.1, -2.0, 0.7]))
    assert int(inner.last_action) == 2


def test_discrete_to_continuous_on_a_vector_env():
    inner = RecordingVectorEnv(action_space=Discrete(4))
    env = TorchWrapper(inner, discrete_to_continuous_act=True)
    assert env.single_action_space.shape == (4,) and env.action_space.shape == (2, 4)
    env.reset()
    env.step(torch.tensor([[0.0, 0.0, 1.0, 0.0], [5.0, 0.0, 1.0, 0.0]]))
    assert inner.actions[-1].tolist() == [2, 0]


def test_actions_are_clipped_to_the_box_bounds():
    inner = RecordingVectorEnv()
    env = TorchWrapper(inner, clip_actions=True)
    env.reset()
    env.step(torch.tensor([[-3.0, 0.2], [0.7, 0.5]]))
    np.testing.assert_allclose(inner.actions[-1], [[-0.5, 0.2], [0.5, 0.5]])


def test_actions_reach_a_numpy_env_as_numpy():
    inner = RecordingVectorEnv()
    env = TorchWrapper(inner)
    env.reset()
    env.step(torch.zeros(2, 2))
    assert isinstance(inner.actions[-1], np.ndarray)


def test_actions_reach_a_jax_env_as_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    inner = RecordingVectorEnv(make_array=jnp.asarray)
    env = TorchWrapper(inner)
    obs, _ = env.reset()
    assert env.array_type == "jax" and isinstance(obs, torch.Tensor)
    env.step(torch.full((2, 2), 0.25))
    assert isinstance(inner.actions[-1], jnp.ndarray)
    np.testing.assert_allclose(np.asarray(inner.actions[-1]), 0.25)


def test_tuple_observations_come_back_as_tuples_of_tensors():
    env = TorchWrapper(gymnasium.make("Blackjack-v1"))  # Tuple(Discrete(32), Discrete(11), Discrete(2))
    observation, _ = env.reset(seed=0)
    assert isinstance(observation, tuple) and all(isinstance(part, torch.Tensor) for part in observation)
    observation, reward, terminated, truncated, _ = env.step(torch.tensor(0))
    assert len(observation) == 3 and reward.ndim == 0 and terminated.dtype == torch.bool


def test_spaces_gymnasium_cannot_batch_densely_are_refused_at_construction():
    class AsText(gymnasium.ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = gymnasium.spaces.Text(8)

        def observation(self, observation):
            return "text"

    with pytest.raises(
        TypeError, match="a Text space, which has a dynamic shape \\(its samples have no fixed shape\\)"
    ):
        TorchWrapper(AsText(gymnasium.make("CartPole-v1")))


def test_seed_without_an_env_seed_method_points_to_reset():
    env = TorchWrapper(gymnasium.make("CartPole-v1"))  # gymnasium envs dropped seed() in 0.26
    with pytest.raises(AttributeError, match="reset\\(seed="):
        env.seed(0)
