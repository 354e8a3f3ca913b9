"""Dict observations: brax's ``fast`` env with ``obs_mode`` set returns a dict of arrays; the backend
declares a gymnasium Dict space of Box leaves and hands out dicts of torch tensors that view the jax
results without a copy, in every autoreset mode, with masked resets and episode budgets."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Dict

from vecrl.compat import FINAL_OBS_KEY
from vecrl_brax import VectorEnvFromBrax, make_brax_env


def fast_env_has_dict_observations() -> bool:
    from brax.envs.fast import Fast

    return "obs_mode" in inspect.signature(Fast.__init__).parameters


pytestmark = pytest.mark.skipif(
    not fast_env_has_dict_observations(), reason="this brax's fast env has no obs_mode (no dict observations)"
)

NUM_ENVS = 2
EPISODE_LENGTH = 3
PUSH = torch.ones(NUM_ENVS, 1)
# brax's fast env: "state" is (position, velocity), "privileged_state" 4 zeros, two 4x4x3 "pixel" views
DICT_KWARGS = {"episode_length": EPISODE_LENGTH, "obs_mode": "dict_pixels_state", "asymmetric_obs": True}
KEYS = ["pixels/view_0", "pixels/view_1", "privileged_state", "state"]


@pytest.fixture(scope="module")
def env():
    return make_brax_env("fast", num_envs=NUM_ENVS, **DICT_KWARGS)


def test_the_observation_space_is_a_dict_of_unbounded_boxes_batched_per_leaf(env):
    single = env.unwrapped.single_observation_space
    assert isinstance(single, Dict) and sorted(single) == KEYS
    assert single["state"] == Box(-np.inf, np.inf, (2,), np.float32)
    assert single["pixels/view_0"].shape == (4, 4, 3)
    assert env.observation_space["pixels/view_1"].shape == (NUM_ENVS, 4, 4, 3)
    assert env.observation_space["privileged_state"].shape == (NUM_ENVS, 4)


def test_reset_and_step_give_dicts_of_torch_tensors_shaped_as_the_space(env):
    obs, _ = env.reset(seed=0)
    for result in (obs, env.step(PUSH)[0]):
        assert sorted(result) == KEYS
        for key, tensor in result.items():
            assert isinstance(tensor, torch.Tensor) and tensor.dtype == torch.float32
            assert tuple(tensor.shape) == env.observation_space[key].shape


def test_step_observations_are_views_of_one_jax_buffer_not_copies(env):
    env.reset(seed=0)
    obs, reward, *_ = env.step(PUSH)
    # every leaf, and the reward after them, lies in the buffer the jitted step returned
    start = obs["pixels/view_0"].data_ptr()
    end = start + 4 * NUM_ENVS * (2 * 48 + 4 + 2)
    for tensor in obs.values():
        assert start <= tensor.data_ptr() < end
    assert reward.data_ptr() == end


def test_same_step_autoreset_puts_the_last_dict_observation_in_info(env):
    env.reset(seed=0)
    for _ in range(EPISODE_LENGTH):
        obs, _, _, truncated, info = env.step(PUSH)
    assert truncated.all()
    assert (obs["state"] == 0).all()
    np.testing.assert_allclose(info[FINAL_OBS_KEY]["state"].numpy(), [[0.0024, 0.06]] * 2, rtol=1e-5)
    assert info[f"_{FINAL_OBS_KEY}"].all()


def test_a_masked_reset_restarts_only_the_masked_rows_of_every_leaf(env):
    env.reset(seed=0)
    stepped, *_ = env.step(PUSH)
    obs, _ = env.reset(options={"reset_mask": [False, True]})
    assert torch.equal(obs["state"][0], stepped["state"][0]) and (obs["state"][1] == 0).all()


def test_next_step_mode_and_episode_budgets_work_on_dict_observations():
    env = VectorEnvFromBrax(
        "fast",
        num_envs=NUM_ENVS,
        num_episodes=1,
        autoreset_mode="next_step",
        obs_mode="dict_state",
        episode_length=EPISODE_LENGTH,
    )
    env.reset(seed=0)
    results = [env.step(np.ones((NUM_ENVS, 1), np.float32)) for _ in range(EPISODE_LENGTH + 1)]
    assert np.asarray(results[EPISODE_LENGTH - 1][3]).all()
    obs, reward, terminated, truncated, _ = results[-1]
    assert sorted(obs) == ["state"] and np.isnan(np.asarray(obs["state"])).all()
    assert np.isnan(np.asarray(reward)).all() and np.asarray(terminated & truncated).all()
