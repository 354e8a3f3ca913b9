"""The playground backend on real MJX envs (CPU, impl="jax"): the backend contract, every autoreset mode,
the time limit as truncation, keywords and config overrides, mistakes, and evaluate (fused and stepped).

Each configuration compiles once per process (15 to 30 s on a 2-core CPU) and is shared by every env of it,
so the tests reuse a few configurations of CartpoleBalance, the cheapest env.
"""

import os
import subprocess
import sys

import jax
import numpy as np
import pytest
import torch

import vecrl
from vecrl_playground import PlaygroundVectorEnv, make_playground_env

ENV = "CartpoleBalance"
SHORT = {"episode_length": 4}  # episodes end within a few steps
# (vecrl's conformance spec runs on this backend from tests/test_backend_conformance.py, on the case its
# pyproject declares)


def test_the_time_limit_is_a_truncation_and_each_episode_starts_fresh():
    env = vecrl.make_vector_env(f"playground::{ENV}", num_envs=3, **SHORT)
    assert vecrl.backend_distribution("playground") == ("vecrl-playground", "0.1.0")
    first, _ = env.reset(seed=0)
    for _ in range(4):
        obs, reward, terminated, truncated, info = env.step(torch.zeros(3, 1))
    assert truncated.all() and not terminated.any()
    final = info[vecrl.compat.FINAL_OBS_KEY]
    assert not torch.equal(obs, final)  # restarted in the same step
    assert not torch.equal(obs, first)  # from a new random state, not the first one again
    # a seed per sub-env, as on vecrl-brax (whose jitted machinery this is): each row its own key
    by_row, _ = env.reset(seed=[4, 5, 6])
    swapped, _ = env.reset(seed=[6, 5, 4])
    assert torch.equal(swapped, by_row.flip(0)) and not torch.equal(by_row[0], by_row[1])
    env.close()


def test_a_seed_rule_makes_an_int_seed_stand_for_the_seeds_it_gives_the_sub_envs():
    env = vecrl.make_vector_env(f"playground::{ENV}", num_envs=3, seed_rule="gymnasium", **SHORT)
    by_rule, _ = env.reset(seed=7)
    by_list, _ = env.reset(seed=[7, 8, 9])
    assert torch.equal(by_rule, by_list) and not torch.equal(by_rule[0], by_rule[1])
    env.close()


def test_mjx_runs_its_jax_implementation_on_cpu_and_overrides_reach_the_config():
    env = PlaygroundVectorEnv(ENV, num_envs=2, ctrl_dt=0.02, sim_dt=0.02, **SHORT)
    config = env.jax_env.env.unwrapped._config
    assert jax.default_backend() == "cpu" and config.impl == "jax"
    assert config.ctrl_dt == 0.02 and env.jax_env.env.episode_length == 4
    assert env.single_action_space.low.tolist() == [-1.0] and env.single_action_space.high.tolist() == [1.0]
    env.close()


@pytest.mark.parametrize(
    ("name", "kwargs", "error", "words"),
    [
        ("CartpoleBalanse", {}, ValueError, "Did you mean 'CartpoleBalance'"),
        (ENV, {"ctrl_td": 0.02}, TypeError, "no keyword argument 'ctrl_td'. Did you mean 'ctrl_dt'"),
        (ENV, {"config_overrides": {"impl": "jax"}}, vecrl.UnknownKeywordError, "as keyword arguments"),
        (ENV, {"batch_size": 4}, vecrl.UnknownKeywordError, "num_envs="),
        (ENV, {"num_envs": None, "num_episodes": 1}, ValueError, "num_episodes=1 with num_envs=None"),
        # values the config or brax's episode wrapper would take silently (the simulation never advanced)
        (ENV, {"action_repeat": 0}, ValueError, "action_repeat must be a positive int"),
        (ENV, {"ctrl_dt": -0.01}, ValueError, "ctrl_dt must be a positive time step"),
        (ENV, {"episode_length": 0}, ValueError, "episode_length must be a positive int"),
        (ENV, {"episode_length": -5}, ValueError, "episode_length must be a positive int"),
        (ENV, {"episode_length": 2.5}, ValueError, "episode_length must be a positive int"),
        (ENV, {"episode_length": "x"}, ValueError, "episode_length must be a positive int"),
        (ENV, {"ctrl_dt": [0.01]}, TypeError, "ctrl_dt must be a finite number"),
        (
            ENV,
            {"impl": "bogus"},
            ValueError,
            r"impl must be one of MJX's implementations \['cpp', 'jax', 'warp'\]",
        ),
        (ENV, {"vision": "yes"}, TypeError, "vision must be True or False"),
        (ENV, {"njmax": 2.0}, TypeError, "njmax must be an int"),
        (
            ENV,
            {"device": "cpu"},
            vecrl.UnknownKeywordError,
            "device='cpu', .* does not take: a jax env computes",
        ),
        (ENV, {"num_workers": 2}, vecrl.UnknownKeywordError, "does not take: worker processes are the gym"),
        (ENV, {"bakend": "x"}, TypeError, r"Its keywords .*: action_repeat, ctrl_dt, episode_length, impl"),
    ],
)
def test_mistakes_say_what_to_do(name, kwargs, error, words):
    kwargs = {"num_envs": 2, **kwargs}
    with pytest.raises(error, match=words):
        make_playground_env(name, **kwargs)


def test_evaluate_runs_on_playground_envs():
    engine = pytest.importorskip("vecrl_evaluate", reason="evaluate comes with vecrl-evaluate")
    Policy, evaluate = pytest.importorskip("vecrl_policy").Policy, engine.evaluate
    ObsNorm = pytest.importorskip("vecrl_policy").ObsNorm

    env = vecrl.make_vector_env(f"playground::{ENV}", num_envs=3, num_episodes=1, **SHORT)
    policy = Policy("Linear(5, 1)")
    rows = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    result = evaluate(policy, env, rows, seed=1)  # one compiled program: policy, MJX step and returns
    again = evaluate(policy, env, rows, seed=1)
    stepped = evaluate(policy, env, rows, seed=1, fused=False)  # Python drives each step
    stats = ObsNorm()  # the neuroevolution options on the same compiled env
    shaped = evaluate(
        policy, env, rows, seed=1, obs_norm=stats, decrease_rewards_by=1.0, action_noise_stdev=0.1
    )
    env.close()
    assert (result.steps == 4).all() and (result.episodes == 1).all()
    assert torch.equal(result.total_return, again.total_return)
    assert (result.path, stepped.path, shaped.path) == ("fused", "stepped", "fused")
    assert torch.equal(result.steps, stepped.steps)
    torch.testing.assert_close(result.total_return, stepped.total_return, rtol=1e-5, atol=1e-5)
    assert np.isfinite(result.total_return.numpy()).all()
    assert stats.count == int(result.steps.sum()) and stats.size == 5 and torch.isfinite(stats.std).all()
    assert torch.isfinite(shaped.total_return).all() and (shaped.total_return < result.total_return).all()


def test_an_env_whose_models_cannot_be_fetched_says_so_in_one_line_from_the_command():
    """Locomotion envs clone mujoco_menagerie with git on first use; git here may use no network protocol
    (GIT_ALLOW_PROTOCOL=file), so the clone fails at once, as it does on a machine without internet."""
    environment = {**os.environ, "GIT_ALLOW_PROTOCOL": "file"}
    vecrl_script = os.path.join(os.path.dirname(sys.executable), "vecrl")
    result = subprocess.run(
        [vecrl_script, "bench", "playground::Go1JoystickFlatTerrain", "--num-envs", "2", "--steps", "2"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "could not fetch the robot models of 'Go1JoystickFlatTerrain'" in result.stderr
    assert "use a DM Control suite env" in result.stderr


def test_the_names_read_from_playground_s_source_are_its_registry_s():
    # vecrl's commands check a name before importing Playground (seconds): from the suites' source
    from mujoco_playground import registry

    from vecrl_playground.names import SUITES, names_in_suite

    assert sorted(n for suite in SUITES for n in names_in_suite(suite)) == sorted(registry.ALL_ENVS)
