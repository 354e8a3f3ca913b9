"""Run folders saved before the population engine left vecrl-policy (vecrl evolve at fbb3c1a: CartPole with
PGPE and obs-norm, and a map-elites run, each stopped after generation 3) resume with today's code to the
results of the same run never stopped (saved then too): the states' pickles name vecrl_policy's old modules."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from vecrl.cli import main

SAVED = Path(__file__).parent / "fixtures" / "saved_at_fbb3c1a"


def rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as file:
        return list(csv.reader(file))


def without_seconds(table: list[list[str]]) -> list[list[str]]:
    assert table[0][-1] == "seconds"
    return [row[:-1] for row in table]


@pytest.mark.parametrize("run", ["pgpe_obs_norm", "map_elites"])
def test_a_run_folder_saved_before_the_move_resumes_to_the_run_never_stopped(tmp_path, run, capsys):
    folder = tmp_path / run
    shutil.copytree(SAVED / run, folder)
    assert main(["evolve", "--resume", str(folder), "--generations", "5"]) == 0
    assert "gen    4" in capsys.readouterr().out  # it went on from generation 3
    expected = without_seconds(rows(folder / "results_at_generation_5.csv"))
    got = without_seconds(rows(folder / "results.csv"))
    if run == "map_elites":
        assert rows(folder / "archive.csv") == rows(folder / "archive_at_generation_5.csv")
        # today a MAP-Elites run's best is its archive's best elite (fbb3c1a wrote its last evaluation's best):
        # the generations run today say so, the others are as saved
        best = got[0].index("best_return")
        elites = [float(row[2]) for row in rows(folder / "archive.csv")[1:] if row[1] == "1"]
        assert float(got[-1][best]) == max(elites) and got[1:4] == expected[1:4]
        got, expected = ([row[:best] + row[best + 1 :] for row in table] for table in (got, expected))
    assert got == expected
