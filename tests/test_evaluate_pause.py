"""evaluate stops stepping a sub-env once its row is done, on an env made without an episode budget: the
env's step count follows the rows still running (``vecrl.HostVectorEnv.pause``), and the results are those
of the same call under a budget."""

from __future__ import annotations

from typing import ClassVar

import gymnasium
import torch

import vecrl
from vecrl.compat import GYMNASIUM_1
from vecrl_evaluate import evaluate
from vecrl_policy import Policy

HOPPER = "gym::Hopper-v5" if GYMNASIUM_1 else "gym::Hopper-v4"  # (gymnasium 0.29 has v4)


class CountSteps(gymnasium.Wrapper):
    """Counts the steps its env takes, in a list every copy shares."""

    counts: ClassVar[list[int]] = []

    def step(self, action):
        CountSteps.counts.append(1)
        return super().step(action)


def _rows(policy: Policy, count: int) -> torch.Tensor:
    return torch.randn(count, policy.parameter_length, generator=torch.Generator().manual_seed(0))


def test_done_rows_stop_stepping_without_a_budget():
    policy = Policy("Linear(4, 2)")
    rows = _rows(policy, 12)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8, wrappers=[CountSteps])
    CountSteps.counts.clear()
    result = evaluate(policy, env, rows, seed=3)
    # every step the sub-envs took is one that some row counted
    assert len(CountSteps.counts) == int(result.steps.sum())
    budgeted = vecrl.make_vector_env("gym::CartPole-v1", num_envs=8, num_episodes=1)
    same = evaluate(policy, budgeted, rows, seed=3)
    assert torch.equal(result.total_return, same.total_return)
    assert torch.equal(result.steps, same.steps)


def test_the_env_steps_every_sub_env_again_after_a_full_reset():
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    evaluate(policy, env, _rows(policy, 6), seed=0)
    env.reset(seed=0)
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(torch.zeros(4, dtype=torch.int64))
    assert torch.isfinite(obs).all() and reward.tolist() == [1.0] * 4


def _steps_quiet(env) -> list[bool]:
    """Whether each step of ``env``'s engine from now on left infos out (``empty_info``), in order."""
    seen, original = [], env.unwrapped.step

    def step(action):
        seen.append(env.unwrapped.empty_info)
        return original(action)

    env.unwrapped.step = step
    return seen


def test_infos_are_left_out_only_for_the_call_and_only_where_no_measure_reads_them():
    policy = Policy("Linear(4, 2)")
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4)
    seen = _steps_quiet(env)
    evaluate(policy, env, _rows(policy, 4), seed=0)
    assert seen and all(seen) and not env.unwrapped.empty_info
    hopper = vecrl.make_vector_env(HOPPER, num_envs=2, gym_kwargs={"max_episode_steps": 20})
    walker = Policy("Linear(11, 3)")
    seen = _steps_quiet(hopper)
    result = evaluate(walker, hopper, _rows(walker, 2), seed=0, measures={"x": "x_position"})
    assert seen and not any(seen) and torch.isfinite(result.measures["x"]).all()
