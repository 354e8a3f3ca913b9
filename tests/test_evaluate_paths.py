"""One result per question: a population evaluated on a jax env gives the same per-row numbers on every path
(the fused program, the stepped loop on any num_envs, parts run elsewhere), with several episodes per row,
action noise, observation statistics, shaping and a recurrent network; and what the fused path cannot run
(a wrapper, actions that are not finite, a closed env, bfloat16) is handled as the stepped path handles it."""

from __future__ import annotations

import gymnasium
import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import ObsNorm, Policy

pytest.importorskip("vecrl_brax")

ENVS = {
    # episodes end early, at different steps: rows refill and restart their episodes one by one
    "brax::inverted_pendulum": ("Linear(4, 8) >> Tanh() >> LSTM(8, 4) >> Linear(4, 1)", 40),
    "brax::fast": ("Linear(2, 8) >> LSTM(8, 4) >> Linear(4, 1)", 9),
}
OPTIONS = dict(
    seed=3, num_episodes=3, action_noise_stdev=0.1, decrease_rewards_by=0.5, alive_bonus_schedule=(5, 20, 2.0)
)


def population(policy: Policy, rows: int) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0))


def make(name: str, num_envs: int, **kwargs: object) -> object:
    return vecrl.make_vector_env(name, num_envs=num_envs, episode_length=ENVS[name][1], **kwargs)


def assert_same_rows(result, expected) -> None:
    assert torch.equal(result.episodes, expected.episodes)
    assert torch.equal(result.steps, expected.steps)
    torch.testing.assert_close(result.total_return, expected.total_return, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(result.raw_return, expected.raw_return, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("name", list(ENVS))
def test_every_path_gives_each_row_the_same_numbers(name):
    policy = Policy(ENVS[name][0])
    rows = population(policy, 10)
    results, statistics = {}, {}
    # fused with refills (4 slots) and without (16: a slot per row), stepped on three widths
    for num_envs, fused in [(4, None), (16, None), (3, False), (8, False), (64, False)]:
        env = make(name, num_envs, num_episodes=3)
        statistics[num_envs] = ObsNorm()
        results[num_envs] = evaluate(policy, env, rows, fused=fused, obs_norm=statistics[num_envs], **OPTIONS)
        env.close()
    assert [r.path for r in results.values()] == ["fused", "fused", "stepped", "stepped", "stepped"]
    assert (results[4].episodes == 3).all()
    # the shaping took 0.5 from every step and added the bonus: the env's own rewards are summed apart
    shaping = results[4].total_return - results[4].raw_return
    assert (shaping != 0).all()
    for num_envs in (16, 3, 8, 64):
        assert_same_rows(results[num_envs], results[4])
        assert statistics[num_envs].count == statistics[4].count
        torch.testing.assert_close(statistics[num_envs].mean, statistics[4].mean, rtol=1e-5, atol=1e-6)


def test_randomized_masses_give_each_row_the_same_numbers_on_every_path():
    # domain randomization: each row's episodes draw their masses and gear from its seed, wherever they run
    randomize = vecrl.randomize.scale({"body_mass": (0.3, 3.0), "actuator_gear": (0.5, 1.5)})
    policy = Policy(ENVS["brax::inverted_pendulum"][0])
    rows = population(policy, 10)
    results = {}
    for num_envs, fused in [(4, None), (3, False), (16, False)]:
        env = make("brax::inverted_pendulum", num_envs)
        results[num_envs] = evaluate(policy, env, rows, fused=fused, randomize=randomize, **OPTIONS)
        env.close()
    assert [r.path for r in results.values()] == ["fused", "stepped", "stepped"]
    for num_envs in (3, 16):
        assert_same_rows(results[num_envs], results[4])
    env = make("brax::inverted_pendulum", 4)
    plain = evaluate(policy, env, rows, **OPTIONS)
    env.close()
    assert not torch.equal(plain.steps, results[4].steps)  # the masses did change the episodes


def test_a_wrapped_env_runs_its_wrappers_on_every_path():
    env = gymnasium.wrappers.vector.TransformReward(make("brax::fast", 4), lambda reward: reward * 0)
    policy = Policy(ENVS["brax::fast"][0])
    rows = population(policy, 6)
    result = evaluate(policy, env, rows, seed=1)
    assert result.path == "stepped"
    assert (result.total_return == 0).all()
    assert (evaluate(policy, env, rows, seed=1, fused=False).total_return == 0).all()
    with pytest.raises(ValueError, match="wrapped in TransformReward, which the compiled program"):
        evaluate(policy, env, rows, seed=1, fused=True)
    env.close()


def test_actions_that_are_not_finite_are_refused_on_every_path():
    env = make("brax::fast", 4)
    policy = Policy("Linear(2, 8) >> Linear(8, 1)")
    rows = torch.zeros(3, policy.parameter_length)
    rows[1] = 3e38  # finite parameters whose outputs overflow to inf, then NaN
    for fused in (None, False):
        with pytest.raises(ValueError, match="NaN or inf"):
            evaluate(policy, env, rows, seed=0, fused=fused)
    env.close()


def test_a_closed_env_is_refused_on_every_path():
    env = make("brax::fast", 4)
    policy = Policy(ENVS["brax::fast"][0])
    env.close()
    for fused in (None, False, True):
        with pytest.raises(RuntimeError, match="evaluate\\(\\) was called on .*, which is closed"):
            evaluate(policy, env, population(policy, 2), fused=fused)


def test_a_bfloat16_population_is_stepped_and_scored():
    env = make("brax::fast", 4)
    policy = Policy(ENVS["brax::fast"][0])
    rows = population(policy, 6)
    result = evaluate(policy, env, rows.to(torch.bfloat16), seed=2)
    assert result.path == "stepped"
    assert torch.isfinite(result.total_return).all() and (result.episodes == 1).all()
    env.close()


def test_common_random_numbers_are_common_on_every_path():
    policy = Policy(ENVS["brax::fast"][0])
    rows = population(policy, 6)
    options = dict(OPTIONS, common_random_numbers=True)
    results = []
    for num_envs, fused in [(4, None), (3, False)]:
        env = make("brax::fast", num_envs, num_episodes=3)
        results.append(evaluate(policy, env, rows, fused=fused, **options))
        env.close()
    assert_same_rows(results[1], results[0])
    env = make("brax::fast", 1, num_episodes=3)
    alone = evaluate(policy, env, rows[1:2], **options)  # row 1 of the population, run as a row 0
    env.close()
    assert torch.equal(alone.steps, results[0].steps[1:2])
    torch.testing.assert_close(alone.total_return, results[0].total_return[1:2], rtol=1e-5, atol=1e-4)
