"""One presence rule for the final observations on every backend: ``FINAL_OBS_KEY in info`` exactly on the
steps where an episode ended (gymnasium's), whether the env is stepped on the host or jitted."""

from __future__ import annotations

import pytest
import torch
from installed import installed

import vecrl
from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY

CASES = [
    ("gym::CartPole-v1", {"max_episode_steps": 3}),
    ("envpool::CartPole-v1", {"max_episode_steps": 3, "num_threads": 1}),
    ("brax::inverted_pendulum", {"episode_length": 3}),
    ("playground::CartpoleBalance", {"episode_length": 3}),
]


@pytest.mark.parametrize(("name", "kwargs"), installed(CASES), ids=[name for name, _ in installed(CASES)])
@pytest.mark.parametrize("array_type", ["torch", "numpy"])
def test_the_final_observations_are_in_info_exactly_where_an_episode_ended(name, kwargs, array_type):
    env = vecrl.make_vector_env(name, num_envs=2, array_type=array_type, **kwargs)
    env.reset(seed=0)
    action = env.action_space.sample() * 0
    for step in range(1, 8):
        *_, terminated, truncated, info = env.step(action)
        ended = torch.as_tensor(terminated) | torch.as_tensor(truncated)
        assert (FINAL_OBS_KEY in info) == bool(ended.any()), (step, sorted(info))
        if FINAL_OBS_KEY in info:
            assert torch.equal(torch.as_tensor(info[FINAL_OBS_MASK_KEY]), ended)
    env.close()
