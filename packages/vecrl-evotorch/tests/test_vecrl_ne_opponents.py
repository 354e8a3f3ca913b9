"""``VecrlNE(..., opponents=...)`` and ``vecrl evolve --opponents`` on MPE's push (two seats a world: an agent
and an adversary): populations seated in whole worlds, the hall of fame of past centers (a uniform sample of
them past its size), the score against the first generation's center, the same numbers as
``vecrl_evaluate.evaluate``'s, and the problem pickled with its hall of fame."""

from __future__ import annotations

import csv
import pickle

import pytest
import torch

pytest.importorskip("mpe2")
from evotorch import SolutionBatch
from evotorch.algorithms import PGPE

from vecrl.cli import main
from vecrl_evaluate import evaluate
from vecrl_evotorch import VecrlNE

PUSH = "pettingzoo::mpe2.simple_push_v3"
NETWORK = "Linear(obs_length, act_length)"


def problem(**kwargs) -> VecrlNE:
    return VecrlNE(PUSH, NETWORK, env_config={"max_cycles": 5}, seed=1, **kwargs)


def population(problem: VecrlNE, size: int, seed: int) -> SolutionBatch:
    batch = SolutionBatch(problem, popsize=size)
    batch.set_values(
        torch.randn(size, problem.solution_length, generator=torch.Generator().manual_seed(seed))
    )
    return batch


def test_a_population_is_seated_in_whole_worlds_with_evaluate_s_numbers():
    played = problem(opponents="self", matches=2)
    batch = population(played, 5, 0)
    played.evaluate(batch)
    env = played.get_env()
    assert env.num_envs == 5 * 2 * 2 * 2  # members x seats x matches worlds of 2 rows
    expected = evaluate(played._policy, env, batch.values.clone(), opponents="self", matches=2, seed=1)
    assert torch.equal(batch.evals[:, 0].double(), expected.mean_return.float().double())
    assert torch.equal(played.reference, batch.values.mean(dim=0))
    team = problem(opponents="team")
    batch = population(team, 4, 0)
    team.evaluate(batch)
    assert team.get_env().num_envs == 4 * 2  # a world a member
    assert team.hall_of_fame is None  # (only "hall-of-fame" keeps one)
    baseline = torch.randn(2, team.solution_length, generator=torch.Generator().manual_seed(3))
    fixed = problem(opponents=baseline)
    batch = population(fixed, 3, 1)
    fixed.evaluate(batch)
    expected = evaluate(fixed._policy, fixed.get_env(), batch.values.clone(), opponents=baseline, seed=1)
    assert torch.equal(batch.evals[:, 0], expected.mean_return.float())
    assert fixed.score(batch.values[0], num_episodes=2, seed=0) == pytest.approx(
        float(
            evaluate(
                fixed._policy,
                fixed.get_env(),
                batch.values[:1].clone(),
                opponents=baseline,
                matches=2,
                seed=0,
            ).mean_return[0]
        )
    )
    for made in (played, team, fixed):
        made.close()


def test_the_hall_of_fame_keeps_past_centers_and_a_uniform_sample_past_its_size():
    kept = problem(opponents="hall-of-fame", hall_of_fame_size=3)
    centers = []
    for generation in range(6):
        batch = population(kept, 4, generation)
        kept.evaluate(batch)
        centers.append(batch.values.clone().mean(dim=0))
        if generation < 3:
            assert torch.equal(kept.hall_of_fame, torch.stack(centers))
    hall = kept.hall_of_fame
    assert hall.shape == (3, kept.solution_length)
    assert all(any(torch.equal(row, center) for center in centers) for row in hall)
    assert not torch.equal(hall, torch.stack(centers[:3]))  # later centers took some places
    assert torch.equal(kept.reference, centers[0])
    again = pickle.loads(pickle.dumps(kept))  # (a saved run goes on with its hall of fame)
    assert torch.equal(again.hall_of_fame, hall) and torch.equal(again.reference, centers[0])
    kept.close()


def test_the_score_plays_the_first_center_where_opponents_improve_too():
    kept = problem(opponents="hall-of-fame")
    kept.evaluate(population(kept, 4, 0))
    solution = torch.randn(kept.solution_length, generator=torch.Generator().manual_seed(9))
    expected = evaluate(
        kept._policy, kept.get_env(), solution[None], opponents=kept.reference[None], matches=3, seed=4
    )
    assert kept.score(solution, num_episodes=3, seed=4) == pytest.approx(float(expected.mean_return[0]))
    kept.close()


def test_pgpe_runs_against_its_hall_of_fame():
    kept = problem(opponents="hall-of-fame")
    searcher = PGPE(kept, popsize=6, center_learning_rate=0.1, stdev_learning_rate=0.1, stdev_init=0.1)
    searcher.run(3)
    assert len(kept.hall_of_fame) == 3 and kept.interaction_count > 0
    kept.close()


def test_the_mistakes_are_one_line_each():
    with pytest.raises(
        ValueError, match=r"opponents must be None, 'self', 'team', 'hall-of-fame' or a tensor"
    ):
        problem(opponents="selff")
    with pytest.raises(ValueError, match=r"has no seats"):
        VecrlNE("gym::CartPole-v1", NETWORK, opponents="self")
    with pytest.raises(ValueError, match=r"opponents must hold one opponent's parameters a row"):
        problem(opponents=torch.zeros(2, 3))
    with pytest.raises(ValueError, match="matches must be a positive int"):
        problem(opponents="self", matches=0)
    with pytest.raises(ValueError, match="matches=3 counts the matches a solution plays with opponents="):
        problem(matches=3, opponents=None)
    with pytest.raises(
        ValueError, match="rows are the seats of worlds of 2 agents, so a solution needs opponents"
    ):
        problem()


@pytest.mark.timeout(600)
def test_evolve_with_a_hall_of_fame_shows_the_return_against_the_first_center(tmp_path, capsys):
    out = tmp_path / "run"
    args = [PUSH, "--opponents", "hall-of-fame", "--popsize", "6", "--generations", "2", "--out", str(out)]
    assert main(["evolve", *args, "--seed", "0"]) == 0
    assert "vs first" in capsys.readouterr().out
    with open(out / "results.csv") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 2 and "center_vs_first_return" in rows[0]
    assert main(["evolve", "--resume", str(out), "--generations", "3"]) == 0


def test_evolve_on_seats_without_opponents_is_one_line(tmp_path, capsys):
    assert main(["evolve", PUSH, "--generations", "1", "--out", str(tmp_path / "a")]) == 2
    stderr = capsys.readouterr().err.strip().splitlines()
    assert len(stderr) == 1 and "so a solution needs opponents: give opponents='team'" in stderr[0], stderr
    assert not (tmp_path / "a").exists()
