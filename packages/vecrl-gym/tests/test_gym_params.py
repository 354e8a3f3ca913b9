"""Per-sub-env parameters on the gym backend (``vecrl.params``): classic-control constants and MuJoCo model
fields, set by ``reset(options={"params": ...})``, in one process and in worker processes, with the physics
moving the way it should and every mistake refused before anything changes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.spaces import MultiDiscrete

import vecrl
from vecrl import testing
from vecrl.compat import GYMNASIUM_1

HOPPER = "Hopper-v5" if GYMNASIUM_1 else "Hopper-v4"


def rollout(env, steps: int, options=None, action=None) -> torch.Tensor:
    """The observations of ``steps`` steps from ``reset(seed=0)``, the action all zeros unless given."""
    if action is None:
        discrete = isinstance(env.action_space, MultiDiscrete)
        action = torch.zeros(env.action_space.shape, dtype=torch.long if discrete else torch.float32)
    observation, _ = env.reset(seed=0, options=options)
    seen = [observation]
    for _ in range(steps):
        seen.append(env.step(action)[0])
    return torch.stack(seen)


def test_pendulum_swings_faster_under_stronger_gravity_in_the_rows_given_it():
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=3)
    assert env.unwrapped.default_params["g"].item() == 10.0
    plain = rollout(env, 1)
    heavier = rollout(env, 1, {"params": {"g": [10.0, 20.0, 5.0]}})
    assert torch.equal(heavier[0], plain[0])  # the same starts: only the dynamics differ
    # theta_dot += 3 g / (2 l) sin(theta) dt with no torque: the change scales with g
    change = (heavier[1, :, 2] - heavier[0, :, 2]) / (plain[1, :, 2] - plain[0, :, 2])
    assert torch.allclose(change, torch.tensor([1.0, 2.0, 0.5], dtype=change.dtype), rtol=1e-5)
    # they hold through resets without params, and a reset with params resets the others to defaults
    assert torch.equal(rollout(env, 1), heavier)
    assert torch.equal(rollout(env, 1, {"params": {"m": [1.0, 1.0, 1.0]}}), plain)
    env.close()


def test_hopper_falls_faster_under_stronger_gravity_and_defaults_change_nothing():
    env = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=2)
    defaults = env.unwrapped.default_params
    assert defaults["body_mass"].shape == (5,) and defaults["gravity"].tolist() == [0.0, 0.0, -9.81]
    plain = rollout(env, 5)
    same = {name: np.stack([value, value]) for name, value in defaults.items()}
    assert torch.equal(rollout(env, 5, {"params": same}), plain)
    gravity = rollout(env, 5, {"params": {"gravity": [[0.0, 0.0, -30.0], [0.0, 0.0, 0.0]]}})
    # the torso's height (observation 0) drops faster under stronger gravity, and holds without any
    assert gravity[-1, 0, 0] < plain[-1, 0, 0] - 0.01 and gravity[-1, 1, 0] > plain[-1, 1, 0] + 0.001
    env.close()


def test_a_masked_reset_with_params_touches_only_its_rows_and_workers_give_the_rows_of_one_process():
    params = {"masspole": [0.1, 0.5, 1.0, 0.05], "length": [0.5, 0.5, 1.0, 0.25]}
    results = []
    for num_workers in (None, 2):
        env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_workers=num_workers)
        results.append(rollout(env, 6, {"params": params}, torch.ones(4, dtype=torch.long)))
        mask = torch.tensor([False, True, False, False])
        before = env.step(torch.ones(4, dtype=torch.long))[0]
        after, _ = env.reset(
            seed=1, options={"params": {"masspole": [9.0, 9.0, 9.0, 9.0]}, "reset_mask": mask}
        )
        assert torch.equal(after[[0, 2, 3]], before[[0, 2, 3]])
        env.close()
    assert torch.equal(results[0], results[1])
    assert not torch.equal(results[0][:, 0], results[0][:, 2])  # other params, other trajectories


@pytest.mark.parametrize(
    ("params", "error", "words"),
    [
        ({"masspol": [1.0, 1.0]}, ValueError, "Did you mean 'masspole'?"),
        ({"masspole": [1.0]}, ValueError, "must have shape (2,)"),
        ({"masspole": [1.0, float("nan")]}, ValueError, "not finite"),
        ({"masspole": ["a", "b"]}, TypeError, "must hold numbers"),
        ([1.0, 2.0], TypeError, "must map parameter names"),
    ],
)
def test_bad_params_are_refused_before_anything_changes(params, error, words):
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    expected = rollout(env, 3)
    env.reset(seed=0)
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        env.reset(seed=5, options={"params": params})
    for step in range(3):
        assert torch.equal(env.step(torch.zeros(2, dtype=torch.long))[0], expected[step + 1])
    env.close()


def test_an_env_with_no_parameters_refuses_them_and_the_conformance_check_passes():
    env = vecrl.make_vector_env("gym::FrozenLake-v1", num_envs=2)
    assert env.unwrapped.default_params == {}
    with pytest.raises(NotImplementedError, match="lets no parameter vary"):
        env.reset(options={"params": {"gravity": [1.0, 1.0]}})
    env.close()
    for name in ("CartPole-v1", HOPPER, "FrozenLake-v1"):
        testing.run_conformance("gym", [{"env": name, "checks": ["params"]}])
