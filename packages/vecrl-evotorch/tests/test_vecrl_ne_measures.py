"""VecrlNE with measures: the features of EvoTorch's MAPElites, and objectives for its multi-objective GA."""

from __future__ import annotations

import pytest
import torch
from evotorch.algorithms import GeneticAlgorithm, MAPElites
from evotorch.operators import GaussianMutation, SimulatedBinaryCrossOver

from vecrl_evaluate import Measure
from vecrl_evotorch import VecrlNE


def cart_position(observation, action, reward):
    return observation[:, 0]


def pushed_right(observation, action, reward):  # CartPole's action: 1 pushes the cart right
    return action


@pytest.mark.parametrize(
    "env, measures, bounds",
    [
        (
            "gym::CartPole-v1",
            {"position": (cart_position, "last"), "right": pushed_right},
            ([-2.4, 0.0], [2.4, 1.0]),
        ),
        (
            "gym::Hopper-v5",
            {"speed": "x_velocity", "height": Measure(lambda o, a, r: o[:, 0], "last")},
            ([-1.0, 0.7], [1.0, 1.4]),
        ),
    ],
)
def test_map_elites_fills_an_archive_over_the_measures(env, measures, bounds):
    problem = VecrlNE(
        env, "Linear(obs_length, act_length)", seed=0, measures=measures, initial_bounds=(-1.0, 1.0)
    )
    assert problem.eval_data_length == 2
    grid = MAPElites.make_feature_grid(
        lower_bounds=bounds[0], upper_bounds=bounds[1], num_bins=4, dtype="float32"
    )
    searcher = MAPElites(
        problem, operators=[GaussianMutation(problem, stdev=0.3)], re_evaluate=False, feature_grid=grid
    )
    searcher.step()
    searcher.step()
    assert int(searcher.filled.sum()) > 1
    features = searcher.population.access_values(keep_evals=True)  # (the archive's solutions)
    assert features.shape[0] == 16
    problem.close()


def test_two_objectives_run_under_the_multi_objective_ga():
    problem = VecrlNE(
        "gym::Hopper-v5",
        seed=0,
        measures={"ctrl": "reward_ctrl", "speed": "x_velocity"},
        objectives=[("return", "max"), ("ctrl", "max")],
        initial_bounds=(-0.1, 0.1),
    )
    assert problem.senses == ["max", "max"] and problem.eval_data_length == 2
    ga = GeneticAlgorithm(
        problem,
        popsize=8,
        operators=[
            SimulatedBinaryCrossOver(problem, tournament_size=4, cross_over_rate=1.0, eta=8),
            GaussianMutation(problem, stdev=0.03),
        ],
    )
    ga.run(2)
    evals = ga.population.evals
    assert evals.shape == (8, 4)  # return and ctrl, then the measures ctrl and speed
    torch.testing.assert_close(evals[:, 1], evals[:, 2])
    assert (evals[:, 1] < 0).all()  # MuJoCo's control cost, negated
    problem.close()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(objectives=[("speed", "max")]),
            r"objectives must be a list of .* \(none given: pass measures=\{...\}\); got .speed., which is neither",
        ),
        (dict(measures={"speed": "x"}, objectives=[("speed", "up")]), "got 'up' for 'speed'"),
        (
            dict(measures={"speed": "x"}, objectives=[("return", "max"), ("return", "min")]),
            "got a name twice",
        ),
        (dict(measures={"speed": "x"}, objectives="return"), "objectives must be a list"),
        (dict(measures={"speed": ("x", "avg")}), "per_episode must be one of"),
        (
            dict(measures={"return": "x"}),
            "names a measure 'return', which is VecrlNE's name for the mean return",
        ),
    ],
)
def test_measure_and_objective_mistakes_are_clear(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)", **kwargs)
