"""evaluate on envpool envs: budgets, seeds and parts of a population, as on the gym backend."""

from __future__ import annotations

import pytest
import torch
from test_evaluate_executor import OneAtATime

import vecrl
from vecrl.testing import no_process_left
from vecrl_evaluate import evaluate
from vecrl_policy import Policy


@pytest.mark.parametrize(
    ("env_id", "network", "num_episodes"),
    [
        ("CartPole-v1", "Linear(4, 8) >> LSTM(8, 2)", 2),
        ("Hopper-v5", "Linear(11, 3)", 1),  # float64 observations reach the float32 policy as float32
        ("FrozenLake-v1", "Linear(16, 4)", 3),  # Discrete(16) observations arrive one-hot
    ],
)
def test_evaluate_runs_on_envpool_and_its_parts_reproduce_it(env_id, network, num_episodes):
    env = vecrl.make_vector_env(f"envpool::{env_id}", num_envs=4, num_episodes=num_episodes)
    policy = Policy(network)
    rows = torch.randn(10, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    executor = OneAtATime(3)
    try:
        result = evaluate(policy, env, rows, num_episodes=num_episodes, seed=7)
        again = evaluate(policy, env, rows, num_episodes=num_episodes, seed=7)
        in_parts = evaluate(policy, env, rows, num_episodes=num_episodes, seed=7, executor=executor)
    finally:
        executor.close()
        env.close()
    assert (result.episodes == num_episodes).all() and (result.steps > 0).all()
    for other in (again, in_parts):  # parts cut through chunks: envpool seeds each sub-env alone
        assert torch.equal(other.total_return, result.total_return) and torch.equal(other.steps, result.steps)
    if env_id == "CartPole-v1":  # a reward of 1 per step
        assert torch.equal(result.total_return, result.steps.double())


def test_evaluate_in_worker_processes_on_envpool_gives_the_single_process_results():
    policy = Policy("Linear(4, 2)")
    rows = torch.randn(12, policy.parameter_length, generator=torch.Generator().manual_seed(1))
    with no_process_left():  # the workers stop with the env
        env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=8, num_episodes=1, num_threads=1)
        try:
            in_workers = evaluate(policy, env, rows, seed=2, num_workers=2)
            alone = evaluate(policy, env, rows, seed=2)
        finally:
            env.close()
    assert torch.equal(in_workers.total_return, alone.total_return)
