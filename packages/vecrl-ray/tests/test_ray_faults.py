"""RayExecutor's faults on a real local Ray: an actor killed mid-evaluation has its part run again on a new
actor with the result unchanged, a part that fails every time is raised naming its rows and the original
error after max_tries, and one that fails once is simply run again."""

from __future__ import annotations

import sys
from pathlib import Path

import cloudpickle
import gymnasium as gym
import pytest
import ray
import torch
from mid_call import Marks, once_it_exists
from ray.exceptions import RayTaskError
from ray_processes import everything_started_here_ends

import vecrl
from vecrl.checks import SubEnvError
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
from vecrl_ray import EvaluationError, RayExecutor

# The wrapper below is made in the actors from the env's recipe: pickled with their code, as the
# actors cannot import this test module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def in_an_actor() -> bool:
    return ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None


class Fails(gym.Wrapper):
    """CartPole whose step raises in an actor: every time, or only while ``folder`` holds no mark."""

    def __init__(self, env, folder: str, once: bool):
        super().__init__(env)
        self.mark, self.once = Path(folder) / "failed", once

    def step(self, action):
        if in_an_actor() and not (self.once and self.mark.exists()):
            self.mark.touch()
            raise ZeroDivisionError("boom in an actor")
        return self.env.step(action)


@pytest.fixture(scope="module")
def local_ray():
    with everything_started_here_ends():
        ray.init(num_cpus=2, include_dashboard=False)
        try:
            yield
        finally:
            ray.shutdown()


def cartpole(wrapper, **kwargs):
    env = vecrl.make_vector_env(
        "gym::CartPole-v1", num_envs=8, num_episodes=2, wrappers=[lambda env: wrapper(env, **kwargs)]
    )
    policy = Policy("Linear(4, 2)")
    return (
        env,
        policy,
        0.5 * torch.randn(16, policy.parameter_length, generator=torch.Generator().manual_seed(0)),
    )


@pytest.mark.races
def test_an_actor_killed_mid_evaluation_has_its_part_run_again_with_the_result_unchanged(local_ray, tmp_path):
    env, policy, rows = cartpole(Marks, folder=str(tmp_path))
    with RayExecutor(num_actors=2) as executor:
        victim = executor.actors[0]
        started = tmp_path / victim._actor_id.hex()

        with once_it_exists(started, lambda: ray.kill(victim)):
            result = evaluate(policy, env, rows, num_episodes=2, seed=5, executor=executor)
        assert started.exists() and executor.restarts == 1 and victim not in executor.actors
        expected = evaluate(policy, env, rows, num_episodes=2, seed=5)
        assert torch.equal(result.total_return, expected.total_return)  # nothing lost, nothing counted twice
        assert torch.equal(result.episodes, expected.episodes) and torch.equal(result.steps, expected.steps)
        again = evaluate(policy, env, rows, num_episodes=2, seed=5, executor=executor)  # the new actor serves
        assert torch.equal(again.total_return, expected.total_return) and executor.restarts == 1
    env.close()


def test_a_part_that_fails_every_time_is_raised_naming_its_rows_and_the_error(local_ray, tmp_path):
    env, policy, rows = cartpole(Fails, folder=str(tmp_path), once=False)
    good = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)
    with RayExecutor(num_actors=2, max_tries=2) as executor:
        with pytest.raises(
            EvaluationError, match=r"Rows (0 to 7|8 to 15) of the population failed on all 2 tries"
        ) as caught:
            evaluate(policy, env, rows, num_episodes=2, executor=executor)
        error = caught.value
        assert "ZeroDivisionError in step(): boom in an actor" in str(error)
        assert error.rows in (range(0, 8), range(8, 16))
        assert isinstance(error.__cause__, RayTaskError) and isinstance(error.__cause__.cause, SubEnvError)
        assert "boom in an actor" in str(error.__cause__)  # with the actor's traceback
        # the actors are fine: the next evaluation (another env) runs
        assert len(evaluate(policy, good, rows, executor=executor).steps) == 16 and executor.restarts == 0
    env.close()
    good.close()


def test_a_part_that_fails_once_is_run_again(local_ray, tmp_path):
    env, policy, rows = cartpole(Fails, folder=str(tmp_path), once=True)
    with RayExecutor(num_actors=2) as executor:
        result = evaluate(policy, env, rows, num_episodes=2, seed=9, executor=executor)
    assert (tmp_path / "failed").exists()
    assert torch.equal(result.total_return, evaluate(policy, env, rows, num_episodes=2, seed=9).total_return)
    env.close()
