"""``evaluate(..., opponents=...)`` on a multi-agent env (``pettingzoo::``): every row plays the documented
matches in every seat, each world's seats hold the rows the match table says (their returns are the game's
payoffs of the actions they play), a world's rows stay together in worker processes and executors (with the
same numbers, on MPE's predator-prey), common random numbers seat every row against the same opponents, and
the mistakes are one line each.

The game is this module's own PettingZoo env (``pettingzoo::test_evaluate_opponents``): rock-paper-scissors
for 3 rounds, each policy playing one move throughout (a bias-only network), so every match's returns are
known from who sat where."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Discrete

pytest.importorskip("vecrl_pettingzoo")
from pettingzoo import ParallelEnv

import vecrl
from vecrl_evaluate import evaluate
from vecrl_evaluate.executor import split_population
from vecrl_policy import Policy

ROUNDS = 3
PAYOFF = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]])  # [mine, theirs]: paper beats rock, ...


class RockPaperScissors(ParallelEnv):
    metadata: ClassVar[dict[str, Any]] = {"name": "rps_test_v0"}

    def __init__(self) -> None:
        self.possible_agents = ["first", "second"]
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> Box:
        return Box(0.0, 1.0, (1,), np.float32)

    def action_space(self, agent: str) -> Discrete:
        return Discrete(3)

    def reset(self, seed=None, options=None):
        self.agents, self.round = list(self.possible_agents), 0
        return {agent: np.ones(1, np.float32) for agent in self.agents}, {agent: {} for agent in self.agents}

    def step(self, actions):
        self.round += 1
        first, second = actions["first"], actions["second"]
        rewards = {"first": float(PAYOFF[first, second]), "second": float(PAYOFF[second, first])}
        over = self.round >= ROUNDS
        observations = {agent: np.ones(1, np.float32) for agent in self.agents}
        flags = {agent: over for agent in self.agents}
        if over:
            self.agents = []
        return observations, rewards, dict.fromkeys(flags, False), flags, {agent: {} for agent in flags}


def parallel_env() -> RockPaperScissors:
    return RockPaperScissors()


def playing(*moves: int) -> torch.Tensor:
    """Parameters of bias-only policies (Linear(1, 3), weights 0), one a move."""
    rows = torch.zeros(len(moves), 6)
    rows[torch.arange(len(moves)), 3 + torch.tensor(moves)] = 1.0
    return rows


@pytest.fixture()
def game():
    env = vecrl.make_vector_env("pettingzoo::test_evaluate_opponents", num_envs=6)
    yield env, Policy("Linear(1, 3)")
    env.close()


def expected_returns(members: torch.Tensor, moves: list[int]) -> torch.Tensor:
    """Each seat's return over a match: the payoff of its move against the other's, each round."""
    move = torch.tensor(moves)[members]
    return ROUNDS * torch.as_tensor(PAYOFF, dtype=torch.float64)[move, move.flip(1)]


def test_self_play_seats_every_row_in_every_seat_and_scores_it_by_its_own_seats(game):
    env, policy = game
    moves = [0, 1, 2, 1, 0]
    result = evaluate(policy, env, playing(*moves), opponents="self", matches=3, seed=4)
    table = result.matches
    assert table.members.shape == (5 * 2 * 3, 2)
    for row in range(5):  # 3 matches in each seat, against other rows
        played = table.player == row
        assert table.seat[played].tolist() == [0, 0, 0, 1, 1, 1]
        assert (table.members[played, table.seat[played]] == row).all()
        assert (table.members[played, 1 - table.seat[played]] != row).all()
    assert torch.equal(table.returns, expected_returns(table.members, moves))
    own = table.returns[torch.arange(len(table.player)), table.seat]
    fitness = torch.zeros(5, dtype=torch.float64).index_add_(0, table.player, own) / 6
    assert torch.equal(result.mean_return, fitness)
    assert result.episodes.tolist() == [6] * 5 and result.steps.tolist() == [18] * 5
    again = evaluate(policy, env, playing(*moves), opponents="self", matches=3, seed=4)
    assert torch.equal(again.matches.members, table.members) and torch.equal(
        again.total_return, result.total_return
    )


def test_fixed_opponents_and_teams(game):
    env, policy = game
    result = evaluate(policy, env, playing(1, 2), opponents=playing(0, 0), matches=2, seed=0)
    assert result.mean_return.tolist() == [3.0, -3.0]  # paper beats rock every round; scissors lose
    assert ((result.matches.members >= 0).sum(dim=1) == 1).all()  # a member against an opponent (-1 - k)
    team = evaluate(policy, env, playing(0, 1, 2), opponents="team", matches=2, seed=0)
    assert team.mean_return.tolist() == [0.0, 0.0, 0.0]  # a team plays itself: draws
    assert team.matches.members.tolist() == [[0, 0], [0, 0], [1, 1], [1, 1], [2, 2], [2, 2]]
    assert team.episodes.tolist() == [4, 4, 4]  # its two seats in two worlds


def test_the_mistakes_are_one_line_each(game):
    env, policy = game
    population = playing(0, 1)
    with pytest.raises(ValueError, match="opponents must be 'self', 'team' or a tensor"):
        evaluate(policy, env, population, opponents="selff")
    with pytest.raises(ValueError, match=r"6 each \(the policy's parameter_length\), got shape \(2, 5\)"):
        evaluate(policy, env, population, opponents=torch.zeros(2, 5))
    with pytest.raises(ValueError, match=r"opponents' rows \[1\] are not finite"):
        evaluate(policy, env, population, opponents=torch.tensor([[0.0] * 6, [float("nan")] * 6]))
    with pytest.raises(ValueError, match="matches must be a positive int"):
        evaluate(policy, env, population, opponents="self", matches=0)
    with pytest.raises(ValueError, match=r"fill whole worlds, 2 a world, but it has 3: give a multiple of 2"):
        evaluate(policy, env, playing(0, 1, 2))  # (a plain population: a row a seat)
    cartpole = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
    with pytest.raises(ValueError, match="has no seats"):
        evaluate(Policy("Linear(4, 2)"), cartpole, torch.zeros(2, 10), opponents="self")
    cartpole.close()


def test_common_random_numbers_seat_every_row_against_the_same_opponents(game):
    env, policy = game
    opponents = playing(0, 1, 2, 0)
    moves = playing(1, 1, 2)  # two members alike: alike they must score, against the same opponents
    result = evaluate(policy, env, moves, opponents=opponents, matches=3, seed=2, common_random_numbers=True)
    table = result.matches
    by_member = table.members.reshape(3, 2 * 3, 2)  # (member, seat and match, seat)
    theirs = torch.where(by_member >= 0, 0, by_member)  # (the member's own seat aside)
    assert torch.equal(theirs[0], theirs[1]) and torch.equal(theirs[0], theirs[2])
    assert result.mean_return[0] == result.mean_return[1]
    apart = evaluate(policy, env, moves, opponents=opponents, matches=3, seed=2)
    assert not torch.equal(
        apart.matches.members.reshape(3, 6, 2)[0], apart.matches.members.reshape(3, 6, 2)[1]
    )


@pytest.fixture()
def predator_prey():
    """MPE's simple_tag: 3 predators and a prey a world (observations padded), random starts by the seed."""
    env = vecrl.make_vector_env("pettingzoo::mpe2.simple_tag_v3", num_envs=8, max_cycles=6)
    policy = Policy.for_env("Linear(obs_length, act_length)", env)
    population = torch.randn(5, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    yield env, policy, population
    env.close()


@pytest.mark.timeout(300)
def test_worker_processes_keep_a_worlds_rows_together_with_the_same_numbers(predator_prey):
    env, policy, population = predator_prey
    for opponents in ("self", "team", population[:2] + 1):
        alone = evaluate(policy, env, population, opponents=opponents, matches=2, seed=1)
        shared = evaluate(policy, env, population, opponents=opponents, matches=2, seed=1, num_workers=2)
        assert torch.equal(alone.total_return, shared.total_return), opponents
        assert torch.equal(alone.matches.returns, shared.matches.returns)
        assert torch.equal(alone.steps, shared.steps) and torch.equal(alone.episodes, shared.episodes)
    seats = population.repeat(4, 1)[:16]  # a plain population, a row a seat: 4 worlds
    alone = evaluate(policy, env, seats, seed=5, num_episodes=2)
    assert torch.equal(
        alone.total_return, evaluate(policy, env, seats, seed=5, num_episodes=2, num_workers=2).total_return
    )


def test_an_executors_parts_are_whole_worlds(predator_prey):
    env = predator_prey[0]
    parts = split_population(env, 20, None, num_parts=3)
    assert [(part.start, part.stop, part.num_envs, part.rows_per_world) for part in parts] == [
        (0, 8, 8, 4),
        (8, 16, 8, 4),
        (16, 20, 4, 4),
    ]
