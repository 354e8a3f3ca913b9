"""The Executor seam of evaluate: a population split into parts that carry their rows' seeds, run by an executor written in a few lines from vecrl_evaluate.executor's parts (what
vecrl-ray's RayExecutor and the worker processes are built from), on gym and brax envs."""

from __future__ import annotations

from collections.abc import Sequence

import cloudpickle
import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.executor import Evaluation, Part, PartRunner, PartSender, split_population
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy


class OneAtATime:
    """Runs each part on its own PartRunner, one after the other, every message pickled and unpickled as
    it would be to reach another process."""

    def __init__(self, num_parts: int) -> None:
        self.num_parts = num_parts
        # one sender per runner: it leaves out what its runner already holds
        self.workers = [(PartSender(), PartRunner()) for _ in range(num_parts)]
        self.seen: list[Part] = []

    def run(self, evaluation: Evaluation, parts: Sequence[Part]) -> list[tuple[torch.Tensor, ...]]:
        self.seen = list(parts)
        results = []
        for (sender, runner), part in zip(self.workers, parts, strict=False):
            message = cloudpickle.loads(
                cloudpickle.dumps(sender.message(evaluation, part, evaluation.env.recipe))
            )
            results.append(tuple(torch.from_numpy(array) for array in runner.run(message)))
        return results

    def close(self) -> None:
        for _, runner in self.workers:
            runner.close()


def test_parts_are_near_equal_runs_of_rows_each_with_its_rows_seeds():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    seeds = row_seeds(20, 10)
    parts = split_population(env, 10, seeds, num_parts=3)
    assert [(p.start, p.stop, p.num_envs) for p in parts] == [(0, 4, 4), (4, 7, 3), (7, 10, 3)]
    assert [p.seeds.tolist() for p in parts] == [
        seeds[0:4].tolist(),
        seeds[4:7].tolist(),
        seeds[7:10].tolist(),
    ]
    assert [p.seeds for p in split_population(env, 10, None, num_parts=3)] == [None, None, None]
    (whole,) = split_population(env, 10, seeds, num_parts=1)
    assert (whole.start, whole.stop, whole.num_envs, whole.seeds.tolist()) == (0, 10, 4, seeds.tolist())
    assert len(split_population(env, 2, seeds[:2], num_parts=3)) == 2  # never a part without rows
    env.close()


@pytest.mark.parametrize("num_parts", [2, 3, 7])
@pytest.mark.parametrize(
    ("env_id", "network"),
    [
        ("CartPole-v1", "Linear(4, 8) >> LSTM(8, 2)"),  # recurrent: state reset for exactly the ended rows
        ("Hopper-v5", "Linear(11, 3)"),  # float64 rewards: summed the same whatever the part's width
    ],
)
def test_an_executor_gets_the_results_of_the_single_process_evaluate_on_gym(num_parts, env_id, network):
    env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=4, num_episodes=2)
    policy = Policy(network)
    rows = 0.5 * torch.randn(10, policy.parameter_length, generator=torch.Generator().manual_seed(1))
    executor = OneAtATime(num_parts)
    try:
        result = evaluate(policy, env, rows, num_episodes=2, seed=3, executor=executor)
        expected = evaluate(policy, env, rows, num_episodes=2, seed=3)
    finally:
        executor.close()
        env.close()
    assert len(executor.seen) == num_parts
    assert torch.equal(result.total_return, expected.total_return) and torch.equal(
        result.steps, expected.steps
    )


def test_a_brax_population_split_anywhere_gets_the_results_of_the_single_process_evaluate():
    env = vecrl.make_vector_env("brax::fast", num_envs=4, episode_length=7, num_episodes=1)
    policy = Policy("Linear(2, 1)")
    rows = torch.randn(10, policy.parameter_length, generator=torch.Generator().manual_seed(2))
    executor = OneAtATime(3)
    try:
        result = evaluate(policy, env, rows, seed=5, executor=executor)
        expected = evaluate(policy, env, rows, seed=5)
    finally:
        executor.close()
        env.close()
    # each row is seeded alone (a key of its own per sub-env), so parts need not be whole batches
    assert [(p.start, p.stop, p.num_envs) for p in executor.seen] == [(0, 4, 4), (4, 7, 3), (7, 10, 3)]
    # brax runs each part on an env of its width, whose XLA reductions may round otherwise
    torch.testing.assert_close(result.total_return, expected.total_return)
    assert torch.equal(result.steps, expected.steps)


def test_num_workers_and_an_executor_together_are_refused():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match="Give num_workers=2 or executor=.*not both"):
        evaluate(policy, env, torch.zeros(4, policy.parameter_length), num_workers=2, executor=OneAtATime(2))
    env.close()


def test_something_that_is_not_an_executor_is_refused_saying_what_is_expected():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    policy = Policy("Linear(4, 2)")
    with pytest.raises(TypeError, match="executor must be a vecrl_evaluate Executor .* got 'ray'"):
        evaluate(policy, env, torch.zeros(4, policy.parameter_length), executor="ray")
    env.close()
