"""Measures on a gymnax env: the same numbers fused and stepped (``vecrl_evaluate.measures``)."""

from __future__ import annotations

import pytest
import torch

import vecrl

pytest.importorskip("vecrl_policy")

from vecrl_evaluate import Measure, evaluate
from vecrl_policy import ObsNorm, Policy


def test_pendulum_measures_are_the_same_fused_and_stepped():
    # gymnax's step reports no info but a discount: its measures are functions of the step's batch
    measures = {
        "height": Measure(lambda o, a, r: o[:, 0], "last"),  # cos of the angle where each episode ends
        "torque": Measure(lambda o, a, r: abs(a[:, 0]), "max"),
        "cost": Measure(lambda o, a, r: -r, "mean"),
    }
    policy = Policy("Linear(3, 8) >> Tanh() >> Linear(8, 1)")
    rows = 0.5 * torch.randn(10, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    results = {}
    for num_envs, fused in [(4, None), (16, None), (3, False)]:
        env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=num_envs, episode_length=30)
        results[num_envs] = evaluate(
            policy,
            env,
            rows,
            seed=3,
            num_episodes=3,
            action_noise_stdev=0.1,
            obs_norm=ObsNorm(),
            fused=fused,
            measures=measures,
        )
    assert [r.path for r in results.values()] == ["fused", "fused", "stepped"]
    for num_envs in (16, 3):
        for name in measures:
            torch.testing.assert_close(
                results[num_envs].episode_measures[name],
                results[4].episode_measures[name],
                rtol=1e-5,
                atol=1e-4,
            )
    # the mean cost is the negated mean reward per step: the return divided by the steps
    expected = -results[4].total_return / results[4].steps
    torch.testing.assert_close(results[4].measures["cost"], expected, rtol=1e-5, atol=1e-5)
