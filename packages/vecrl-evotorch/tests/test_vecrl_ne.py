"""VecrlNE driven by EvoTorch's own searchers on real envs: it learns, it equals vecrl's evaluate, it
pickles, and its mistakes are clear errors."""

from __future__ import annotations

import pickle

import pytest
import torch
from evotorch import SolutionBatch
from evotorch.algorithms import CEM, CMAES, PGPE, SNES

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evotorch import ClipActions, VecrlNE
from vecrl_policy import Policy
from vecrl_policy.normalization import NormalizedNet

NET = "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)"


def pgpe(problem: VecrlNE, popsize: int = 32) -> PGPE:
    return PGPE(
        problem,
        popsize=popsize,
        center_learning_rate=0.1,
        stdev_learning_rate=0.1,
        stdev_init=0.1,
        optimizer="clipup",
        optimizer_config={"max_speed": 0.2},
        ranking_method="centered",
    )


def test_pgpe_learns_cartpole_with_observation_normalization():
    problem = VecrlNE("gym::CartPole-v1", NET, observation_normalization=True, seed=0)
    searcher = pgpe(problem, popsize=64)
    best = 0.0
    for _ in range(40):
        searcher.step()
        best = max(best, searcher.status["mean_eval"])
        if best >= 300:
            break
    assert best >= 300, f"PGPE reached a mean return of only {best} in 40 generations"
    status = searcher.status
    assert status["total_interaction_count"] == problem.interaction_count > 0
    assert status["total_episode_count"] == problem.episode_count == 64 * (searcher.step_count)
    assert status["obs_norm_count"] == problem.interaction_count  # every step's observation counted once
    problem.close()


@pytest.mark.parametrize("searcher", [SNES, CMAES, CEM])
def test_evotorchs_searchers_drive_it_unchanged(searcher):
    problem = VecrlNE("gym::Pendulum-v1", "Linear(obs_length, act_length)", num_envs=8, seed=1)
    kwargs = {"stdev_init": 0.5}
    if searcher is CEM:
        kwargs.update(popsize=16, parenthood_ratio=0.5)
    elif searcher is SNES:
        kwargs.update(popsize=16)
    instance = searcher(problem, **kwargs)
    instance.run(2)
    assert torch.isfinite(torch.as_tensor(instance.status["pop_best_eval"]))
    problem.close()


def test_an_evaluation_equals_vecrls_evaluate_for_the_same_seed():
    settings = dict(decrease_rewards_by=1.0, alive_bonus_schedule=(10, 1.0), action_noise_stdev=0.05)
    problem = VecrlNE("gym::Hopper-v5", NET, num_envs=8, seed=11, **settings)
    batch = SolutionBatch(problem, popsize=12)
    batch.access_values()[:] = 0.3 * torch.randn(
        12, problem.solution_length, generator=torch.Generator().manual_seed(0)
    )
    problem.evaluate(batch)
    policy = Policy(NET, obs_length=11, act_length=3)
    env = problem._env_for(12)
    expected = evaluate(policy, env, batch.values.as_subclass(torch.Tensor), seed=11, **settings)
    assert torch.equal(batch.evals[:, 0], expected.mean_return.float())
    assert problem.interaction_count == int(expected.steps.sum())
    problem.close()


def test_worker_processes_give_the_same_fitness_and_statistics():
    alone = VecrlNE("gym::CartPole-v1", NET, num_envs=8, observation_normalization=True, seed=3)
    split = VecrlNE(
        "gym::CartPole-v1", NET, num_envs=8, observation_normalization=True, seed=3, num_workers=2
    )
    values = 0.5 * torch.randn(16, alone.solution_length, generator=torch.Generator().manual_seed(1))
    try:
        fitness = []
        for problem in (alone, split):
            for _ in range(2):  # the second generation normalizes with the first's statistics
                batch = SolutionBatch(problem, popsize=16)
                batch.access_values()[:] = values
                problem.evaluate(batch)
            fitness.append(batch.evals[:, 0].clone())
        assert torch.equal(fitness[0], fitness[1])
        assert alone.obs_norm.count == split.obs_norm.count
        torch.testing.assert_close(alone.obs_norm.mean, split.obs_norm.mean, rtol=1e-12, atol=1e-12)
    finally:
        alone.close()
        split.close()


@pytest.mark.parametrize(
    ("env", "config"),
    [
        ("brax::inverted_pendulum", {"episode_length": 20}),
        ("envpool::CartPole-v1", {}),
    ],
)
def test_jitted_and_cpp_backends_work_as_the_gym_one(env, config):
    pytest.importorskip(
        f"vecrl_{env.split('::')[0]}"
    )  # installed by `nox -s tests`, not by `nox -s evotorch`
    problem = VecrlNE(env, NET, env_config=config, num_envs=8, observation_normalization=True, seed=0)
    searcher = pgpe(problem, popsize=8)
    searcher.run(2)
    assert problem.interaction_count > 0 and problem.obs_norm.count == problem.interaction_count
    problem.close()


def test_it_pickles_and_carries_on_counting():
    problem = VecrlNE("gym::CartPole-v1", NET, num_envs=4, observation_normalization=True, seed=2)
    searcher = pgpe(problem, popsize=8)
    searcher.run(1)
    twin = pickle.loads(pickle.dumps(problem))
    assert twin._env is None and twin.interaction_count == problem.interaction_count
    assert twin.obs_norm.count == problem.obs_norm.count
    batch = SolutionBatch(twin, popsize=4)
    twin.evaluate(batch)  # makes its env again
    assert twin.interaction_count > problem.interaction_count
    problem.close()
    twin.close()


def test_the_solution_becomes_a_standalone_policy(tmp_path):
    problem = VecrlNE("gym::Pendulum-v1", NET, num_envs=4, observation_normalization=True, seed=0)
    searcher = pgpe(problem, popsize=8)
    searcher.run(1)
    center = searcher.status["center"]
    net = problem.to_policy(center)
    assert isinstance(net, ClipActions) and isinstance(net.net, NormalizedNet)
    action = net(torch.randn(3) * 100)
    assert action.shape == (1,) and -2.0 <= float(action) <= 2.0
    path = tmp_path / "best.pickle"
    problem.save_solution(center, path)
    with open(path, "rb") as file:
        saved = pickle.load(file)
    assert saved["env"] == "gym::Pendulum-v1" and saved["architecture"] == NET
    assert saved["obs_norm"]["count"] == problem.obs_norm.count
    x = torch.randn(3)
    torch.testing.assert_close(saved["policy"](x), net(x))
    assert isinstance(problem.make_net(center), torch.nn.Module)
    problem.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(env=3), TypeError, "env as a name for vecrl.make_vector_env"),
        (dict(num_episodes=0), ValueError, "num_episodes must be a positive int"),
        (dict(num_envs=0), ValueError, "num_envs"),
        (dict(observation_normalization="yes"), TypeError, "observation_normalization must be True or False"),
        (dict(action_noise_stdev=0.1), ValueError, "adds noise to continuous actions"),
        (dict(decrease_rewards_by="1"), ValueError, "decrease_rewards_by must be a finite number"),
        (dict(num_workers=2, executor=object()), ValueError, "not both"),
        (dict(executor=object()), TypeError, "executor must be a vecrl_evaluate Executor"),
        (dict(seed=-1), ValueError, "seed must be None or an int >= 0"),
        (dict(num_workers=True), ValueError, "num_workers must be None or a positive int"),
        (
            dict(env="gym::CartPol-v1"),
            ValueError,
            "no environment 'CartPol-v1'. Did you mean 'CartPole-v1'\\?",
        ),
        # (raw errors of make_vector_env, torch's seeding and EvoTorch's unpacking before)
        (
            dict(env_config={"num_envs": 3}),
            ValueError,
            r"env_config holds num_envs.*VecrlNE\(\.\.\., num_envs=",
        ),
        (dict(env_config={"num_episodes": 2}), ValueError, "env_config holds num_episodes"),
        (dict(env_config=[1, 2]), TypeError, "env_config must be a dict of keyword arguments"),
        (dict(seed=2**64), ValueError, r"seed must be None or an int >= 0 and below 2\*\*63"),
        (dict(initial_bounds="x"), ValueError, r"initial_bounds must be \(low, high\)"),
        (dict(initial_bounds=(1.0, -1.0)), ValueError, "low <= high"),
        (dict(randomize={"masspole": [1.0]}), TypeError, "VecrlNE's randomize must be a sampler"),
        (dict(randomize=vecrl.randomize.scale({"mass": (1, 2)})), ValueError, "scale\\(\\) names 'mass'"),
    ],
)
def test_mistakes_are_clear_errors(kwargs, error, message):
    arguments = {"env": "gym::CartPole-v1", "network": NET, **kwargs}
    with pytest.raises(error, match=message):
        VecrlNE(**arguments)


def test_randomized_params_are_drawn_per_solution_and_episode_and_reproduce():
    randomize = vecrl.randomize.scale({"masspole": (0.5, 4.0), "length": (0.5, 2.0)})
    runs = []
    for num_envs in (4, 16):
        problem = VecrlNE(
            "gym::CartPole-v1", NET, num_envs=num_envs, num_episodes=2, seed=3, randomize=randomize
        )
        batch = SolutionBatch(problem, popsize=16)
        problem.evaluate(batch)
        runs.append(batch.evals.flatten().clone())
        problem.close()
    assert torch.equal(runs[0], runs[1])


def test_common_random_numbers_score_a_population_from_the_same_starts():
    problem = VecrlNE("gym::CartPole-v1", NET, num_envs=4, seed=1, common_random_numbers=True)
    center = torch.randn(problem.solution_length, generator=torch.Generator().manual_seed(0))
    batch = SolutionBatch(problem, popsize=6, empty=True)
    batch.set_values(center.expand(6, -1))
    problem.evaluate(batch)
    evals = batch.evals.flatten()
    assert (evals == evals[0]).all()
    problem.close()
