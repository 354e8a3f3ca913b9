"""evaluate's neuroevolution options across processes and backends: observation statistics merged from
every part equal the single-process call's, and shaping and noise work on brax and envpool too."""

from __future__ import annotations

import pytest
import torch
from gymnasium.spaces import flatdim
from test_evaluate_executor import OneAtATime

import vecrl
from vecrl.testing import no_process_left
from vecrl_evaluate import evaluate
from vecrl_policy import ObsNorm, Policy


def population(policy: Policy, rows: int, seed: int = 0) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(seed))


def warmed_statistics(size: int) -> ObsNorm:
    stats = ObsNorm()
    stats.update(torch.randn(50, size, generator=torch.Generator().manual_seed(9)) * 2 + 0.5)
    return stats


def assert_same_statistics(a: ObsNorm, b: ObsNorm) -> None:
    assert a.count == b.count
    torch.testing.assert_close(a.mean, b.mean, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(a.std, b.std, rtol=1e-12, atol=1e-12)


SHAPED = dict(decrease_rewards_by=1.0, alive_bonus_schedule=(10, 20, 1.0))


@pytest.mark.parametrize(
    ("env_name", "network", "rows", "extra"),
    [
        ("gym::Hopper-v5", "Linear(11, 8) >> Tanh() >> Linear(8, 3)", 10, SHAPED),  # float64, cut chunks
        ("gym::FrozenLake-v1", "Linear(16, 4)", 9, {}),  # Discrete observations
        ("gym::CartPole-v1", "Linear(4, 8) >> LSTM(8, 2)", 16, {}),  # recurrent, whole chunks
    ],
)
def test_worker_processes_give_the_results_and_statistics_of_one_process(env_name, network, rows, extra):
    env = vecrl.make_vector_env(env_name, num_envs=8, num_episodes=2)
    policy = Policy(network)
    parameters = population(policy, rows)
    size = flatdim(env.single_observation_space)
    alone, split = warmed_statistics(size), warmed_statistics(size)
    with no_process_left():
        try:
            expected = evaluate(policy, env, parameters, num_episodes=2, seed=4, obs_norm=alone, **extra)
            result = evaluate(
                policy, env, parameters, num_episodes=2, seed=4, obs_norm=split, num_workers=2, **extra
            )
        finally:
            env.close()
    assert torch.equal(result.total_return, expected.total_return)
    assert torch.equal(result.steps, expected.steps)
    assert_same_statistics(split, alone)


def test_any_executor_sends_back_each_parts_statistics():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    policy = Policy("Linear(4, 2)")
    parameters = population(policy, 11)
    alone, split = warmed_statistics(4), warmed_statistics(4)
    executor = OneAtATime(3)
    try:
        expected = evaluate(policy, env, parameters, seed=2, obs_norm=alone)
        result = evaluate(policy, env, parameters, seed=2, obs_norm=split, executor=executor)
    finally:
        executor.close()
        env.close()
    assert torch.equal(result.total_return, expected.total_return)
    assert_same_statistics(split, alone)


def test_a_failed_call_leaves_the_statistics_as_they_were():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 3)")  # 3 outputs for 2 actions: refused before any step
    stats = warmed_statistics(4)
    before = stats.state_dict()
    with pytest.raises(ValueError, match="Make its output 2 wide"):
        evaluate(policy, env, population(policy, 2), obs_norm=stats)
    assert stats.count == before["count"] and torch.equal(stats.mean, before["sum"] / before["count"])
    env.close()


def test_brax_evaluates_with_statistics_shaping_and_noise():
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=8, num_episodes=1, episode_length=30)
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 1)")
    parameters = population(policy, 12)
    stats = ObsNorm()
    settings = dict(seed=3, obs_norm=stats, action_noise_stdev=0.1, **SHAPED)
    first = evaluate(policy, env, parameters, **settings)
    assert stats.count == int(first.steps.sum()) and torch.isfinite(stats.std).all()
    again = evaluate(policy, env, parameters, **{**settings, "obs_norm": None})
    plain = evaluate(policy, env, parameters, seed=3)
    assert torch.isfinite(first.total_return).all()
    assert not torch.equal(again.total_return, plain.total_return)  # shaped and noisy
    env.close()


def test_envpool_evaluates_with_statistics_and_shaping():
    pytest.importorskip("envpool")
    env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=4, num_episodes=1)
    policy = Policy("Linear(4, 2)")
    parameters = population(policy, 6)
    stats = ObsNorm()
    plain = evaluate(policy, env, parameters, seed=1)
    shaped = evaluate(policy, env, parameters, seed=1, obs_norm=stats, decrease_rewards_by=1.0)
    assert torch.equal(shaped.total_return, plain.total_return - plain.steps)  # CartPole: 1 per step
    assert stats.count == int(plain.steps.sum())
    env.close()


def test_workers_see_the_statistics_a_policy_carries_now():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 2)")
    parameters = population(policy, 8)
    with no_process_left():
        try:
            for scale in (1.0, 0.01):  # the second statistics normalize very differently
                stats = ObsNorm()
                stats.update(scale * torch.randn(50, 4, generator=torch.Generator().manual_seed(1)) + scale)
                policy.obs_norm = stats
                expected = evaluate(policy, env, parameters, seed=2)
                result = evaluate(policy, env, parameters, seed=2, num_workers=2)
                assert torch.equal(result.total_return, expected.total_return)
        finally:
            env.close()
