"""Per-sub-env parameters on gymnax (``vecrl.params``: the fields of its ``EnvParams``): the physics moves as
on gymnasium's own envs, params hold through autoresets and resets without params, setting them compiles
nothing, and evaluate's randomize= gives the same rows on the fused and stepped paths."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vecrl
from vecrl import testing
from vecrl.randomize import scale
from vecrl.testing import idle_rollout
from vecrl_evaluate import evaluate
from vecrl_jax.compiles import programs_compiled
from vecrl_policy import Policy


def test_pendulum_swings_faster_under_stronger_gravity_as_gymnasiums_does():
    env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=3, episode_length=4)
    assert env.unwrapped.default_params["g"].item() == 10.0
    plain = idle_rollout(env, 1)
    heavier = idle_rollout(env, 1, {"params": {"g": [10.0, 20.0, 5.0]}})
    assert torch.equal(heavier[0], plain[0])
    # theta_dot += 3 g / (2 l) sin(theta) dt with no torque (gymnasium's Pendulum too): the change scales with g
    change = (heavier[1, :, 2] - heavier[0, :, 2]) / (plain[1, :, 2] - plain[0, :, 2])
    torch.testing.assert_close(change, torch.tensor([1.0, 2.0, 0.5]), rtol=1e-4, atol=0)
    # they hold through resets without params and through autoresets (the episodes end after 4 steps)
    again = idle_rollout(env, 9)
    env.reset(seed=0, options={"params": {"g": [10.0, 20.0, 5.0]}})
    assert torch.equal(idle_rollout(env, 9), again)
    assert not torch.equal(again[6], idle_rollout(env, 9, {"params": {"m": [1.0] * 3}})[6])
    env.close()


def test_cartpoles_derived_masses_follow_the_pole():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2)
    assert "total_mass" not in env.unwrapped.default_params
    observation, _ = env.reset(seed=0, options={"params": {"masspole": [0.1, 1.0]}})
    pushed = env.step(torch.ones(2, dtype=torch.long))[0]
    # the same push moves the heavier system's cart less
    assert (pushed[1, 1] - observation[1, 1]) < (pushed[0, 1] - observation[0, 1])
    with pytest.raises(TypeError, match="total_mass is computed from"):
        vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2, total_mass=3.0)
    env.close()


def test_setting_params_compiles_nothing_new():
    env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=4, episode_length=5)
    idle_rollout(env, 6, {"params": {"g": [1.0, 2.0, 3.0, 4.0]}})
    env.reset(options={"reset_mask": [True, False, True, False], "params": {"g": [5.0] * 4}})
    with programs_compiled() as compiled:
        idle_rollout(env, 12, {"params": {"g": [9.0, 8.0, 7.0, 6.0], "m": [2.0] * 4}})
        env.reset(options={"reset_mask": [False, True, False, True], "params": {"l": [0.5] * 4}})
        idle_rollout(env, 3)
    assert compiled == []
    env.close()


def test_randomized_rows_are_the_same_on_the_fused_and_stepped_paths_and_compile_once():
    policy = Policy("Linear(3, 8) >> Tanh() >> Linear(8, 1)")
    rows = 0.5 * torch.randn(11, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    randomize = scale({"g": (0.5, 2.0), "m": (0.5, 2.0)})
    results = {}
    for num_envs, fused in [(4, True), (16, True), (3, False), (16, False)]:
        env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=num_envs, episode_length=30)
        results[num_envs, fused] = evaluate(
            policy, env, rows, num_episodes=3, seed=2, randomize=randomize, fused=fused
        )
        env.close()
    expected = results[4, True]
    for result in results.values():
        assert torch.equal(result.steps, expected.steps)
        torch.testing.assert_close(result.total_return, expected.total_return, rtol=1e-5, atol=1e-3)
    env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=4, episode_length=30)
    fixed = {"g": np.linspace(1.0, 20.0, 11)}
    with programs_compiled() as compiled:  # other params, the same program
        evaluate(policy, env, rows, num_episodes=3, seed=3, randomize=scale({"l": (0.5, 2.0)}), fused=True)
        evaluate(policy, env, rows, num_episodes=3, seed=3, randomize={**fixed, "m": np.ones(11)}, fused=True)
    assert compiled == []
    env.close()


def test_the_conformance_params_check_passes():
    testing.check_params(vecrl.make_vector_env, "gymnax::Pendulum-v1", num_envs=3)


def test_a_value_the_env_s_float32_cannot_hold_is_refused_not_made_inf():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2)
    with pytest.raises(
        ValueError, match=r"params\['masspole'\] holds values too large for the env's float32"
    ):
        env.reset(seed=0, options={"params": {"masspole": [0.1, 1e39]}})
    env.close()


def test_a_pole_mass_that_is_not_positive_is_refused():
    env = vecrl.make_vector_env("gymnax::CartPole-v1", num_envs=2)
    with pytest.raises(ValueError, match=r"params\['masspole'\] must be positive .*got -1 for sub-env 1"):
        env.reset(seed=0, options={"params": {"masspole": [0.1, -1.0]}})
    env.close()


def test_evaluate_with_every_row_at_its_default_params_equals_evaluate_without():
    # one rule for a row's later episodes, with or without params (tests/test_evaluate_randomize.py runs the
    # same on gym and brax)
    env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=3, episode_length=30)
    policy = Policy("Linear(3, 1)")
    rows = torch.randn(9, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    at_defaults = {key: np.stack([value] * 9) for key, value in env.unwrapped.default_params.items()}
    for fused in (True, False):
        plain = evaluate(policy, env, rows, num_episodes=3, seed=5, fused=fused)
        given = evaluate(policy, env, rows, num_episodes=3, seed=5, fused=fused, randomize=at_defaults)
        assert torch.equal(plain.total_return, given.total_return)
    env.close()
