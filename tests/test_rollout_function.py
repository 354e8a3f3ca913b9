"""vecrl_evaluate.rollout_function: evaluate's fused loop as a pure jax function a searcher compiles into its own
generation. Its results equal evaluate's bit for bit for the same rows' seeds (brax and Playground here,
gymnax in vecrl-gymnax's tests), with refills, several episodes, shaping, noise, common random numbers,
measures, fixed env parameters per row and observation statistics; it runs under jax.jit, inside lax.scan
(the statistics carried from generation to generation) and under jax.vmap over populations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("vecrl_brax")

import jax
import jax.numpy as jnp

import vecrl
from vecrl.arrays import convert_from_torch
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_evaluate.rollout_function import rollout_function
from vecrl_policy import ObsNorm, Policy

PENDULUM = "brax::inverted_pendulum"
MLP = "Linear(4, 8) >> Tanh() >> Linear(8, 1)"


def pendulum(num_envs: int, **kwargs) -> object:
    return vecrl.make_vector_env(PENDULUM, num_envs=num_envs, episode_length=40, **kwargs)


def rows_of(policy: Policy, rows: int, seed: int = 0) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(seed))


def assert_bit_equal(result, expected) -> None:
    """The rollout's result (jax, float32) is evaluate's (float64 of the same float32 sums)."""
    assert np.array_equal(np.asarray(result.total_return, np.float64), expected.total_return.numpy())
    assert np.array_equal(np.asarray(result.raw_return, np.float64), expected.raw_return.numpy())
    assert np.array_equal(np.asarray(result.steps), expected.steps.numpy())
    assert np.array_equal(np.asarray(result.episodes), expected.episodes.numpy())
    for name, values in expected.measures.items():
        assert np.array_equal(np.asarray(result.measures[name]), values.numpy().astype(np.float32)), name


def last_x(observation, action, reward):
    return observation[:, 0]


@pytest.mark.parametrize(
    ("rows", "num_envs", "options"),
    [
        (6, 6, {}),  # a slot a row
        (10, 4, dict(num_episodes=2)),  # refills, two episodes a row
        (
            7,
            4,
            dict(action_noise_stdev=0.1, decrease_rewards_by=0.5, alive_bonus_schedule=(5, 2.0)),
        ),
        (6, 3, dict(common_random_numbers=True, num_episodes=2)),
        (6, 6, dict(measures={"x": (last_x, "last"), "effort": (lambda o, a, r: (a**2).sum(-1), "sum")})),
        (5, 5, dict(randomize={"body_mass": np.linspace(0.5, 2.0, 15, dtype=np.float32).reshape(5, 3)})),
    ],
)
def test_the_rollout_under_jit_equals_evaluate_bit_for_bit(rows, num_envs, options):
    env = pendulum(num_envs)
    policy = Policy(MLP)
    population = rows_of(policy, rows)
    expected = evaluate(policy, env, population, seed=3, **options)
    assert expected.path == "fused"
    rollout = jax.jit(rollout_function(env, policy, **options))
    result, state = rollout(convert_from_torch(population, "jax"), jnp.asarray(row_seeds(3, rows)))
    assert state is None
    assert_bit_equal(result, expected)


def test_observation_statistics_carry_over_as_evaluate_s_obs_norm_does():
    env = pendulum(5)
    policy = Policy(MLP)
    population = rows_of(policy, 5)
    stats = ObsNorm()
    rollout = jax.jit(rollout_function(env, policy, obs_norm=ObsNorm()))
    parameters = convert_from_torch(population, "jax")
    first = evaluate(policy, env, population, seed=1, obs_norm=stats)
    result, state = rollout(parameters, jnp.asarray(row_seeds(1, 5)))  # (statistics of no observation yet)
    assert_bit_equal(result, first)
    assert int(state.count) == stats.count
    np.testing.assert_allclose(np.asarray(state.total), stats.sum.numpy(), rtol=1e-5, atol=1e-3)
    second = evaluate(policy, env, population, seed=2, obs_norm=stats)  # normalized by the first's statistics
    result, state = rollout(parameters, jnp.asarray(row_seeds(2, 5)), state)
    # (float32 statistics on the device against ObsNorm's float64: the same episodes to float rounding)
    assert np.array_equal(np.asarray(result.steps), second.steps.numpy())
    np.testing.assert_allclose(np.asarray(result.total_return), second.total_return.numpy(), rtol=1e-4)
    assert int(state.count) == stats.count


def test_generations_in_a_scan_and_populations_under_vmap():
    env = pendulum(4)
    policy = Policy(MLP)
    rollout = rollout_function(env, policy, obs_norm=True)
    populations = jnp.stack([convert_from_torch(rows_of(policy, 4, seed), "jax") for seed in range(3)])
    keys = jax.random.split(jax.random.key(0), 3)

    def generation(state, inputs):
        parameters, key = inputs
        result, state = rollout(parameters, key, state)
        return state, result.total_return

    state, returns = jax.jit(lambda: jax.lax.scan(generation, rollout.initial_state, (populations, keys)))()
    assert returns.shape == (3, 4) and int(state.count) > 0
    first, _ = jax.jit(rollout)(populations[0], keys[0])  # (the first generation: no statistics yet)
    np.testing.assert_array_equal(returns[0], first.total_return)
    plain = rollout_function(env, policy)
    batched, _ = jax.jit(jax.vmap(lambda p, k: plain(p, k)))(populations, keys)
    for i in range(3):
        alone, _ = jax.jit(plain)(populations[i], keys[i])
        np.testing.assert_allclose(
            np.asarray(batched.total_return[i]), np.asarray(alone.total_return), rtol=1e-5
        )
        assert np.array_equal(np.asarray(batched.steps[i]), np.asarray(alone.steps))


def test_a_key_draws_the_rows_seeds_and_the_same_key_the_same_results():
    env = pendulum(4)
    policy = Policy(MLP)
    parameters = convert_from_torch(rows_of(policy, 4), "jax")
    rollout = jax.jit(rollout_function(env, policy))
    a, _ = rollout(parameters, jax.random.key(7))
    b, _ = rollout(parameters, jax.random.key(7))
    c, _ = rollout(parameters, jax.random.key(8))
    assert np.array_equal(np.asarray(a.total_return), np.asarray(b.total_return))
    assert not np.array_equal(np.asarray(a.total_return), np.asarray(c.total_return))


def test_the_mistakes_are_clear_errors():
    env = pendulum(4)
    policy = Policy(MLP)
    with pytest.raises(ValueError, match="does not take seed: f takes the key"):
        rollout_function(env, policy, seed=0)
    with pytest.raises(ValueError, match="randomize as fixed env parameters per row"):
        rollout_function(env, policy, randomize=vecrl.randomize.scale({"gravity": (0.8, 1.2)}))
    with pytest.raises(ValueError, match="cannot run this env and policy as one jax program"):
        rollout_function(vecrl.make_vector_env("gym::Pendulum-v1", num_envs=2), Policy("Linear(3, 1)"))
    rollout = rollout_function(env, policy)
    parameters = jnp.zeros((4, policy.parameter_length))
    with pytest.raises(ValueError, match=r"key must be a jax PRNG key .* or the rows' seeds"):
        rollout(parameters, jnp.zeros((3,), jnp.int32))


def test_playground_s_rollout_equals_evaluate_bit_for_bit():
    pytest.importorskip("vecrl_playground")
    env = vecrl.make_vector_env("playground::CartpoleBalance", num_envs=3, episode_length=30)
    policy = Policy("Linear(5, 8) >> Tanh() >> Linear(8, 1)")
    population = rows_of(policy, 5)
    expected = evaluate(policy, env, population, seed=2, num_episodes=2, action_noise_stdev=0.1)
    rollout = jax.jit(rollout_function(env, policy, num_episodes=2, action_noise_stdev=0.1))
    result, _ = rollout(convert_from_torch(population, "jax"), jnp.asarray(row_seeds(2, 5)))
    assert_bit_equal(result, expected)
