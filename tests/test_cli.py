"""The `vecrl` console command, run as a user runs it: a real subprocess of the installed script."""

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

VECRL = str(Path(sys.executable).parent / "vecrl")


def vecrl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([VECRL, *args], capture_output=True, text=True, timeout=300)


def test_backends_lists_each_backend_with_its_distribution():
    result = vecrl("backends")
    assert result.returncode == 0, result.stderr
    gym_line = next(line for line in result.stdout.splitlines() if line.startswith("gym "))
    assert "vecrl-gym 0.1.0" in gym_line


def test_backends_names_the_pip_line_for_missing_well_known_backends():
    result = vecrl("backends")
    try:
        import vecrl_brax  # noqa: F401
    except ImportError:
        assert "pip install vecrl-brax" in result.stdout
    else:
        assert "vecrl-brax" in next(line for line in result.stdout.splitlines() if line.startswith("brax "))


def test_bench_prints_a_one_line_summary_and_no_progress_bar_when_piped():
    result = vecrl("bench", "gym::CartPole-v1", "--num-envs", "4", "--steps", "50")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1 and "200 env-steps" in lines[0] and "env-steps/s" in lines[0]
    assert "[" not in result.stderr


def test_bench_draws_a_progress_bar_on_a_terminal():
    leader, follower = pty.openpty()
    try:
        process = subprocess.run(
            [VECRL, "bench", "gym::Pendulum-v1", "--num-envs", "2", "--steps", "40"],
            stdout=subprocess.PIPE,
            stderr=follower,
            timeout=300,
        )
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    assert process.returncode == 0
    assert b"100%" in drawn and b"#" in drawn


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["bench", "gym::NoSuchEnv-v0"], "cannot make 'gym::NoSuchEnv-v0'"),
        (["bench", "nosuch::Thing"], "No vecrl backend serves the prefix 'nosuch'"),
        (["bench", "gym::CartPole-v1", "--num-envs", "0"], "expected a positive whole number"),
        (["bench", "gym::CartPole-v1", "--steps", "-3"], "expected a positive whole number"),
    ],
)
def test_bad_arguments_exit_non_zero_with_a_one_line_error(args, expected):
    result = vecrl(*args)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1
