"""Domain randomization in evaluate (``randomize=``): each row's every episode runs with env parameters drawn
from its seed and the episode's number, the same on any num_envs, in worker processes and on the fused
path; fixed parameters per row; and every mistake a clear error before anything runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from installed import installed

import vecrl
from vecrl.randomize import scale
from vecrl_evaluate import evaluate
from vecrl_policy import Policy

HEAVY_POLE = scale({"masspole": (0.5, 4.0), "length": (0.5, 2.0)})


def population(policy: Policy, rows: int) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0))


def cartpole(num_envs: int) -> object:
    return vecrl.make_vector_env("gym::CartPole-v1", num_envs=num_envs)


def test_a_rows_parameters_depend_on_its_seed_and_episode_alone():
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 2)")
    rows = population(policy, 13)
    results = {}
    for num_envs in (4, 64):
        env = cartpole(num_envs)
        results[num_envs] = evaluate(policy, env, rows, num_episodes=3, seed=5, randomize=HEAVY_POLE)
        env.close()
    env = cartpole(4)
    workers = evaluate(policy, env, rows, num_episodes=3, seed=5, randomize=HEAVY_POLE, num_workers=2)
    plain = evaluate(policy, env, rows, num_episodes=3, seed=5)
    again = evaluate(policy, env, rows, num_episodes=3, seed=5)
    env.close()
    for result in (results[64], workers):
        assert torch.equal(result.total_return, results[4].total_return)
        assert torch.equal(result.steps, results[4].steps)
    assert (results[4].episodes == 3).all()
    assert not torch.equal(results[4].total_return, plain.total_return)
    assert torch.equal(plain.total_return, again.total_return)  # an evaluation leaves the defaults behind


def test_mujoco_rows_get_the_same_masses_wherever_they_run():
    pytest.importorskip("mujoco")
    name = "gym::Hopper-v5" if vecrl.compat.GYMNASIUM_1 else "gym::Hopper-v4"
    randomize = scale({"body_mass": (0.5, 1.5), "geom_friction": (0.5, 1.5)})
    policy = Policy("Linear(11, 3)")
    rows = 0.2 * population(policy, 9)
    returns = []
    for num_envs in (3, 9):
        env = vecrl.make_vector_env(name, num_envs=num_envs)
        returns.append(evaluate(policy, env, rows, num_episodes=2, seed=1, randomize=randomize).total_return)
        env.close()
    assert torch.equal(returns[0], returns[1])


def test_fixed_parameters_per_row_hold_for_each_of_its_episodes():
    policy = Policy("Linear(4, 2)")
    rows = population(policy, 1).expand(4, -1)  # one policy, four pole lengths
    env = cartpole(4)
    lengths = np.array([0.5, 0.5, 5.0, 5.0])
    result = evaluate(
        policy, env, rows, num_episodes=2, seed=0, randomize={"length": lengths}, common_random_numbers=True
    )
    defaults = evaluate(policy, env, rows[:1], num_episodes=2, seed=0, randomize={"length": [0.5]})
    env.close()
    assert result.total_return[0] == result.total_return[1] == defaults.total_return[0]
    # a longer pole falls more slowly: the same policy balances it longer
    assert result.total_return[2] > result.total_return[0]


@pytest.mark.parametrize(
    ("randomize", "error", "words"),
    [
        (
            {"lenght": [1.0] * 5},
            ValueError,
            "gym::CartPole-v1 has no parameter 'lenght'.*Did you mean 'length'",
        ),
        ({"length": [1.0] * 3}, ValueError, r"randomize\['length'\] must have shape \(5,\)"),
        ({"length": [float("nan")] * 5}, ValueError, "not finite"),
        (scale({"lenght": (1, 2)}), ValueError, "scale\\(\\) names 'lenght'"),
        (lambda generator, defaults: [1.0], TypeError, "must return a dict"),
        (lambda generator, defaults: {"length": generator.uniform(size=3)}, ValueError, "must have shape"),
        ("length", TypeError, "randomize must be a sampler"),
    ],
)
def test_mistakes_are_refused_before_anything_runs(randomize, error, words):
    policy = Policy("Linear(4, 2)")
    env = cartpole(2)
    with pytest.raises(error, match=words):
        evaluate(policy, env, population(policy, 5), randomize=randomize)
    env.close()


def test_an_env_without_parameters_says_so():
    env = vecrl.make_vector_env("gym::FrozenLake-v1", num_envs=2)
    policy = Policy("Linear(16, 4)")
    with pytest.raises(NotImplementedError, match="gym::FrozenLake-v1 lets no parameter vary per sub-env"):
        evaluate(policy, env, population(policy, 2), randomize=scale({"g": (1, 2)}))
    env.close()


@pytest.mark.parametrize(
    "text",
    ["body_mass=", "body_mass=1", "=1:2", "body_mass=2:1", "body_mass=nan:1", "body_mass=a:b"],
)
def test_a_command_line_range_is_name_low_high(text):
    import argparse

    from vecrl.command import scale_range

    with pytest.raises(argparse.ArgumentTypeError, match="takes name=low:high"):
        scale_range(text)


def test_scale_checks_its_ranges():
    with pytest.raises(ValueError, match="low <= high"):
        scale({"g": (2, 1)})
    with pytest.raises(TypeError, match=r"must be \(low, high\)"):
        scale({"g": 1})
    with pytest.raises(TypeError, match="takes a dict"):
        scale({})


def engines_with_params() -> list[tuple[str, dict]]:
    pendulums = [
        ("brax::inverted_pendulum", {"episode_length": 30}),
        ("gymnax::Pendulum-v1", {"episode_length": 30}),
    ]
    return installed([("gym::Pendulum-v1", {}), *pendulums])


@pytest.mark.parametrize(("name", "kwargs"), engines_with_params())
def test_a_row_s_later_episodes_follow_one_rule_with_or_without_params(name, kwargs):
    """evaluate() and evaluate(randomize=every row at its defaults) give the same rows bit for bit over three
    episodes, and params given to row 0 alone change row 0 alone."""
    env = vecrl.make_vector_env(name, num_envs=3, **kwargs)
    policy = Policy(
        "Linear(obs_length, act_length)", obs_length=env.single_observation_space.shape[0], act_length=1
    )
    rows = torch.randn(9, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    defaults = env.unwrapped.default_params
    at_defaults = {key: np.stack([value] * 9) for key, value in defaults.items()}
    plain = evaluate(policy, env, rows, num_episodes=3, seed=5, fused=False)
    given = evaluate(policy, env, rows, num_episodes=3, seed=5, fused=False, randomize=at_defaults)
    assert torch.equal(plain.total_return, given.total_return) and torch.equal(plain.steps, given.steps)
    (key,) = [key for key in ("gravity", "g") if key in defaults][:1] or [next(iter(defaults))]
    changed = {k: v.copy() for k, v in at_defaults.items()}
    changed[key][0] = changed[key][0] * 1.5
    one = evaluate(policy, env, rows, num_episodes=3, seed=5, fused=False, randomize=changed)
    assert torch.equal(one.total_return[1:], plain.total_return[1:]) and not torch.equal(
        one.total_return[:1], plain.total_return[:1]
    )
    env.close()
