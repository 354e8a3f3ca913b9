"""`vecrl evaluate --obs-norm` and `--out`: statistics kept between calls, per-row results in a file,
their mistakes in one line, and an interrupted call that says how far it got."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from vecrl_policy import ObsNorm

VECRL = str(Path(sys.executable).parent / "vecrl")


def evaluate_command(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([VECRL, "evaluate", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_obs_norm_statistics_are_kept_between_calls(tmp_path):
    arguments = ["gym::Hopper-v5", "--popsize", "4", "--num-envs", "4", "--obs-norm", "hopper.stats"]
    first = evaluate_command(*arguments, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    stats = ObsNorm.from_state_dict(torch.load(tmp_path / "hopper.stats", weights_only=True))
    assert stats.size == 11 and stats.count > 0
    second = evaluate_command(*arguments, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert (
        ObsNorm.from_state_dict(torch.load(tmp_path / "hopper.stats", weights_only=True)).count > stats.count
    )


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_out_writes_each_rows_results(tmp_path, suffix):
    result = evaluate_command(
        "gym::FrozenLake-v1", "--popsize", "5", "--episodes", "2", "--out", f"rows{suffix}", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    text = (tmp_path / f"rows{suffix}").read_text()
    rows = json.loads(text) if suffix == ".json" else list(csv.DictReader(text.splitlines()))
    assert [int(row["row"]) for row in rows] == [0, 1, 2, 3, 4]
    assert all(int(row["episodes"]) == 2 and int(row["steps"]) >= 2 for row in rows)
    assert set(rows[0]) == {"row", "mean_return", "total_return", "episodes", "steps"}
    # a second call replaces nothing unasked (one rule with vecrl evolve's --out), and does with --overwrite
    again = ["gym::FrozenLake-v1", "--popsize", "3", "--out", f"rows{suffix}"]
    refused = evaluate_command(*again, cwd=tmp_path)
    assert (
        refused.returncode == 2
        and f"'rows{suffix}' exists: give another --out, or pass --overwrite" in refused.stderr
    )
    assert (tmp_path / f"rows{suffix}").read_text() == text
    assert evaluate_command(*again, "--overwrite", cwd=tmp_path).returncode == 0
    assert (tmp_path / f"rows{suffix}").read_text() != text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--out", "rows.txt"], "must end in .csv or .json"),
        (["--out", "missing/rows.csv"], "the folder of 'missing/rows.csv' does not exist"),
        (["--obs-norm", "missing/stats"], "the folder of 'missing/stats' does not exist"),
        (["--obs-norm", "garbage.stats"], "not observation statistics saved by vecrl evaluate"),
        (["--obs-norm", "other.stats"], "statistics of observations of length 3"),
        (["--obs-norm", "same.json", "--out", "./same.json"], "--out and --obs-norm both name 'same.json'"),
    ],
)
def test_file_mistakes_are_one_line_errors(tmp_path, args, expected):
    (tmp_path / "garbage.stats").write_text("not a tensor file")
    torch.save(ObsNorm(3).state_dict(), tmp_path / "other.stats")
    result = evaluate_command("gym::CartPole-v1", "--popsize", "2", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "same.json").exists()  # nothing was written


def interrupted(arguments: list[str], rows: int, cwd: Path) -> tuple[str, float]:
    """``vecrl evaluate ARGUMENTS`` sent SIGINT once it says its ``rows`` run (well inside the call, past any
    compile): its stderr, and the seconds it took to exit after the signal."""
    process = subprocess.Popen(
        [VECRL, "evaluate", *arguments, "--popsize", str(rows)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )
    while f"evaluating {rows} rows" not in (line := process.stderr.readline()):
        assert line, "the command ended before its rows ran"
    process.send_signal(signal.SIGINT)
    signalled = time.perf_counter()
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert re.search(rf"interrupted after \d+ of {rows} rows", stderr), stderr
    assert "Traceback" not in stderr
    return stderr, time.perf_counter() - signalled


@pytest.mark.races
def test_an_interrupted_call_says_how_many_rows_were_done(tmp_path):
    interrupted(["gym::Hopper-v5", "--num-envs", "8"], 100000, tmp_path)  # (100000 rows take minutes)
    assert os.listdir(tmp_path) == []


@pytest.mark.races
@pytest.mark.slow
def test_ctrl_c_stops_a_fused_evaluation_within_two_seconds(tmp_path):
    """The fused program polls the host about every quarter second: a Ctrl-C stops it at the next poll, with
    the rows done so far said (a compiled call that never polled would run to its end first)."""
    pytest.importorskip("vecrl_brax")
    _, seconds = interrupted(["brax::inverted_pendulum", "--episodes", "200"], 2000, tmp_path)  # (a minute)
    assert seconds < 2.0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--popsize", "100000000"], "--popsize 100000000: 100,000,000 rows of 226 parameters need 84.2 GiB"),
        (["--policy", "Linear(obs, act) >> Softmax(dim=5)"], "bad --policy for gym::CartPole-v1"),
    ],
)
def test_a_population_or_network_that_cannot_run_is_a_one_line_error(tmp_path, args, expected):
    result = evaluate_command("gym::CartPole-v1", *args, cwd=tmp_path)
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "same.json").exists()  # nothing was written
