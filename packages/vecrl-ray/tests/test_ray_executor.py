"""RayExecutor on a real local Ray (2 CPUs): the same results as the single-process evaluate on the tasks
users run, actors kept across calls, and clear errors for the mistakes a user makes."""

from __future__ import annotations

import gymnasium
import pytest
import ray
import torch
from gymnasium.spaces import flatdim
from ray_processes import everything_started_here_ends

import vecrl
import vecrl_evaluate
import vecrl_policy
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
from vecrl_ray import RayExecutor


@pytest.fixture(scope="module")
def executor():
    with everything_started_here_ends():
        ray.init(num_cpus=2, include_dashboard=False)
        try:
            with RayExecutor(num_actors=2) as executor:  # joins the Ray started above
                yield executor
            assert ray.is_initialized()  # it did not start Ray, so it leaves it running
        finally:
            ray.shutdown()


def population(policy: Policy, rows: int, seed: int = 0) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(seed))


CASES = {
    # MuJoCo's float64 observations; 40 rows on 16 sub-envs
    "Hopper-v5": (dict(num_envs=16), "Linear(obs, 16) >> Tanh() >> Linear(16, act)", 40, 2),
    # a recurrent policy, reset for exactly the rows whose episode ended
    "CartPole-v1": (dict(num_envs=8), "Linear(obs, 8) >> LSTM(8, act)", 20, 3),
    # Discrete observations (one-hot), slippery: the sub-env seeds decide everything
    "FrozenLake-v1": (dict(num_envs=6, num_episodes=4), "Linear(obs, act)", 11, 4),
}


@pytest.mark.parametrize("env_name", list(CASES))
def test_results_equal_the_single_process_evaluate_for_the_same_seed(executor, env_name):
    env_kwargs, network, rows, episodes = CASES[env_name]
    env = vecrl.make_vector_env(f"gym::{env_name}", **env_kwargs)
    space = env.single_action_space
    act = space.n if isinstance(space, gymnasium.spaces.Discrete) else space.shape[0]
    policy = Policy(network, obs=flatdim(env.single_observation_space), act=int(act))
    parameters = population(policy, rows)
    # a row's result depends on (seed, row) alone: the same on an env of another width, in one process
    other = vecrl.make_vector_env(
        f"gym::{env_name}", **{**env_kwargs, "num_envs": env_kwargs["num_envs"] // 2 + 1}
    )
    try:
        measures = {"first": vecrl_evaluate.Measure(last_position, "max")}
        expected = evaluate(policy, other, parameters, num_episodes=episodes, seed=7, measures=measures)
        result = evaluate(
            policy, env, parameters, num_episodes=episodes, seed=7, executor=executor, measures=measures
        )
    finally:
        env.close()
        other.close()
    assert torch.equal(result.total_return, expected.total_return)
    assert torch.equal(result.episodes, expected.episodes)
    assert torch.equal(result.steps, expected.steps)
    assert (result.episodes == episodes).all()
    assert torch.equal(result.episode_measures["first"], expected.episode_measures["first"])


def test_actors_are_kept_across_calls_and_serve_other_envs_and_policies(executor):
    actors = executor.actors
    cartpole = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    pendulum = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=4)
    small, large = Policy("Linear(4, 2)"), Policy("Linear(3, 8) >> Tanh() >> Linear(8, 1)")
    try:
        for env, policy in [(cartpole, small), (pendulum, large), (cartpole, small), (cartpole, large)]:
            if policy is large and env is cartpole:
                with pytest.raises(ValueError, match="cannot read this env's observations"):
                    evaluate(policy, env, population(policy, 5), executor=executor)
                continue
            parameters = population(policy, 5)
            expected = evaluate(policy, env, parameters, seed=1)
            assert torch.equal(
                evaluate(policy, env, parameters, seed=1, executor=executor).steps, expected.steps
            )
        # fewer rows than actors: one part, one actor
        one = evaluate(small, cartpole, population(small, 1), seed=2, executor=executor)
        assert torch.equal(one.steps, evaluate(small, cartpole, population(small, 1), seed=2).steps)
    finally:
        cartpole.close()
        pendulum.close()
    assert executor.actors == actors and executor.restarts == 0


def test_a_users_mistakes_get_errors_that_say_what_to_do(executor):
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    try:
        with pytest.raises(ValueError, match="num_workers=2 or executor=RayExecutor.*not both"):
            evaluate(policy, env, population(policy, 4), num_workers=2, executor=executor)
    finally:
        env.close()
    plain = vecrl.TorchWrapper(gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2))
    with pytest.raises(ValueError, match="needs an env made by vecrl.make_vector_env"):
        evaluate(policy, plain, population(policy, 4), executor=executor)
    plain.close()
    with pytest.raises(
        ValueError, match=r"1 actors of 1 CPU\(s\) each need 1 CPUs, but the Ray cluster has 0 free \(of 2\)"
    ):
        RayExecutor(num_actors=1)  # the executor above holds both CPUs
    for wrong in [0, 1.5, True]:
        with pytest.raises(ValueError, match="num_actors must be None"):
            RayExecutor(num_actors=wrong)
    with pytest.raises(ValueError, match="max_tries must be a positive int"):
        RayExecutor(num_actors=1, max_tries=0)
    assert ray.is_initialized() and executor.restarts == 0  # nothing above touched the running Ray


def test_an_actor_steps_its_env_in_worker_processes_when_the_recipe_asks(executor):
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=8, num_episodes=1, num_workers=2)
    policy = Policy("Linear(11, 3)")
    parameters = population(policy, 12)
    try:
        result = evaluate(policy, env, parameters, seed=2, executor=executor)
        expected = evaluate(policy, env, parameters, seed=2)
    finally:
        env.close()
    assert torch.equal(result.total_return, expected.total_return) and torch.equal(
        result.steps, expected.steps
    )


def test_observation_statistics_from_the_actors_equal_those_of_one_process(executor):
    from vecrl_policy import ObsNorm

    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=8, num_episodes=1)
    policy = Policy("Linear(11, 3)")
    parameters = population(policy, 20)
    alone, spread = ObsNorm(), ObsNorm()
    settings = dict(seed=5, decrease_rewards_by=1.0, alive_bonus_schedule=(5, 1.0))
    try:
        for _ in range(2):  # the second call normalizes with what the first saw
            expected = evaluate(policy, env, parameters, obs_norm=alone, **settings)
            result = evaluate(policy, env, parameters, obs_norm=spread, executor=executor, **settings)
            assert torch.equal(result.total_return, expected.total_return)
            assert spread.count == alone.count
            torch.testing.assert_close(spread.mean, alone.mean, rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(spread.std, alone.std, rtol=1e-12, atol=1e-12)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("", "names no cluster"),
        (":6379", r"is not 'host:port' \(host '', port '6379'\)"),
        ("127.0.0.1", "has no port: give 'host:port', e.g. '127.0.0.1:6379'"),
        ("http://x", "has the scheme 'http://'; Ray takes 'host:port' or 'ray://host:port'"),
        ("127.0.0.1:99999", "is not 'host:port'"),
    ],
)
def test_an_address_that_names_no_cluster_is_refused_before_ray_starts(address, words):
    with pytest.raises(ValueError, match=words):
        RayExecutor(1, address=address)


def test_a_brax_population_on_actors_gets_the_numbers_of_the_fused_program(executor):
    """Several episodes per row, action noise, statistics, shaping and an LSTM: each row's later episodes
    and noise follow its seed alone (vecrl_evaluate.randomness), so the actors, each running its part as a
    compiled program, and this process's stepped loop get the numbers of one compiled program here."""
    pytest.importorskip("vecrl_brax")
    env = vecrl.make_vector_env("brax::fast", num_envs=4, num_episodes=3, episode_length=9)
    policy = Policy("Linear(2, 8) >> LSTM(8, 4) >> Linear(4, 1)")
    parameters = population(policy, 10)
    # measures too: a function of the step's batch, reduced per episode (vecrl_evaluate.measures)
    measures = {"x": vecrl_evaluate.Measure(last_position, "last"), "effort": (effort, "sum")}
    options = dict(seed=3, num_episodes=3, action_noise_stdev=0.1, decrease_rewards_by=0.5, measures=measures)
    here, there, stepped = (vecrl_policy.ObsNorm() for _ in range(3))
    try:
        expected = evaluate(policy, env, parameters, obs_norm=here, **options)
        result = evaluate(policy, env, parameters, obs_norm=there, executor=executor, **options)
        stepping = evaluate(
            policy, env, parameters, obs_norm=stepped, executor=executor, fused=False, **options
        )
    finally:
        env.close()
    assert (expected.path, result.path, stepping.path) == ("fused", "fused", "stepped")
    for other in (result, stepping):
        assert torch.equal(other.episodes, expected.episodes) and torch.equal(other.steps, expected.steps)
        torch.testing.assert_close(other.total_return, expected.total_return, rtol=1e-5, atol=1e-4)
        for name in measures:
            torch.testing.assert_close(
                other.episode_measures[name], expected.episode_measures[name], rtol=1e-5, atol=1e-4
            )
    assert there.count == here.count == stepped.count


# (lambdas: cloudpickle sends them by value; a function of this module would be sent by name, and the actors
# cannot import a test module)
last_position = lambda observation, action, reward: observation[:, 0]  # noqa: E731
effort = lambda observation, action, reward: (action**2).sum(-1)  # noqa: E731


def test_randomized_params_give_each_row_the_same_result_on_ray(executor):
    # domain randomization: a row's masses and lengths are drawn from its seed and episode, wherever it runs
    randomize = vecrl.randomize.scale({"masspole": (0.5, 4.0), "length": (0.5, 2.0)})
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)
    other = vecrl.make_vector_env("gym::CartPole-v1", num_envs=3)
    policy = Policy("Linear(4, 8) >> Tanh() >> Linear(8, 2)")
    parameters = population(policy, 21)
    try:
        expected = evaluate(policy, other, parameters, num_episodes=3, seed=5, randomize=randomize)
        result = evaluate(
            policy, env, parameters, num_episodes=3, seed=5, randomize=randomize, executor=executor
        )
        plain = evaluate(policy, other, parameters, num_episodes=3, seed=5)
    finally:
        env.close()
        other.close()
    assert torch.equal(result.total_return, expected.total_return)
    assert torch.equal(result.steps, expected.steps)
    assert not torch.equal(result.total_return, plain.total_return)  # the params did change the episodes
