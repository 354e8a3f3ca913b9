"""The CartPole example as a user runs it: a run resumed from its folder goes on as the uninterrupted one,
its folder is never replaced without being told to, and it runs to the end without matplotlib."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def cartpole(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        str(ROOT / "examples" / "evolve_cartpole.py"),
        "--popsize",
        "8",
        "--test-episodes",
        "2",
        "--out",
        str(tmp_path / "run"),
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
    assert "resumed" in resumed.stdout
    assert scores(first.stdout) + scores(resumed.stdout) == scores(straight.stdout)
    assert (tmp_path / "b" / "run" / "plot.png").read_bytes()[:8] == PNG
    assert (tmp_path / "b" / "run" / "results.csv").read_text() == (
        tmp_path / "a" / "run" / "results.csv"
    ).read_text()


def test_the_example_never_replaces_a_run_unless_told_to(tmp_path):
    assert cartpole(tmp_path, "--generations", "1").returncode == 0
    again = cartpole(tmp_path, "--generations", "1")
    assert again.returncode == 1 and "already holds a run" in again.stderr and "Traceback" not in again.stderr
    changed = cartpole(tmp_path, "--generations", "2", "--resume", "--seed", "5")
    assert changed.returncode == 1 and "was started with" in changed.stderr
    assert cartpole(tmp_path, "--generations", "1", "--overwrite").returncode == 0


def test_without_matplotlib_the_example_says_so_at_the_start_and_runs_to_the_end(tmp_path):
    script = ROOT / "examples" / "evolve_cartpole.py"
    code = (
        "import runpy, sys; sys.modules['matplotlib'] = None; sys.path.insert(0, sys.argv[1]);"
        " sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    arguments = ["--generations", "1", "--popsize", "8", "--test-episodes", "2", "--out", str(tmp_path / "s")]
    result = subprocess.run(
        [sys.executable, "-c", code, str(script.parent), str(script), *arguments],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "note: no plot saved: matplotlib is not installed" in result.stderr
    assert "gen   1" in result.stdout and "plot saved" not in result.stdout
    assert (tmp_path / "s" / "state.pickle").exists() and not (tmp_path / "s" / "plot.png").exists()


@pytest.mark.slow
def test_the_randomization_example_evolves_both_policies_and_plots_them(tmp_path):
    pytest.importorskip("vecrl_brax")
    pytest.importorskip("matplotlib")
    script = ROOT / "examples" / "randomized_pendulum.py"
    out = tmp_path / "grid.png"
    command = [sys.executable, str(script), "--generations", "2", "--popsize", "8", "--out", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    table = [line for line in result.stdout.splitlines() if "x  " in line]  # a row per pole mass
    assert len(table) == 9 and "randomized" in result.stdout
    assert out.read_bytes()[:8] == PNG


def test_the_quality_diversity_example_fills_an_archive_of_hopper_gaits_and_draws_it(tmp_path):
    heatmap = tmp_path / "gaits.png"
    command = [
        sys.executable,
        str(ROOT / "examples" / "quality_diversity.py"),
        "--generations",
        "2",
        "--bins",
        "4",
    ]
    result = subprocess.run([*command, "--out", str(heatmap)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    cells = [int(line.split()[2]) for line in result.stdout.splitlines() if line.startswith("gen ")]
    assert len(cells) == 2 and 1 < cells[-1] <= 16
    assert heatmap.read_bytes()[:8] == PNG


def test_pyribs_asks_vecrl_evaluates_and_pyribs_is_told():
    pytest.importorskip("ribs")  # (installed by nox -s tests)
    command = [
        sys.executable,
        str(ROOT / "examples" / "pyribs_interop.py"),
        "--iterations",
        "2",
        "--batch",
        "8",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    elites = int(result.stdout.split("iteration   2")[1].split()[0])
    assert elites > 1


def example(name: str, *arguments: str) -> list[str]:
    """The lines an example prints as a user runs it (from its own folder's parent)."""
    command = [sys.executable, str(ROOT / "examples" / name), *arguments]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if line.startswith("gen ")]


@pytest.mark.slow
def test_evosax_s_pgpe_with_vecrl_s_rollout_in_its_jitted_generation_learns():
    pytest.importorskip("evosax")
    pytest.importorskip("vecrl_brax")
    lines = example("evosax_rollout.py", "--popsize", "32", "--generations", "30")
    means = [float(line.split()[3]) for line in lines]
    assert len(means) == 3 and means[-1] > 2 * means[0], lines


@pytest.mark.slow
def test_map_elites_in_jax_with_two_measures_fills_its_archive():
    pytest.importorskip("vecrl_brax")
    lines = example("map_elites_jax.py", "--batch", "32", "--generations", "20")
    coverage = [float(line.split()[3].rstrip("%")) for line in lines]
    qd_scores = [float(line.split()[5]) for line in lines]
    assert len(lines) == 2 and coverage[0] > 100 / 64 and qd_scores[-1] >= qd_scores[0], lines


def async_ppo(*arguments: str) -> list[str]:
    command = [sys.executable, str(ROOT / "examples" / "async_ppo.py"), *arguments]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_async_ppo_example_learns_cartpole_through_send_and_recv():
    lines = async_ppo("--until", "400")
    assert lines[-1].startswith("reached 400 after"), lines[-3:]


def test_the_async_ppo_run_is_the_same_whatever_order_the_batches_come_back_in():
    # the batches' order changes from run to run; the returns do not (the clock's column cut off)
    first, second = (async_ppo("--total-timesteps", "16384") for _ in range(2))
    assert [line.split("  ")[:3] for line in first] == [line.split("  ")[:3] for line in second]
    assert len(first) == 16
