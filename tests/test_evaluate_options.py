"""evaluate's options as one value: EvaluateOptions is what evaluate, VecrlNE and the commands make, and
evaluate's keywords are its fields."""

import argparse
import dataclasses
import inspect

import pytest
import torch

import vecrl
from vecrl_evaluate import EvaluateOptions, evaluate
from vecrl_evaluate.command_options import add_evaluate_options, evaluate_options, shared_options
from vecrl_evaluate.evaluation import evaluated
from vecrl_policy import Policy

OPTION_FIELDS = [f.name for f in dataclasses.fields(EvaluateOptions) if f.init]


def test_evaluates_keywords_are_the_options_fields():
    # (options and progress aside, and opponents and matches: how the rows are seated, not the rollout's options)
    apart = ("options", "progress", "opponents", "matches")
    keywords = [
        name
        for name, parameter in inspect.signature(evaluate).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name not in apart
    ]
    assert keywords == OPTION_FIELDS


def test_one_options_value_gives_what_its_keywords_give():
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=3)
    policy = Policy("Linear(obs_length, act_length)", obs_length=3, act_length=1)
    rows = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    keywords = dict(seed=4, num_episodes=2, action_noise_stdev=0.1, decrease_rewards_by=0.5)
    by_keywords = evaluate(policy, env, rows, **keywords)
    by_value = evaluate(policy, env, rows, options=EvaluateOptions(**keywords))
    assert torch.equal(by_keywords.total_return, by_value.total_return)
    assert torch.equal(by_keywords.steps, by_value.steps)
    assert torch.equal(
        evaluated(policy, env, rows, EvaluateOptions(**keywords)).total_return, by_value.total_return
    )


def test_options_and_keywords_together_are_refused():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(obs_length, act_length)", obs_length=4, act_length=2)
    with pytest.raises(TypeError, match="got options= and options as keywords too"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), options=EvaluateOptions(), seed=1)
    with pytest.raises(TypeError, match="options must be a vecrl_evaluate.EvaluateOptions, got dict"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length), options={"seed": 1})


@pytest.mark.parametrize(
    "keywords, error, words",
    [
        (dict(num_episodes=0), ValueError, "num_episodes must be a positive int, got 0"),
        (dict(seed=-1), ValueError, "seed must be None or an int >= 0"),
        (dict(fused="yes"), TypeError, "fused must be True or False"),
        (dict(common_random_numbers=1), TypeError, "common_random_numbers must be True or False"),
        (dict(action_noise_stdev=-1.0), ValueError, "action_noise_stdev must be a finite number >= 0"),
        (dict(alive_bonus_schedule=(5, 2, 1.0)), ValueError, "t1 < t0"),
        (dict(devices="cpu"), TypeError, "devices must be a list of jax devices"),
        (dict(num_workers=2, executor=object()), ValueError, "not both"),
        (dict(executor=object()), TypeError, "executor must be a vecrl_evaluate Executor"),
        (
            dict(steps_per_check=2**63),
            ValueError,
            "steps_per_check must be .* a positive int up to 2,147,483,647",
        ),
    ],
)
def test_an_options_value_is_checked_when_made(keywords, error, words):
    with pytest.raises(error, match=words):
        EvaluateOptions(**keywords)


def test_replace_checks_again_and_keeps_the_options_frozen():
    options = EvaluateOptions(num_episodes=2)
    assert dataclasses.replace(options, seed=3).shaping == options.shaping
    with pytest.raises(ValueError, match="num_episodes must be a positive int"):
        dataclasses.replace(options, num_episodes=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.seed = 1  # type: ignore[misc]


def test_the_commands_share_one_table_of_options():
    """vecrl evaluate and vecrl evolve take the shared options from one table; what they parse becomes the
    options value's keywords."""
    parser = argparse.ArgumentParser()
    add_evaluate_options(parser)
    args = parser.parse_args(["--episodes", "3", "--action-noise", "0.2", "--alive-bonus-schedule", "5,1.5"])
    options = EvaluateOptions(**evaluate_options(vars(args)))
    assert (options.num_episodes, options.seed, options.action_noise_stdev) == (3, 0, 0.2)
    assert options.alive_bonus_schedule == (5, 1.5) and options.shaping.alive_bonus_schedule == (5, 5, 1.5)
    resumable = argparse.ArgumentParser()
    add_evaluate_options(resumable, defaults=False)
    assert all(value is None for value in vars(resumable.parse_args([])).values())
    assert {flag for flag, _, _ in shared_options()} >= {
        "--episodes",
        "--seed",
        "--workers",
        "--action-noise",
    }


def test_vecrl_evolve_and_evaluate_take_the_shared_options():
    pytest.importorskip("vecrl_evotorch")
    from vecrl.cli import build_parser

    parser = build_parser()
    for command in ("evaluate", "evolve"):
        args = parser.parse_args(
            [command, "gym::CartPole-v1", "--decrease-rewards-by", "1", "--episodes", "2"]
        )
        assert (args.decrease_rewards_by, args.episodes) == (1.0, 2)
