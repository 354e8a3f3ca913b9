"""The Hopper example as a user runs it: a few generations in one process or in workers, a long run
interrupted with Ctrl-C and resumed from its saved state, and a video of the result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vecrl.testing import no_process_left

ROOT = Path(__file__).parent.parent
HOPPER = ROOT / "examples" / "evolve_hopper.py"
PNG = b"\x89PNG\r\n\x1a\n"


def hopper(tmp_path: Path, *arguments: str) -> list[str]:
    return [
        sys.executable,
        str(HOPPER),
        "--popsize",
        "8",
        "--state",
        str(tmp_path / "run.state"),
        "--out",
        str(tmp_path / "progress.png"),
        *arguments,
    ]


def test_the_hopper_example_runs_with_workers_and_writes_its_plot_and_video(tmp_path):
    with no_process_left():
        result = subprocess.run(
            hopper(tmp_path, "--generations", "2", "--workers", "2", "--video", str(tmp_path / "videos")),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    assert "gen   2" in result.stdout and "Traceback" not in result.stderr
    assert (tmp_path / "progress.png").read_bytes()[:8] == PNG
    assert "video of the center policy saved" in result.stdout, result.stderr
    assert [path.suffix for path in (tmp_path / "videos").iterdir()] == [".mp4"]


def test_an_interrupted_run_loses_at_most_one_generation_and_resumes(tmp_path):
    process = subprocess.Popen(
        hopper(tmp_path, "--generations", "1000"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines = []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        lines.append(line)
        if line.startswith("gen   3"):
            break
    process.send_signal(signal.SIGINT)  # Ctrl-C, in generation 4 or later
    stdout, stderr = process.communicate(timeout=120)
    lines += stdout.splitlines()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "run again with --resume" in stderr
    done = max(int(line.split()[1]) for line in lines if line.startswith("gen "))
    saved = int(stderr.split("generations 1-")[1].split()[0])
    assert saved >= done  # every generation printed is saved; Ctrl-C may come after the next one's save
    done = saved

    resumed = subprocess.run(
        hopper(tmp_path, "--generations", str(done + 2), "--resume"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed from {tmp_path / 'run.state'} after generation {done}" in resumed.stdout
    numbers = [int(line.split()[1]) for line in resumed.stdout.splitlines() if line.startswith("gen ")]
    assert numbers == [done + 1, done + 2]
    assert (tmp_path / "progress.png").read_bytes()[:8] == PNG


def test_resuming_without_a_saved_run_says_so_in_one_line(tmp_path):
    result = subprocess.run(hopper(tmp_path, "--resume"), capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "--resume: there is no saved run at" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("arguments", [["--workers", "2", "--ray"], ["--popsize", "0"]])
def test_the_examples_mistakes_are_one_line_errors(tmp_path, arguments):
    result = subprocess.run(hopper(tmp_path, *arguments), capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def cartpole(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        str(ROOT / "examples" / "evolve_cartpole.py"),
        "--popsize",
        "8",
        "--test-episodes",
        "2",
        "--state",
        str(tmp_path / "cartpole.state"),
        "--out",
        str(tmp_path / "cartpole.png"),
        *arguments,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def scores(stdout: str) -> list[str]:
    """The generation lines without their clock."""
    return [line.split("(")[0] for line in stdout.splitlines() if line.startswith("gen ")]


def test_a_resumed_cartpole_run_goes_on_as_the_uninterrupted_one(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    straight = cartpole(tmp_path / "a", "--generations", "4")
    first = cartpole(tmp_path / "b", "--generations", "2")
    resumed = cartpole(tmp_path / "b", "--generations", "4", "--resume")
    for result in (straight, first, resumed):
        assert result.returncode == 0, result.stderr
    assert "resumed from" in resumed.stdout
    assert scores(first.stdout) + scores(resumed.stdout) == scores(straight.stdout)
    assert (tmp_path / "b" / "cartpole.png").read_bytes()[:8] == PNG


def test_without_matplotlib_the_example_says_so_at_the_start_and_runs_to_the_end(tmp_path):
    script = ROOT / "examples" / "evolve_cartpole.py"
    code = (
        "import runpy, sys; sys.modules['matplotlib'] = None; sys.path.insert(0, sys.argv[1]);"
        " sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    arguments = [
        "--generations",
        "1",
        "--popsize",
        "8",
        "--test-episodes",
        "2",
        "--state",
        str(tmp_path / "s"),
    ]
    result = subprocess.run(
        [sys.executable, "-c", code, str(script.parent), str(script), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("note: matplotlib is not installed, so no plot will be saved")
    assert "gen   1" in result.stdout and "plot saved" not in result.stdout and (tmp_path / "s").exists()
