"""Per-sub-env parameters on brax (``vecrl.params``, MuJoCo's field names): each sub-env steps with its own
model inside the one jitted step, the physics moves the way it should, params hold through autoresets, and
setting them compiles nothing."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vecrl
from vecrl import testing
from vecrl.testing import idle_rollout
from vecrl_jax.compiles import programs_compiled


def test_the_pole_falls_faster_under_stronger_gravity_and_params_hold_through_autoresets():
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=3, episode_length=6)
    defaults = env.unwrapped.default_params
    assert set(defaults) == {
        "body_mass",
        "geom_friction",
        "dof_damping",
        "dof_armature",
        "actuator_gear",
        "gravity",
    }
    plain = idle_rollout(env, 5)
    same = {name: np.stack([value] * 3) for name, value in defaults.items()}
    assert torch.equal(idle_rollout(env, 5, {"params": same}), plain)
    gravity = np.array([[0.0, 0.0, -9.81], [0.0, 0.0, -40.0], [0.0, 0.0, 0.0]])
    heavier = idle_rollout(env, 5, {"params": {"gravity": gravity}})
    assert torch.equal(heavier[:, 0], plain[:, 0])  # the row given the defaults runs as before
    angle = heavier[-1, :, 1].abs()  # the pole's angle leaves upright faster under stronger gravity
    assert angle[1] > plain[-1, 1, 1].abs() * 1.5 and angle[2] < plain[-1, 2, 1].abs()
    # through the autoresets of 6-step episodes and a reset without params, the rows keep theirs
    longer = idle_rollout(env, 14)
    assert torch.equal(idle_rollout(env, 14, {"params": {"gravity": gravity}}), longer)
    env.close()


def test_setting_params_compiles_nothing_new():
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=2, episode_length=4)
    idle_rollout(env, 5, {"params": {"body_mass": [[0.0, 10.0, 5.0], [0.0, 9.0, 4.0]]}})
    env.reset(options={"reset_mask": [True, False], "params": {"dof_damping": [[0.5, 0.5], [1.0, 1.0]]}})
    with programs_compiled() as compiled:
        idle_rollout(env, 6, {"params": {"body_mass": [[0.0, 20.0, 2.0], [0.0, 1.0, 1.0]]}})
        env.reset(
            options={"reset_mask": [False, True], "params": {"actuator_gear": np.full((2, 1, 6), 50.0)}}
        )
        env.step(torch.ones(2, 1))
    assert compiled == []
    env.close()


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"body_inertia": np.ones((2, 3, 3))}, "no parameter 'body_inertia'"),
        ({"body_mass": np.ones((2, 4))}, r"must have shape \(2, 3\)"),
    ],
)
def test_what_brax_cannot_vary_or_a_wrong_shape_is_refused(params, words):
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=words):
        env.reset(options={"params": params})
    env.close()


def test_the_conformance_params_check_passes():
    testing.check_params(vecrl.make_vector_env, "brax::inverted_pendulum", num_envs=3)
