"""envpool's info through the torch wrapper: tensors, as every other backend's, in the rows and in
``final_info``."""

import pytest
import torch

import vecrl


def test_info_values_are_tensors_as_on_every_other_backend():
    pytest.importorskip("mujoco")
    env = vecrl.make_vector_env("envpool::Hopper-v5", num_envs=2, max_episode_steps=2, num_threads=1)
    _, info = env.reset(seed=0)
    kinds = {key: type(value) for key, value in info.items()}
    for _ in range(2):
        *_, info = env.step(torch.zeros(2, 3))
    env.close()
    ended = info["final_info"]
    assert {"elapsed_step", "x_position"} <= set(ended) and {"elapsed_step", "x_position"} <= set(kinds)
    for values in (
        kinds.values(),
        [type(v) for v in info.values() if not isinstance(v, dict)],
        map(type, ended.values()),
    ):
        assert set(values) == {torch.Tensor}
