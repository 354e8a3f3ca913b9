"""Measures besides the return (``evaluate(measures=...)``): the same numbers on every path (fused, stepped on
any num_envs, worker processes), each equal to a hand-written loop over the same env, and every mistake
refused with one clear error before anything is scored."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch

import vecrl
from vecrl_evaluate import Measure, evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import ObsNorm, Policy

OPTIONS = dict(seed=3, num_episodes=3, action_noise_stdev=0.1)


def population(policy: Policy, rows: int, scale: float = 0.5) -> torch.Tensor:
    return scale * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0))


def pole_angle(
    observation, action, reward
):  # array operators alone: runs on torch and inside the fused program
    return observation[:, 1]


def effort(observation, action, reward):
    return (action**2).sum(-1) + 0.0 * reward


def assert_same_measures(result, expected) -> None:
    assert result.measures.keys() == expected.measures.keys()
    for name in expected.measures:
        torch.testing.assert_close(
            result.episode_measures[name], expected.episode_measures[name], rtol=1e-5, atol=1e-4
        )
        torch.testing.assert_close(result.measures[name], expected.measures[name], rtol=1e-5, atol=1e-4)


def test_brax_measures_are_the_same_on_every_path():
    pytest.importorskip("vecrl_brax")
    measures = {
        "angle": Measure(pole_angle, "last"),
        "effort": Measure(effort, "sum"),
        "peak": (pole_angle, "max"),
    }
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 1)")
    rows = population(policy, 10)
    results = {}
    # fused with refills (4 slots) and without (16: a slot per row), stepped on two widths
    for num_envs, fused in [(4, None), (16, None), (3, False), (8, False)]:
        env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=num_envs, episode_length=40)
        results[num_envs] = evaluate(
            policy, env, rows, fused=fused, obs_norm=ObsNorm(), measures=measures, **OPTIONS
        )
        env.close()
    assert [r.path for r in results.values()] == ["fused", "fused", "stepped", "stepped"]
    assert results[4].episode_measures["angle"].shape == (10, 3)
    assert (results[4].measures["effort"] > 0).all()
    for num_envs in (16, 3, 8):
        assert_same_measures(results[num_envs], results[4])


def test_a_brax_metric_is_measured_alike_fused_and_stepped():
    pytest.importorskip("vecrl_brax")
    # reacher reports its reward terms as metrics; short episodes keep its physics' rounding from parting paths
    policy = Policy("Linear(11, 2) >> Tanh()")
    rows = population(policy, 6, 0.3)
    results = []
    for fused in (None, False):
        env = vecrl.make_vector_env("brax::reacher", num_envs=4, episode_length=5)
        results.append(evaluate(policy, env, rows, fused=fused, measures={"dist": "reward_dist"}, **OPTIONS))
        env.close()
    assert [r.path for r in results] == ["fused", "stepped"]
    assert (results[0].measures["dist"] < 0).all()
    assert_same_measures(results[0], results[1])


HOPPER_MEASURES = {"speed": "x_velocity", "height": Measure(lambda o, a, r: o[:, 0], "last")}


def test_hopper_measures_are_the_same_on_every_stepped_path():
    # MuJoCo's float64 observations and an info key reported per step, with noise and observation statistics
    policy = Policy("Linear(11, 3) >> Tanh()")
    rows = population(policy, 8, 0.3)
    results = {}
    for num_envs, workers in [(4, None), (3, None), (8, 2)]:
        env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=num_envs)
        results[num_envs] = evaluate(
            policy, env, rows, num_workers=workers, obs_norm=ObsNorm(), measures=HOPPER_MEASURES, **OPTIONS
        )
        env.close()
    for num_envs in (3, 8):
        assert_same_measures(results[num_envs], results[4])
    assert results[4].episode_measures["speed"].shape == (8, 3)


def test_each_measure_is_what_a_hand_written_loop_over_the_env_finds():
    policy = Policy("Linear(11, 3) >> Tanh()")
    rows = population(policy, 3, 0.3)
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=2)
    measures = {
        **HOPPER_MEASURES,
        "top": ("x_velocity", "max"),
        "steps": Measure(lambda o, a, r: r * 0 + 1, "sum"),
    }
    result = evaluate(policy, env, rows, seed=5, measures=measures)
    env.close()
    for row, seed in enumerate(row_seeds(5, 3)):
        single = gymnasium.make("Hopper-v5")
        observation, _ = single.reset(seed=int(seed))
        policy.set_parameters(rows[row : row + 1])
        speeds, height, done = [], None, False
        while not done:
            height = float(observation[0])
            with torch.no_grad():
                action = policy(torch.as_tensor(observation, dtype=torch.float32)[None])[0].numpy()
            observation, _, terminated, truncated, info = single.step(action)
            speeds.append(info["x_velocity"])
            done = terminated or truncated
        single.close()
        assert result.measures["speed"][row].item() == pytest.approx(np.mean(speeds), rel=1e-6)
        assert result.measures["top"][row].item() == pytest.approx(np.max(speeds), rel=1e-6)
        assert result.measures["height"][row].item() == pytest.approx(height, rel=1e-6)
        assert result.measures["steps"][row].item() == len(speeds) == result.steps[row].item()


def test_a_discrete_env_s_measure_sees_the_action_taken():
    policy = Policy("Linear(4, 2)")
    rows = population(policy, 6)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3)
    result = evaluate(policy, env, rows, seed=0, measures={"right": Measure(lambda o, a, r: a, "mean")})
    env.close()
    assert ((result.measures["right"] >= 0) & (result.measures["right"] <= 1)).all()


@pytest.mark.parametrize(
    "measures, message",
    [
        (
            {"v": "no_such_key"},
            "the info key 'no_such_key', which this env's step does not report; it reports 'reward_ctrl', 'reward_forward'",
        ),
        ({"v": ("x_velocity", "median")}, "per_episode must be one of 'sum', 'mean', 'last', 'max', 'min'"),
        (
            {"v": lambda o, a, r: o},
            r"The measure 'v' gave shape \(2, 11\), dtype torch.float32 for a batch of 2 rows",
        ),
        ({"v": lambda o, a, r: o[:, 99]}, "The measure 'v' raised on a batch of 2 observations"),
        ({"v": lambda o, a, r: "fast"}, "The measure 'v' gave str for a batch of 2 rows"),
        ({"v": 3}, "A measure's source is an info key"),
        (["x_velocity"], "measures must be a dict of name -> measure"),
        (
            {"v": lambda o, a, r: o[:, 0] / 0.0 - o[:, 0] / 0.0},
            r"The measure 'v' is NaN or inf for parameter rows 0, 1, 2;",
        ),
    ],
)
def test_measure_mistakes_are_one_clear_error(measures, message):
    policy = Policy("Linear(11, 3) >> Tanh()")
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=3)
    statistics = ObsNorm()
    with pytest.raises((ValueError, TypeError), match=message):
        evaluate(policy, env, population(policy, 3, 0.1), obs_norm=statistics, measures=measures)
    assert statistics.count == 0  # nothing half-applied
    env.close()


def test_a_torch_only_measure_runs_stepped_and_fused_true_says_why():
    pytest.importorskip("vecrl_brax")
    policy = Policy("Linear(4, 1)")
    rows = population(policy, 4)
    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=4, episode_length=10)
    torch_only = {"angle": lambda o, a, r: torch.abs(o[:, 1])}
    result = evaluate(policy, env, rows, measures=torch_only)
    assert result.path == "stepped" and result.measures["angle"].shape == (4,)
    with pytest.raises(ValueError, match="the measure 'angle' does not run on jax arrays"):
        evaluate(policy, env, rows, measures=torch_only, fused=True)
    with pytest.raises(ValueError, match="it reports no keys"):
        evaluate(policy, env, rows, measures={"x": "x_velocity"})
    env.close()


class OddInfo(gymnasium.Wrapper):
    """Reports a str under "label" on every step, and "sometimes" on every other step only (the first among them)."""

    def step(self, action):
        observation, reward, terminated, truncated, info = super().step(action)
        self.count = getattr(self, "count", 0) + 1
        info = {**info, "label": "fast"}
        if self.count % 2 == 1:
            info["sometimes"] = 1.0
        return observation, reward, terminated, truncated, info


@pytest.mark.parametrize(
    "measures, message",
    [
        ({"v": "label"}, r"The info key 'label' holds object values \('fast', 'fast'\), not numbers"),
        ({"v": "sometimes"}, "the info key 'sometimes', which this env reports on some steps only"),
    ],
)
def test_info_keys_of_other_kinds_are_named(measures, message):
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, wrappers=[OddInfo])
    with pytest.raises(ValueError, match=message):
        evaluate(policy, env, population(policy, 2), seed=0, measures=measures)


def test_a_measure_that_gives_numpy_counts_as_the_same_in_torch():
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    rows = population(policy, 4)
    in_numpy = evaluate(policy, env, rows, seed=0, measures={"x": lambda o, a, r: o[:, 0].numpy()})
    in_torch = evaluate(policy, env, rows, seed=0, measures={"x": lambda o, a, r: o[:, 0]})
    assert torch.equal(in_numpy.measures["x"], in_torch.measures["x"])
