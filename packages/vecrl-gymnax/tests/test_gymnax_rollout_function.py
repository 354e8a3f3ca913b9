"""vecrl_evaluate.rollout_function on gymnax envs: the rollout a searcher compiles into its own generation gives
evaluate's results bit for bit (Pendulum-v1's long episodes with refills and noise, CartPole-v1's discrete
actions and early ends, two episodes a row)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vecrl

pytest.importorskip("vecrl_evaluate")


@pytest.mark.parametrize(
    ("env_name", "network", "rows", "num_envs", "options"),
    [
        ("Pendulum-v1", "Linear(3, 8) >> Tanh() >> Linear(8, 1)", 6, 4, dict(action_noise_stdev=0.1)),
        ("CartPole-v1", "Linear(4, 8) >> Tanh() >> Linear(8, 2)", 5, 5, dict(num_episodes=2)),
    ],
)
def test_the_rollout_under_jit_equals_evaluate_bit_for_bit(env_name, network, rows, num_envs, options):
    import jax
    import jax.numpy as jnp

    from vecrl.arrays import convert_from_torch
    from vecrl_evaluate import evaluate
    from vecrl_evaluate.randomness import row_seeds
    from vecrl_evaluate.rollout_function import rollout_function
    from vecrl_policy import Policy

    env = vecrl.make_vector_env(f"gymnax::{env_name}", num_envs=num_envs)
    policy = Policy(network)
    population = 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    expected = evaluate(policy, env, population, seed=3, **options)
    assert expected.path == "fused"
    result, _ = jax.jit(rollout_function(env, policy, **options))(
        convert_from_torch(population, "jax"), jnp.asarray(row_seeds(3, rows))
    )
    assert np.array_equal(np.asarray(result.total_return, np.float64), expected.total_return.numpy())
    assert np.array_equal(np.asarray(result.steps), expected.steps.numpy())
