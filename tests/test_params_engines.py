"""One ``params`` dict, every MuJoCo-based engine: the same ``{"gravity": ...}`` (MuJoCo's name, as every field)
steps gym's Hopper, brax's hopper and a MuJoCo Playground env, each as its unrandomized self with the
defaults and, with stronger gravity, falling faster."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from installed import installed

import vecrl
from vecrl.compat import GYMNASIUM_1
from vecrl.testing import idle_rollout

pytest.importorskip("mujoco")
GRAVITY = {"gravity": np.array([[0.0, 0.0, -9.81], [0.0, 0.0, -30.0]])}


def engines() -> list[tuple[str, dict]]:
    hopper = "gym::" + ("Hopper-v5" if GYMNASIUM_1 else "Hopper-v4")
    return installed(
        [(hopper, {}), ("brax::hopper", {}), ("playground::CartpoleBalance", {"episode_length": 50})]
    )


@pytest.mark.slow
@pytest.mark.parametrize(("name", "kwargs"), engines())
def test_one_gravity_dict_steps_every_engine_the_way_physics_says(name, kwargs):
    env = vecrl.make_vector_env(name, num_envs=2, **kwargs)
    defaults = env.unwrapped.default_params
    assert defaults["gravity"].tolist() == pytest.approx([0.0, 0.0, -9.81])
    plain = idle_rollout(env, 8)
    same = {name: np.stack([value, value]) for name, value in defaults.items()}
    torch.testing.assert_close(idle_rollout(env, 8, {"params": same}), plain, rtol=0, atol=0)
    heavier = idle_rollout(env, 8, {"params": GRAVITY})
    torch.testing.assert_close(heavier[:, 0], plain[:, 0], rtol=0, atol=0)  # row 0 got the defaults
    if name.startswith("playground::"):  # the pole (its angle's sine, observation 2) leaves upright faster
        assert heavier[-1, 1, 2].abs() > plain[-1, 1, 2].abs() * 1.05
    else:  # the torso's height (observation 0) drops faster
        assert heavier[-1, 1, 0] < plain[-1, 1, 0] - 0.01
    env.close()


@pytest.mark.parametrize(("name", "kwargs"), [e for e in engines() if not e[0].startswith("gym::")])
def test_a_value_the_env_s_float32_cannot_hold_is_refused_not_made_inf(name, kwargs):
    env = vecrl.make_vector_env(name, num_envs=2, **kwargs)
    mass = np.stack([env.unwrapped.default_params["body_mass"]] * 2).astype(np.float64)
    mass[1, -1] = 1e39  # finite as given, inf in float32
    with pytest.raises(
        ValueError, match=r"params\['body_mass'\] holds values too large for the env's float32"
    ):
        env.reset(seed=0, options={"params": {"body_mass": mass}})
    env.close()


@pytest.mark.parametrize(("name", "kwargs"), engines())
@pytest.mark.parametrize("mass", [0.0, -1.0])
def test_a_mass_that_is_not_positive_is_refused_by_reset_and_by_randomize(name, kwargs, mass):
    from vecrl.randomize import scale
    from vecrl_evaluate import evaluate
    from vecrl_policy import Policy

    env = vecrl.make_vector_env(name, num_envs=2, **kwargs)
    masses = np.stack([env.unwrapped.default_params["body_mass"]] * 2)
    masses[1, -1] = mass
    with pytest.raises(
        ValueError, match=rf"params\['body_mass'\] must be positive .*got {mass:g} for sub-env 1"
    ):
        env.reset(seed=0, options={"params": {"body_mass": masses}})
    policy = Policy.for_env("Linear(obs_length, act_length)", env)
    rows = torch.zeros(3, policy.parameter_length)
    with pytest.raises(ValueError, match=r"params\['body_mass'\] must be positive"):
        evaluate(policy, env, rows, randomize=scale({"body_mass": (mass, mass)}))
    env.close()
