"""A script written for EvoTorch's VecGymNE runs on VecrlNE by changing the class name: VecGymNE's keywords,
its network conventions (``@pass_info``, a module class that takes no sizes) and its problem's methods."""

from __future__ import annotations

import pytest
import torch
from evotorch.algorithms import PGPE
from evotorch.decorators import pass_info
from evotorch.neuroevolution import VecGymNE
from torch import nn

from vecrl_evotorch import VecrlNE


@pass_info
class Net(nn.Module):
    def __init__(self, obs_length, act_length, obs_shape, act_shape, obs_space, act_space, **kwargs):
        super().__init__()
        self.lin = nn.Linear(obs_length, act_length)

    def forward(self, x):
        return torch.tanh(self.lin(x))


class NoSizes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(x)


def vecgymne_users_script(Problem: type, **parallel: object) -> dict[str, object]:
    """What a VecGymNE user writes (EvoTorch's example, shortened), with ``Problem`` in place of VecGymNE."""
    problem = Problem(
        env="gym::Pendulum-v1",
        network=Net,
        observation_normalization=True,
        decrease_rewards_by=0.0,
        max_num_envs=16,
        device="cpu",
        num_subbatches=2,
        **parallel,
    )
    searcher = PGPE(problem, popsize=16, center_learning_rate=0.05, stdev_learning_rate=0.1, stdev_init=0.1)
    searcher.run(2)
    stats = problem.get_observation_stats()
    seen = {
        "stats": (
            stats.count > 0,
            tuple(stats.stdev.shape),
            tuple(stats.sum.shape),
            tuple(stats.sum_of_squares.shape),
        ),
        "layer": isinstance(stats.to("cpu").to_layer(), nn.Module),
        "interactions": searcher.status["total_interaction_count"] > 0,
    }
    problem.set_interaction_count(5)
    problem.set_episode_count(3)
    seen["counts"] = (
        problem.interaction_count,
        problem.episode_count,
        problem.max_num_envs,
        str(problem.network_device),
    )
    problem.update_observation_stats(problem.pop_observation_stats())
    seen["policy"] = isinstance(problem.to_policy(searcher.status["center"]), nn.Module)
    seen["no sizes"] = Problem("gym::Pendulum-v1", NoSizes).solution_length
    with pytest.raises(Exception):  # noqa: B017  (each raises its own kind)
        Problem("gym::Pendulum-v1", NoSizes).get_observation_stats()
    seen["env made"] = problem.get_env() is not None
    if problem.num_actors > 0:
        problem.kill_actors()
    return seen


def test_a_vecgymne_script_runs_on_vecrlne_by_changing_the_class_name():
    assert vecgymne_users_script(VecrlNE) == vecgymne_users_script(VecGymNE)


def test_num_actors_is_the_number_of_evaluation_processes():
    seen = vecgymne_users_script(VecrlNE, num_actors=2)  # (on VecGymNE: two Ray actors)
    assert seen["counts"] == (5, 3, 16, "cpu")


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        (dict(num_gpus_per_actor=1), TypeError, "executor=vecrl_ray.RayExecutor"),
        (dict(actor_config={"num_cpus": 1}), TypeError, "executor=vecrl_ray.RayExecutor"),
        (dict(num_actors="num_gpus"), ValueError, "num_actors must be an int"),
        (dict(num_actors=2, num_workers=2), ValueError, "not both"),
        (dict(num_envs=4, max_num_envs=8), ValueError, "not both"),
        (dict(num_subbatches=2, subbatch_size=4), ValueError, "not both"),
        (dict(device="cuda:7"), ValueError, "no device this torch can run networks on"),
        (dict(max_num_envs=0), ValueError, "num_envs"),
    ],
)
def test_what_has_no_vecrl_meaning_is_refused_naming_the_vecrl_way(kwargs, error, words):
    with pytest.raises(error, match=words):
        VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)", **kwargs)


def test_num_actors_on_a_jitted_env_is_refused_in_the_words_the_user_wrote():
    pytest.importorskip("vecrl_brax")
    with pytest.raises(ValueError) as refused:
        VecrlNE("brax::fast", "Linear(obs_length, act_length)", num_actors=2)
    said = str(refused.value)
    assert said.startswith(
        "VecrlNE(num_actors=2) evaluates in 2 worker processes, and evaluate(num_workers=2)"
    )
    assert said.endswith("leave num_actors out.")
