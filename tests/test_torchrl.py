"""TorchRL's GymWrapper takes vecrl's vector envs: specs check out and rollouts run, gym and brax alike.

torchrl is a test-only dependency, installed by `nox -s torchrl` (which runs this file); elsewhere these
tests are skipped.
"""

from __future__ import annotations

import pytest
import torch

import vecrl
from vecrl.compat import AutoresetMode

torchrl_envs = pytest.importorskip("torchrl.envs")
from torchrl.envs.utils import check_env_specs  # noqa: E402 (after the importorskip)

pytestmark = pytest.mark.skipif(
    AutoresetMode is None, reason="TorchRL reads gymnasium >= 1.1's autoreset modes"
)

ENVS = [
    ("gym::CartPole-v1", {"max_episode_steps": 20}),
    ("gym::Hopper-v5", {"max_episode_steps": 10}),  # MuJoCo: float64 observations, Box actions
    ("brax::fast", {"episode_length": 10}),
]


@pytest.mark.parametrize("num_envs", [1, 3])
@pytest.mark.parametrize("mode", ["same_step", "disabled"])
@pytest.mark.parametrize(("name", "kwargs"), ENVS)
def test_gym_wrapper_accepts_the_env_its_specs_check_out_and_a_rollout_runs(name, kwargs, mode, num_envs):
    if name.startswith("brax::"):
        pytest.importorskip("brax")
    env = vecrl.make_vector_env(name, num_envs=num_envs, autoreset_mode=mode, **kwargs)
    wrapped = torchrl_envs.GymWrapper(env)
    assert wrapped.batch_size == torch.Size([num_envs])
    check_env_specs(wrapped)
    rollout = wrapped.rollout(45, break_when_any_done=False)
    assert rollout.batch_size == torch.Size([num_envs, 45])
    assert rollout["next", "reward"].shape == (num_envs, 45, 1)  # as TorchRL shapes gymnasium's own
    assert rollout["next", "done"].any(), "the rollout should cross episode ends"
    assert torch.isfinite(rollout["next", "reward"]).all()
    assert rollout["next", "observation"].dtype == wrapped.observation_spec["observation"].dtype
    wrapped.close()


def test_gym_wrapper_refuses_next_step_autoreset_with_its_own_error():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, autoreset_mode="next_step")
    with pytest.raises(RuntimeError, match="SAME_STEP or DISABLED"):
        torchrl_envs.GymWrapper(env)


def test_rewards_reach_torchrl_in_the_dtype_the_env_is_made_with():
    # (the reward spec follows the env's reward_space, which dtype= casts as it casts the rewards)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, dtype=torch.float32)
    wrapped = torchrl_envs.GymWrapper(env)
    assert wrapped.full_reward_spec["reward"].dtype == torch.float32
    rollout = wrapped.rollout(5, break_when_any_done=False)
    assert rollout["next", "reward"].dtype == torch.float32
    wrapped.close()
