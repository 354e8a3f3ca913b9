"""A run's folder never loses or mixes up work: a folder holding another run's files is refused, a state
written by another run is refused before anything is written, one process at a time writes a run (a lock
left by a killed one is taken over), outputs that cannot be written are refused before any work, and an
interrupted save says which generation is on disk."""

from __future__ import annotations

import pickle
import shutil
import signal
from pathlib import Path

import pytest
from test_evolve import ran, vecrl_command

from vecrl.cli import main
from vecrl_evotorch.evolve import Evolution, _evolve
from vecrl_evotorch.run_settings import DEFAULTS
from vecrl_evotorch.runs import RunFolder

TINY = ["--popsize", "8", "--seed", "1"]


def status_of(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exit:  # argparse's own mistakes
        return exit.code


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A finished one-generation run on CartPole and one on Pendulum."""
    root = tmp_path_factory.mktemp("runs")
    for env, name in (("gym::CartPole-v1", "cartpole"), ("gym::Pendulum-v1", "pendulum")):
        result = ran("evolve", env, *TINY, "--generations", "1", "--out", str(root / name))
        assert result.returncode == 0, result.stderr[-2000:]
    return root


def test_a_folder_holding_only_a_champion_is_a_run_and_is_not_written_over(tmp_path):
    (tmp_path / "champion.pickle").write_bytes(b"the champion of a run long ago")
    result = ran("evolve", "gym::CartPole-v1", *TINY, "--generations", "1", "--out", str(tmp_path))
    assert result.returncode == 2 and "already holds a run (champion.pickle)" in result.stderr, result.stderr
    assert (tmp_path / "champion.pickle").read_bytes() == b"the champion of a run long ago"


def test_overwrite_removes_the_old_run_s_videos_and_nothing_it_did_not_write(tmp_path, capsys):
    (tmp_path / "videos").mkdir()
    (tmp_path / "videos" / "generation-5.mp4").write_bytes(b"old")
    (tmp_path / "champion.pickle").write_bytes(b"old")
    (tmp_path / "champion.gif").write_bytes(b"old")  # (the README's vecrl record line writes it there)
    (tmp_path / "notes.txt").write_text("mine")
    args = ["evolve", "gym::CartPole-v1", *TINY, "--generations", "1", "--out", str(tmp_path), "--overwrite"]
    assert main(args) == 0
    assert not (tmp_path / "videos").exists() and (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "champion.gif").exists()
    assert (tmp_path / "champion.pickle").read_bytes() != b"old" and not (tmp_path / "run.lock").exists()


def test_a_state_from_another_run_is_refused_before_anything_is_written(tmp_path, two_runs):
    folder = tmp_path / "cartpole"
    shutil.copytree(two_runs / "cartpole", folder)
    shutil.copy(two_runs / "pendulum" / "state.pickle", folder / "state.pickle")
    before = files(folder)
    result = ran("evolve", "--resume", str(folder), "--generations", "3")
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "state.pickle belongs to another run than" in line and "'gym::Pendulum-v1' in the state" in line
    assert files(folder) == before


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda state: state.pop("searcher"), "is no state of vecrl evolve"),
        (
            lambda state: state["rng"].update(torch="not a generator state"),
            "random generator states are damaged",
        ),
    ],
)
def test_a_damaged_state_is_one_line_before_anything_is_written(tmp_path, two_runs, damage, words):
    folder = tmp_path / "run"
    shutil.copytree(two_runs / "cartpole", folder)
    state = RunFolder(folder).load_state()
    damage(state)
    (folder / "state.pickle").write_bytes(pickle.dumps(state))
    before = files(folder)
    result = ran("evolve", "--resume", str(folder), "--generations", "3")
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and files(folder) == before


def test_settings_that_are_no_vecrl_evolve_run_s_are_one_line(tmp_path, two_runs):
    folder = tmp_path / "run"
    shutil.copytree(two_runs / "cartpole", folder)
    (folder / "settings.json").write_text("{}")
    result = ran("evolve", "--resume", str(folder), "--generations", "3")
    assert result.returncode == 2 and "holds no settings of vecrl evolve (no env)" in result.stderr, (
        result.stderr
    )
    # a folder written by examples/evolve_cartpole.py: its own settings, its own state
    (folder / "settings.json").write_text('{"popsize": 64, "test_episodes": 20, "seed": 0}')
    result = ran("evolve", "--resume", str(folder), "--generations", "3")
    assert result.returncode == 2 and "no settings of vecrl evolve" in result.stderr, result.stderr


@pytest.mark.races
def test_a_run_in_progress_is_held_and_a_killed_one_s_lock_is_taken_over(tmp_path):
    folder = tmp_path / "run"
    first = vecrl_command(
        "evolve", "gym::CartPole-v1", *TINY, "--generations", "100000", "--out", str(folder)
    )
    try:
        while not (line := first.stdout.readline()).startswith("gen    1"):  # one generation saved
            assert line, first.stderr.read()[-2000:]
        second = ran("evolve", "--resume", str(folder), "--generations", "200000")
        assert second.returncode == 2, second.stderr
        assert f"is in use by another process (pid {first.pid}" in second.stderr, second.stderr
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        first.kill()
        first.communicate()
    assert (folder / "run.lock").read_text() == str(first.pid)  # left behind by the killed process
    saved = RunFolder(folder).load_state()["generation"]
    third = ran("evolve", "--resume", str(folder), "--generations", str(saved + 1))
    assert third.returncode == 0, third.stderr[-2000:]
    assert f"was left by process {first.pid}, which has ended" in third.stderr
    assert not (folder / "run.lock").exists()


def test_an_interrupted_save_says_the_generation_that_is_on_disk(tmp_path):
    settings = {**DEFAULTS, "env": "gym::CartPole-v1", "popsize": 8, "generations": 3}
    run = Evolution.start(settings, RunFolder.create(tmp_path, settings))
    save_state = run.folder.save_state

    def interrupted_at_generation_two(state):
        if state["generation"] == 2:
            raise KeyboardInterrupt  # (Ctrl-C while the state is written: the file keeps generation 1)
        save_state(state)

    run.folder.save_state = interrupted_at_generation_two
    with pytest.raises(KeyboardInterrupt, match="after generation 1 is saved"):
        _evolve(run)
    run.problem.close()
    assert RunFolder(tmp_path).load_state()["generation"] == 1


@pytest.mark.parametrize("option", ["--out", "--obs-norm"])
@pytest.mark.parametrize(
    ("place", "words"),
    [
        ("/proc/{name}", "cannot write in /proc (No such file or directory)"),
        ("{tmp}/folder.csv", "is a folder: give a file's path"),
        ("{tmp}/file/{name}", "does not exist"),
    ],
)
def test_evaluate_refuses_an_output_it_cannot_write_before_any_work(tmp_path, option, place, words):
    (tmp_path / "file").write_text("a file, not a folder")
    (tmp_path / "folder.csv").mkdir()
    name = "rows.csv" if option == "--out" else "stats.pt"
    path = place.format(tmp=tmp_path, name=name)
    result = ran("evaluate", "gym::CartPole-v1", "--popsize", "30000", option, path)
    (line,) = result.stderr.strip().splitlines()
    assert (
        result.returncode == 2
        and line.startswith(f"vecrl evaluate: error: argument {option}: ")
        and words in line
    ), line


def test_record_refuses_an_output_it_cannot_write(tmp_path, capsys):
    (tmp_path / "file").write_text("a file, not a folder")
    for out in ("/proc/v.mp4", str(tmp_path / "file" / "v.mp4")):
        status = status_of(["record", "gym::CartPole-v1", "--policy", "missing.pickle", "--out", out])
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and "argument --out: " in line, line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["evolve", "gym::CartPole-v1", "--until", "nan", "--out", "x"], "--until: expected a finite number"),
        (["evolve", "gym::CartPole-v1", "--until", "inf", "--out", "x"], "--until: expected a finite number"),
        (
            ["evaluate", "gym::Pendulum-v1", "--randomize", "g=1:2", "--randomize", "g=3:4"],
            "g is given twice",
        ),
    ],
)
def test_numbers_that_never_stop_and_names_given_twice_are_refused(capsys, args, words):
    status = status_of(args)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and words in line, line


@pytest.mark.parametrize("env", ["gym::Acrobot-v1", "gym::Hopper-v5"])
def test_a_champion_recorded_on_another_env_says_which_env_it_was_made_for(tmp_path, two_runs, capsys, env):
    if env == "gym::Hopper-v5":
        pytest.importorskip("mujoco")
    champion = str(two_runs / "cartpole" / "champion.pickle")
    status = status_of(["record", env, "--policy", champion, "--out", str(tmp_path / "v.gif")])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert (
        status == 2 and f"was made for gym::CartPole-v1, not {env}: the policy does not fit this env" in line
    )
    assert not (tmp_path / "v.gif").exists()


@pytest.mark.parametrize(
    ("out", "words"),
    [
        ("/proc/run", "cannot write in '/proc'"),
        ("{tmp}/held", "run.lock' is a folder, where a run keeps its lock file"),
    ],
)
def test_evolve_refuses_a_folder_it_cannot_use_before_any_work(tmp_path, capsys, out, words):
    (tmp_path / "held" / "run.lock").mkdir(parents=True)
    status = status_of(
        ["evolve", "gym::CartPole-v1", "--generations", "1", "--out", out.format(tmp=tmp_path)]
    )
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and words in line, line
