"""evaluate refills finished sub-envs: a row's result depends on (seed, row) alone, bit for bit, whatever
num_envs, the worker processes, the autoreset mode or the budget; on gym, brax and envpool."""

from __future__ import annotations

import pytest
import torch
from gymnasium.spaces import flatdim

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import ObsNorm, Policy

HOPPER = "Hopper-v5"


def population(policy: Policy, rows: int) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(4))


def assert_same(result, expected) -> None:
    assert torch.equal(result.total_return, expected.total_return)
    assert torch.equal(result.episodes, expected.episodes)
    assert torch.equal(result.steps, expected.steps)


CASES = {
    # MuJoCo: float64 observations and rewards, action noise and reward shaping drawn per row
    HOPPER: (
        "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)",
        dict(action_noise_stdev=0.1, decrease_rewards_by=1.0, alive_bonus_schedule=(10, 0.5)),
    ),
    # a recurrent policy: the state of a refilled slot starts afresh, that of a row's next episode too
    "CartPole-v1": ("Linear(obs_length, 8) >> LSTM(8, act_length)", {}),
}


@pytest.mark.parametrize("env_name", list(CASES))
def test_a_rows_result_is_the_same_bit_for_bit_whatever_runs_it(env_name):
    network, options = CASES[env_name]
    results = []
    for num_envs, num_workers in [(8, None), (64, None), (256, None), (64, 2)]:
        env = vecrl.make_vector_env(f"gym::{env_name}", num_envs=num_envs, num_episodes=2)
        action_space = env.single_action_space
        act_length = action_space.n if hasattr(action_space, "n") else action_space.shape[0]
        policy = Policy(network, obs_length=flatdim(env.single_observation_space), act_length=int(act_length))
        rows = population(policy, 300)
        try:
            results.append(
                evaluate(policy, env, rows, num_episodes=2, seed=9, num_workers=num_workers, **options)
            )
        finally:
            env.close()
    for result in results[1:]:
        assert_same(result, results[0])
    assert (results[0].episodes == 2).all()


@pytest.mark.parametrize(
    "env_kwargs",
    [
        dict(autoreset_mode="next_step", num_episodes=2),
        dict(autoreset_mode="next_step"),  # no budget: the masked reset cancels the pending autoreset
        dict(),  # same-step autoreset, no budget: a finished sub-env runs on until its next row starts
    ],
    ids=["next-step-budget", "next-step", "same-step"],
)
def test_the_autoreset_mode_and_the_budget_do_not_change_the_results(env_kwargs):
    # next_step's reset steps are no env steps: not counted, no noise drawn, not a step of the alive bonus
    policy = Policy("Linear(11, 8) >> Tanh() >> Linear(8, 3)")
    rows = population(policy, 30)
    options = CASES[HOPPER][1]
    budgeted = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=4, num_episodes=2)
    env = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=7, **env_kwargs)
    try:
        expected = evaluate(policy, budgeted, rows, num_episodes=2, seed=1, **options)
        result = evaluate(policy, env, rows, num_episodes=2, seed=1, **options)
    finally:
        env.close()
        budgeted.close()
    assert_same(result, expected)


def test_observation_statistics_count_every_step_of_every_row_whatever_num_envs():
    policy = Policy("Linear(11, 3)")
    rows = population(policy, 40)
    stats = []
    for num_envs in (4, 16):
        env = vecrl.make_vector_env(f"gym::{HOPPER}", num_envs=num_envs, num_episodes=1)
        stats.append(ObsNorm())
        try:
            result = evaluate(policy, env, rows, seed=2, obs_norm=stats[-1])
        finally:
            env.close()
        assert stats[-1].count == int(result.steps.sum())
    # the same observations, summed in another order: equal within float64 rounding
    torch.testing.assert_close(stats[0].mean, stats[1].mean)
    torch.testing.assert_close(stats[0].std, stats[1].std)


def test_a_brax_row_gets_the_same_result_on_any_batch_width():
    pytest.importorskip("vecrl_brax")
    policy = Policy("Linear(2, 1)")
    rows = population(policy, 10)
    results = []
    for num_envs in (4, 10):
        env = vecrl.make_vector_env("brax::fast", num_envs=num_envs, episode_length=7, num_episodes=2)
        try:
            results.append(evaluate(policy, env, rows, num_episodes=2, seed=5))
        finally:
            env.close()
    # XLA may reduce otherwise for another batch width: equal within float tolerance
    torch.testing.assert_close(results[0].total_return, results[1].total_return)
    assert torch.equal(results[0].steps, results[1].steps)


def test_envpool_seeds_rows_with_whole_pool_resets_and_refills_when_unseeded():
    pytest.importorskip("vecrl_envpool")
    policy = Policy("Linear(4, 2)")
    rows = population(policy, 20)
    seeded = []
    for num_envs in (4, 8):
        env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=num_envs, num_episodes=1)
        assert env.unwrapped.capabilities.seeded_masked_reset is False
        try:
            seeded.append(evaluate(policy, env, rows, seed=3))
            unseeded = evaluate(policy, env, rows)  # masked resets without seeds
        finally:
            env.close()
        assert (unseeded.episodes == 1).all() and (unseeded.steps > 0).all()
    assert_same(seeded[1], seeded[0])
