"""The ``pettingzoo::`` backend: rows are (world, agent) seats; worlds end, reset, are budgeted and seeded as
wholes; an agent that leaves is masked until its world ends; agents' spaces are padded alike or refused; worker
processes step shares of the worlds with the same numbers, and leave nothing running."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Discrete
from pettingzoo import ParallelEnv

import vecrl
from vecrl.testing import no_process_left
from vecrl_pettingzoo import PettingZooVectorEnv

pytest.importorskip("mpe2")


class Relay(ParallelEnv):
    """Two agents counting their steps: the runner (observing 2 numbers) leaves, terminated, after
    ``runner_steps``; the walker (observing 1) is truncated after ``walker_steps``, which ends the world.
    Each is rewarded its action plus its step count."""

    metadata: ClassVar[dict[str, Any]] = {"name": "relay_v0"}

    def __init__(self, runner_steps: int = 2, walker_steps: int = 4, walker_actions: int = 3) -> None:
        self.possible_agents = ["runner", "walker"]
        self.limits = {"runner": runner_steps, "walker": walker_steps}
        self.walker_actions = walker_actions
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> Box:
        return Box(0.0, 10.0, (2 if agent == "runner" else 1,), np.float32)

    def action_space(self, agent: str) -> Discrete:
        return Discrete(3 if agent == "runner" else self.walker_actions)

    def _observations(self) -> dict[str, np.ndarray]:
        return {
            agent: np.full(self.observation_space(agent).shape, self.time + self.start, np.float32)
            for agent in self.agents
        }

    def reset(self, seed=None, options=None):
        self.agents = list(self.possible_agents)
        self.time = 0
        self.start = 0 if seed is None else seed % 5
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions):
        assert set(actions) == set(self.agents), (actions, self.agents)  # (a left agent gets no action)
        self.time += 1
        rewards = {agent: float(actions[agent] + self.time) for agent in self.agents}
        terminations = {agent: agent == "runner" and self.time >= self.limits[agent] for agent in self.agents}
        truncations = {agent: agent == "walker" and self.time >= self.limits[agent] for agent in self.agents}
        observations = self._observations()
        self.agents = [a for a in self.agents if not (terminations[a] or truncations[a])]
        return observations, rewards, terminations, truncations, {agent: {} for agent in observations}


def relay(num_envs: int = 4, **options) -> PettingZooVectorEnv:
    return PettingZooVectorEnv(Relay, num_envs, **options)


def test_rows_are_world_major_seats_with_each_agent_s_observation_padded_with_zeros():
    env = relay(6)
    observation, info = env.reset(seed=[3, 3, 4, 4, 0, 0])
    assert (env.num_worlds, env.agents) == (3, ["runner", "walker"])
    assert info["world"].tolist() == [0, 0, 1, 1, 2, 2] and info["agent"].tolist() == [0, 1, 0, 1, 0, 1]
    assert env.single_observation_space == Box(0.0, 10.0, (2,), np.float32)
    # each world seeded by its first row's seed; the walker's second number is padding
    assert observation.tolist() == [[3, 3], [3, 0], [4, 4], [4, 0], [0, 0], [0, 0]]


def test_an_agent_that_leaves_is_masked_until_its_world_ends_then_every_row_ends():
    env = relay(2, autoreset_mode="disabled")
    env.reset()
    seen = []
    for _ in range(4):
        observation, reward, terminated, truncated, info = env.step(np.array([1, 2]))
        seen.append(
            (
                observation.tolist(),
                reward.tolist(),
                terminated.tolist(),
                truncated.tolist(),
                info["active"].tolist(),
            )
        )
    assert seen == [
        ([[1, 1], [1, 0]], [2.0, 3.0], [False, False], [False, False], [True, True]),
        ([[2, 2], [2, 0]], [3.0, 4.0], [False, False], [False, False], [False, True]),  # the runner leaves
        ([[0, 0], [3, 0]], [0.0, 5.0], [False, False], [False, False], [False, True]),  # masked: zeros, 0
        ([[0, 0], [4, 0]], [0.0, 6.0], [True, False], [False, True], [False, False]),  # the world ends
    ]


def test_a_world_autoresets_as_a_whole_and_its_budget_is_counted_per_world():
    env = relay(4, num_episodes=1)
    env.reset()
    returns = np.zeros(4)
    for _ in range(6):
        _, reward, *_ = env.step(np.array([0, 0, 0, 0]))
        returns += np.nan_to_num(reward)
    assert returns.tolist() == [1 + 2, 1 + 2 + 3 + 4] * 2  # one episode each, then NaN rows
    assert np.isnan(env.step(np.zeros(4, np.int64))[1]).all()
    same = relay(4)  # same_step: each world's next episode starts at the step its last one ended
    same.reset()
    for _ in range(4):
        observation, _, _, truncated, info = same.step(np.zeros(4, np.int64))
    assert truncated.tolist() == [False, True] * 2 and info["active"].all()
    assert observation.tolist() == [[0, 0], [0, 0]] * 2 and info["final_obs"][1].tolist() == [4, 0]


def test_a_reset_mask_that_splits_a_world_is_refused_before_anything_and_whole_worlds_reset_alone():
    env = relay(4, autoreset_mode="disabled")
    env.reset()
    env.step(np.zeros(4, np.int64))
    with pytest.raises(ValueError, match=r"reset_mask \[True, False, False, False\] splits world\(s\) \[0\]"):
        env.reset(options={"reset_mask": np.array([True, False, False, False])})
    env.step(np.zeros(4, np.int64))  # (refused before anything ran: the env steps on)
    mask = np.array([False, False, True, True])
    observation, _ = env.reset(seed=[None, None, 2, 2], options={"reset_mask": mask})
    assert observation.tolist() == [
        [2, 2],
        [2, 0],
        [2, 2],
        [2, 0],
    ]  # (world 0 two steps on; world 1 seeded 2)


def test_the_same_seeds_and_actions_give_the_same_worlds(seed=7):
    runs = []
    for _ in range(2):
        env = vecrl.make_vector_env("pettingzoo::mpe2.simple_tag_v3", num_envs=8, max_cycles=6)
        actions = torch.Generator().manual_seed(0)
        observation, _ = env.reset(seed=seed)
        trace = [observation]
        for _ in range(8):
            observation, reward, *_ = env.step(torch.randint(0, 5, (8,), generator=actions))
            trace += [observation, reward]
        runs.append(torch.cat([t.flatten() for t in trace]))
        env.close()
    assert torch.equal(runs[0], runs[1])
    # the prey (agent_0) observes 14 numbers of the predators' 16: zeros after them
    assert (trace[-2].reshape(2, 4, 16)[:, 3, 14:] == 0).all()


def test_the_mistakes_are_one_clear_line_each():
    with pytest.raises(ValueError, match=r"num_envs must be a positive multiple of the 2 agents.*num_envs=2"):
        relay(3)
    with pytest.raises(ValueError, match=r"num_envs must be a positive int .* got 'x'"):
        relay("x")
    with pytest.raises(ValueError, match="the agents' action spaces differ"):
        PettingZooVectorEnv(functools.partial(Relay, walker_actions=4), 2)
    with pytest.raises(ValueError, match="needs num_envs: its rows are the agents"):
        vecrl.make_vector_env("pettingzoo::mpe2.simple_spread_v3")
    with pytest.raises(ModuleNotFoundError, match="no module 'mpe3' is installed"):
        vecrl.make_vector_env("pettingzoo::mpe3.simple_spread_v3", num_envs=3)
    with pytest.raises(ValueError, match="has no parallel_env"):
        vecrl.make_vector_env("pettingzoo::mpe2", num_envs=3)
    from mpe2 import simple_spread_v3

    with pytest.raises(TypeError, match="not a PettingZoo ParallelEnv: give the module's parallel_env"):
        PettingZooVectorEnv(simple_spread_v3.env, 3)  # (the AEC form)
    with pytest.raises(TypeError, match="does not take"):
        vecrl.make_vector_env("pettingzoo::mpe2.simple_spread_v3", num_envs=3, device="cuda")
    with pytest.raises(ValueError, match="num_workers must be None .* or a positive int .* got 0"):
        vecrl.make_vector_env("pettingzoo::mpe2.simple_spread_v3", num_envs=3, num_workers=0)


def rollout(env: Any, steps: int, seed: int) -> list[Any]:
    """Everything ``env`` returns over a seeded reset, ``steps`` random steps and a masked reset of world 1."""
    actions = torch.Generator().manual_seed(seed)
    seen = list(env.reset(seed=seed))
    for _ in range(steps):
        seen.extend(env.step(torch.randint(0, 3, (env.num_envs,), generator=actions)))
    mask = torch.zeros(env.num_envs, dtype=torch.bool)
    seats = env.unwrapped.seats_per_world
    mask[seats : 2 * seats] = True
    seen.extend(env.reset(seed=seed + 1, options={"reset_mask": mask}))
    return seen


@pytest.mark.parametrize("autoreset_mode", ["next_step", "same_step"])
def test_worker_processes_step_shares_of_the_worlds_with_the_same_numbers(autoreset_mode):
    with no_process_left():
        made = [
            vecrl.make_vector_env(
                "pettingzoo::mpe2.simple_tag_v3",
                num_envs=20,
                max_cycles=4,
                num_episodes=2,
                num_workers=workers,
                autoreset_mode=autoreset_mode,
            )
            for workers in (None, 2, 3)
        ]
        runs = [rollout(env, 11, seed=5) for env in made]
        for env in made:
            env.close()
    for run in runs[1:]:  # (infos too: world, agent, active, final observations and infos)
        assert len(run) == len(runs[0])
        for ours, theirs in zip(runs[0], run, strict=True):
            assert same(ours, theirs)


def same(ours: Any, theirs: Any) -> bool:
    """Whether two results (tensors, arrays, dicts of them) hold the same values, NaN equal to NaN."""
    if isinstance(ours, dict):
        return ours.keys() == theirs.keys() and all(same(ours[key], theirs[key]) for key in ours)
    return torch.equal(*(torch.nan_to_num(torch.as_tensor(value)) for value in (ours, theirs)))


def test_agents_that_leave_are_masked_in_worker_processes_too():
    alone, shared = relay(6), PettingZooVectorEnv(Relay, 6, num_workers=2)
    for env in (alone, shared):
        env.reset(seed=[3, 3, 4, 4, 0, 0])
    for _ in range(5):
        ours, theirs = alone.step(np.ones(6, np.int64)), shared.step(np.ones(6, np.int64))
        for a, b in zip(ours[:4], theirs[:4], strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(ours[4]["active"], theirs[4]["active"])
    alone.close()
    shared.close()


def test_a_worker_that_dies_is_named_and_close_ends_the_rest():
    with no_process_left():
        env = vecrl.make_vector_env(
            "pettingzoo::mpe2.simple_spread_v3", num_envs=12, max_cycles=5, num_workers=2
        )
        env.reset(seed=0)
        worker = env.unwrapped._groups[1]
        worker.process.kill()
        worker.process.join()
        with pytest.raises(
            RuntimeError, match=r"worker process of worlds 2-3 \(pid \d+\) died \(signal SIGKILL\)"
        ):
            env.step(torch.zeros(12, dtype=torch.int64))
        env.close()


class Faulty(Relay):
    """A relay whose worlds raise at their third step of an episode, where ``fail`` says (an env's bug)."""

    fail = True

    def step(self, actions):
        if self.time == 2 and Faulty.fail:
            raise RuntimeError("a bug in the env")
        return super().step(actions)


def test_an_env_error_in_a_worker_is_raised_as_itself_and_a_reset_starts_every_world_again():
    env = PettingZooVectorEnv(Faulty, 6, num_workers=2)
    env.reset(seed=0)
    for _ in range(2):
        env.step(np.ones(6, np.int64))
    with pytest.raises(RuntimeError, match="a bug in the env"):
        env.step(np.ones(6, np.int64))
    observation, info = env.reset(seed=[3, 3, 4, 4, 0, 0])  # (every worker answers this reset, not the step)
    assert observation.tolist() == [[3, 3], [3, 0], [4, 4], [4, 0], [0, 0], [0, 0]]
    assert env.step(np.ones(6, np.int64))[1].tolist() == [2.0] * 6
    env.close()
