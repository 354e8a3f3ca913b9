"""``vecrl evolve --algorithm map-elites``: an archive over measures, resumed after Ctrl-C or SIGKILL to the archive
of a run never stopped, written as a table and drawn as a heatmap; its mistakes are one line."""

from __future__ import annotations

import csv
import os
import signal
from pathlib import Path

import pytest
import torch
from test_evolve import finished, ran, saved_generations, vecrl_command

from vecrl_evotorch.runs import RunFolder

RUN = [
    "gym::CartPole-v1",
    "--algorithm",
    "map-elites",
    "--measure",
    "obs[0]@last:-1:1:5",
    "--measure",
    "obs[2]@max:0:0.2:4",
    "--generations",
    "12",
    "--seed",
    "3",
]


def archive(folder: Path) -> tuple[torch.Tensor, torch.Tensor, list[list[str]]]:
    """The run's archive: its solutions and which cells hold one, and archive.csv."""
    searcher = RunFolder(folder).load_state()["searcher"]
    with open(folder / "archive.csv") as file:
        table = list(csv.reader(file))
    return searcher.population.values.clone(), searcher.filled.clone(), table


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole") / "run"
    result = finished("evolve", *RUN, "--out", str(folder))
    assert "coverage" in result.stdout
    return folder


def test_the_archive_is_written_as_a_table_and_drawn(uninterrupted):
    solutions, filled, table = archive(uninterrupted)
    assert table[0] == [
        "cell",
        "filled",
        "fitness",
        "obs[0]@last",
        "obs[0]@last_bin",
        "obs[2]@max",
        "obs[2]@max_bin",
    ]
    assert len(table) == 1 + 20 and 1 < int(filled.sum()) == sum(int(row[1]) for row in table[1:])
    with open(uninterrupted / "results.csv") as file:
        header, *rows = list(csv.reader(file))
    assert header[:6] == ["generation", "mean_return", "best_return", "elite_return", "coverage", "qd_score"]
    # the best is the archive's best elite, archive.csv's, generation after generation (never lower)
    bests = [float(row[2]) for row in rows]
    assert bests[-1] == max(float(row[2]) for row in table[1:] if row[1] == "1")
    assert bests == sorted(bests)
    assert (uninterrupted / "archive.png").stat().st_size > 0 and (uninterrupted / "plot.png").exists()


def test_the_champion_is_named_the_archive_s_best_elite(uninterrupted, tmp_path):
    result = finished("evolve", *RUN[:-4], "--generations", "1", "--out", str(tmp_path / "run"))
    assert "champion (the best elite, " in result.stdout


@pytest.mark.races
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_a_stopped_map_elites_run_resumes_to_the_archive_of_a_run_never_stopped(
    tmp_path, uninterrupted, stop
):
    folder = tmp_path / "run"
    process = vecrl_command("evolve", *RUN, "--out", str(folder))
    while not (line := process.stdout.readline()).startswith("gen    3"):  # (printed once it is saved)
        assert line, "the run ended before it could be stopped"
    process.send_signal(stop)
    process.communicate(timeout=60)
    assert 3 <= saved_generations(folder) < 12
    finished("evolve", "--resume", str(folder))
    solutions, filled, table = archive(folder)
    expected = archive(uninterrupted)
    assert torch.equal(filled, expected[1]) and torch.equal(solutions[filled], expected[0][filled])
    assert table == expected[2]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--algorithm", "map-elites"], "give one or more --measure NAME:LOW:HIGH:BINS"),
        (["--measure", "x_velocity:-1:1:4"], "--measure is for --algorithm map-elites"),
        (
            ["--algorithm", "map-elites", "--measure", "x:1:0:4"],
            "LOW < HIGH numbers and BINS >= 2; got 'x:1:0:4'",
        ),
        (
            ["--algorithm", "map-elites", "--measure", "x@median:0:1:4"],
            "@median: expected NAME:LOW:HIGH:BINS",
        ),
        (["--algorithm", "map-elites", "--measure", "x:0:1:4", "--popsize", "8"], "leave --popsize out"),
        (
            ["--algorithm", "map-elites", "--measure", "obs[0]:-1:1:4", "--measure", "obs[0]:-2:2:5"],
            "--measure obs[0] is given twice",
        ),
        (
            ["--algorithm", "map-elites", "--measure", "fitness:-1:1:4"],
            "--measure fitness: archive.csv has a column of its own by that name",
        ),
        (
            [
                "--algorithm",
                "map-elites",
                "--measure",
                "obs[0]:-1:1:200000",
                "--measure",
                "obs[1]:-1:1:200000",
            ],
            "--measure: MAP-Elites over a grid of 40,000,000,000 cells",
        ),
        (
            ["--algorithm", "map-elites", "--measure", "x_velocity:0:1:4"],
            "the info key 'x_velocity', which this env's step does not report; it reports no keys",
        ),
    ],
)
def test_map_elites_mistakes_are_one_line(tmp_path, args, message):
    result = ran("evolve", "gym::CartPole-v1", "--generations", "2", "--out", str(tmp_path / "run"), *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


STR_INFO_ENV = """
import gymnasium


class StrInfo(gymnasium.Wrapper):
    def step(self, action):
        observation, reward, terminated, truncated, info = super().step(action)
        return observation, reward, terminated, truncated, {**info, "label": "fast"}


gymnasium.register("StrInfo-v0", entry_point=lambda: StrInfo(gymnasium.make("CartPole-v1")))
"""


def test_a_first_generation_that_fails_on_a_setting_is_one_line_and_leaves_no_run(tmp_path):
    (tmp_path / "str_info_env.py").write_text(STR_INFO_ENV)
    out = tmp_path / "run"
    args = ("evolve", "gym::str_info_env:StrInfo-v0", "--generations", "2", "--out", str(out))
    process = vecrl_command(
        *args,
        "--algorithm",
        "map-elites",
        "--measure",
        "label:0:1:4",
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])},
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 2 and "Traceback" not in stderr, stderr
    assert "generation 1 failed: The info key 'label' holds" in stderr
    assert not out.exists()  # no folder holding settings.json alone
