"""``vecrl evolve`` and ``vecrl record`` as a user runs them: a run stopped by Ctrl-C or SIGKILL (even while
it writes its state) resumes to the result of a run never stopped, its mistakes are one line before any
generation runs, and videos of every engine that draws decode."""

from __future__ import annotations

import csv
import os
import pickle
import re
import shlex
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from vecrl.cli import main
from vecrl_evotorch import record_video
from vecrl_evotorch.runs import RunFolder

RUN = ["gym::CartPole-v1", "--popsize", "16", "--generations", "30", "--seed", "3"]


def vecrl_command(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from vecrl.cli import main; sys.exit(main())", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def ran(*args: str) -> subprocess.CompletedProcess:
    process = vecrl_command(*args)
    stdout, stderr = process.communicate(timeout=300)
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def finished(*args: str) -> subprocess.CompletedProcess:
    result = ran(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def outcome(folder: Path) -> tuple[torch.Tensor, list[list[str]]]:
    """The run's last center and its results table without the seconds column."""
    state = RunFolder(folder).load_state()
    center = torch.as_tensor(state["searcher"].status["center"]).clone()
    with open(folder / "results.csv") as file:
        rows = [row[:-1] for row in csv.reader(file)]
    return center, rows


def saved_generations(folder: Path) -> int:
    try:
        return int(RunFolder(folder).load_state()["generation"])
    except Exception:  # not written yet
        return 0


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("whole") / "run"
    finished("evolve", *RUN, "--out", str(folder))
    return outcome(folder)


@pytest.mark.races
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_a_stopped_run_resumes_to_the_same_center_as_a_run_never_stopped(tmp_path, uninterrupted, stop):
    folder = tmp_path / "run"
    process = vecrl_command("evolve", *RUN, "--out", str(folder))
    while not (line := process.stdout.readline()).startswith("gen    3"):  # (printed once it is saved)
        assert line, "the run ended before it could be stopped"
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    if stop == signal.SIGINT:
        assert process.returncode == 130 and "Traceback" not in stderr
        assert f"--resume {folder} goes on" in stderr.splitlines()[-1]
    kept = saved_generations(folder)
    assert 3 <= kept < 30
    resumed = finished("evolve", "--resume", str(folder))
    assert f"resumed {folder} after generation {kept}" in resumed.stdout
    center, rows = outcome(folder)
    assert torch.equal(center, uninterrupted[0]) and rows == uninterrupted[1]


@pytest.mark.races
def test_a_ctrl_c_that_python_dropped_stops_the_run_after_its_generation(tmp_path, uninterrupted):
    # Python drops a KeyboardInterrupt raised in a garbage collector's callback (jax's: 2 runs in 25)
    folder = tmp_path / "run"
    script = (
        "import gc, os, signal, sys, time\n"
        "import vecrl_evotorch.evolve as evolve\n"
        "def ctrl_c_while_collecting(phase, info):\n"
        "    gc.callbacks.remove(ctrl_c_while_collecting)\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(0.5)\n"
        "step = evolve.Evolution.step\n"
        "def step_dropping_ctrl_c(self):\n"
        "    if self.generation == 3:\n"
        "        gc.callbacks.append(ctrl_c_while_collecting)\n"
        "        gc.collect()\n"
        "    step(self)\n"
        "evolve.Evolution.step = step_dropping_ctrl_c\n"
        "from vecrl.cli import main\n"
        f"sys.exit(main({['evolve', *RUN, '--out', str(folder)]!r}))\n"
    )
    # started as nox -s demo starts it: the line says how to go on in that form
    demo = {**os.environ, "VECRL_EVOLVE_COMMAND": "python3.11 -m nox -s demo --"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=demo
    )
    assert result.returncode == 130, result.stderr[-3000:]
    assert "Exception ignored" in result.stderr and saved_generations(folder) == 4
    said = result.stderr.splitlines()[-1]
    assert said.endswith(f": python3.11 -m nox -s demo -- --resume {folder} goes on"), said
    finished("evolve", "--resume", str(folder))
    center, rows = outcome(folder)
    assert torch.equal(center, uninterrupted[0]) and rows == uninterrupted[1]


@pytest.mark.races
def test_sigkill_while_the_state_is_written_leaves_the_previous_state_whole(tmp_path, uninterrupted):
    folder = tmp_path / "run"
    # the run as the command runs it, killed halfway through writing generation 4's state
    script = (
        "import os, signal, sys\n"
        "import vecrl_evotorch.runs as runs\n"
        "write = runs._write_atomically\n"
        "def dying_write(path, data):\n"
        "    if path.name == 'state.pickle' and os.path.exists(path) and runs.pickle.loads(path.read_bytes())['generation'] == 3:\n"
        "        with open(path.with_name(path.name + '.partial'), 'wb') as file:\n"
        "            file.write(data[: len(data) // 2]); file.flush()\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    write(path, data)\n"
        "runs._write_atomically = dying_write\n"
        "from vecrl.cli import main\n"
        f"sys.exit(main({['evolve', *RUN, '--out', str(folder)]!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == -signal.SIGKILL, result.stderr[-3000:]
    assert (folder / "state.pickle.partial").exists() and saved_generations(folder) == 3
    finished("evolve", "--resume", str(folder))
    center, rows = outcome(folder)
    assert torch.equal(center, uninterrupted[0]) and rows == uninterrupted[1]


def test_a_run_writes_its_results_plot_and_a_champion_that_runs_on_its_own(tmp_path, capsys):
    folder = tmp_path / "cartpole"
    assert (
        main(["evolve", "gym::CartPole-v1", "--out", str(folder), "--popsize", "16", "--generations", "3"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [["gen", "1"], ["gen", "2"], ["gen", "3"]]
    assert "env-steps/s" in lines[0] and "left" in lines[0]
    with open(folder / "results.csv") as file:
        table = list(csv.DictReader(file))
    assert [row["generation"] for row in table] == ["1", "2", "3"] and float(table[0]["env_steps"]) > 0
    assert (folder / "plot.png").stat().st_size > 1000
    with open(folder / "champion.pickle", "rb") as file:
        champion = pickle.load(file)
    action = champion["policy"](torch.zeros(4))
    assert action.shape == (2,) and champion["env"] == "gym::CartPole-v1"
    settings = RunFolder(folder).settings()
    assert settings["popsize"] == 16 and settings["policy"].startswith("Linear(obs_length, 16)")
    # going on for more generations, and refusing to start again over it
    assert main(["evolve", "--resume", str(folder), "--generations", "4"]) == 0
    assert RunFolder(folder).load_state()["generation"] == 4
    assert (
        main(["evolve", "gym::CartPole-v1", "--out", str(folder), "--generations", "1", "--overwrite"]) == 0
    )
    assert RunFolder(folder).load_state()["generation"] == 1


#: A new run's arguments, for the mistakes of its other options.
A_NEW_RUN = ["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/a"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (
            ["gym::CartPole-v1", "--algorithm", "ga", "--generations", "1", "--out", "{tmp}/a"],
            "invalid choice: 'ga'",
        ),
        (["gym::CartPole-v1", "--generations", "1"], "give --out DIR"),
        (["gym::CartPole-v1", "--out", "{tmp}/a"], "give --generations N, --until RETURN or both"),
        (["--generations", "1", "--out", "{tmp}/a"], "give the env to evolve on"),
        (["--resume", "{tmp}/nothing"], "there is no run at"),
        (["--resume", "{tmp}/empty"], "is no run to resume"),
        (["--resume", "{tmp}/done", "--popsize", "32"], "--popsize 32 (the run was started with 16)"),
        (
            ["gym::Acrobot-v1", "--resume", "{tmp}/done"],
            "--env gym::Acrobot-v1 (the run was started with gym::CartPole-v1)",
        ),
        (["--resume", "{tmp}/done"], "already has its 1 generations"),
        (["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/done"], "already holds a run"),
        (["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/file/run"], "is a file, not a folder"),
        (["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/locked/run"], "permission denied"),
        (["--resume", "{tmp}/done", "--out", "{tmp}/a"], "give it without --out and --overwrite"),
        (["gym::CartPol-v1", "--generations", "1", "--out", "{tmp}/a"], "Did you mean 'CartPole-v1'?"),
        (
            ["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/a", "--policy", "Linear(obs, 3"],
            "cannot start",
        ),
        (
            ["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/a", "--randomize", "mass=1:2"],
            "cannot start the run: scale() names 'mass'",
        ),
        (
            ["gym::FrozenLake-v1", "--generations", "1", "--out", "{tmp}/a", "--randomize", "g=1:2"],
            "cannot start the run: gym::FrozenLake-v1 lets no parameter vary",
        ),
        (
            ["gym::CartPole-v1", "--generations", "1", "--out", "{tmp}/a", "--popsize", "1000000000"],
            "--popsize 1000000000: 1,000,000,000 solutions of 114 parameters need about",
        ),
        (
            [
                "gym::CartPole-v1",
                "--generations",
                "1",
                "--out",
                "{tmp}/a",
                "--popsize",
                "1",
                "--algorithm",
                "cmaes",
            ],
            "--popsize 1: cmaes needs a population of at least 2",
        ),
        (
            [*A_NEW_RUN, "--algorithm", "snes", "--max-speed", "1"],
            "--max-speed is a setting of pgpe, not of snes",
        ),
        (
            [*A_NEW_RUN, "--algorithm", "cem", "--parenthood-ratio", "2"],
            "--parenthood-ratio 2: a share, above 0 and below 1",
        ),
        (
            [*A_NEW_RUN, "--opponents", "self"],
            "cannot start the run: opponents= seats a population in the worlds of a multi-agent env, but",
        ),
        ([*A_NEW_RUN, "--matches", "2"], "matches=2 counts the matches a solution plays with opponents="),
        (
            ["--resume", "{tmp}/done", "--max-speed", "0.5"],
            "--max-speed 0.5 (the run was started with (not given))",
        ),
    ],
)
def test_every_mistake_is_one_line_and_status_2_before_any_generation(tmp_path, capsys, args, words):
    if "{tmp}/locked/run" in args and os.geteuid() == 0:
        pytest.skip("root writes in a read-only folder")
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "locked").mkdir(mode=0o500)
    done = tmp_path / "done"
    RunFolder.create(done, {"env": "gym::CartPole-v1", "popsize": 16, "generations": 1, "until": None})
    RunFolder(done).save_state({"generation": 1})
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    try:
        status = main(["evolve", *args])
    except SystemExit as exit:  # argparse's own mistakes
        status = exit.code
    stderr = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(stderr) == 1 and words in stderr[0], stderr
    assert not (tmp_path / "a").exists()  # nothing was written


def test_record_reads_a_saved_policy_and_refuses_what_is_none(tmp_path, capsys):
    folder = tmp_path / "run"
    assert (
        main(["evolve", "gym::CartPole-v1", "--out", str(folder), "--popsize", "8", "--generations", "1"])
        == 0
    )
    video = tmp_path / "cartpole.gif"
    assert (
        main(
            [
                "record",
                "gym::CartPole-v1",
                "--policy",
                str(folder / "champion.pickle"),
                "--out",
                str(video),
                "--max-steps",
                "5",
            ]
        )
        == 0
    )
    assert video.stat().st_size > 0
    # CartPole pays 1 a step: five steps, cut by --max-steps, and a frame before the first
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert (
        said
        == f"gym::CartPole-v1: episode return 5.0 over 5 steps (cut there by max_steps: it had not ended); 6 frames saved to {video}"
    )
    assert (
        main(["record", "gym::CartPole-v1", "--policy", str(folder / "champion.pickle"), "--out", str(video)])
        == 2
    )
    assert f"{str(video)!r} exists: give another --out, or pass --overwrite" in capsys.readouterr().err
    assert (
        main(
            [
                "record",
                "gym::CartPole-v1",
                "--policy",
                str(folder / "results.csv"),
                "--out",
                str(video),
                "--overwrite",
            ]
        )
        == 2
    )
    errors = capsys.readouterr().err.splitlines()
    assert "cannot read it" in errors[0]
    pytest.importorskip("vecrl_envpool")
    envpool_video = tmp_path / "envpool.gif"  # (envpool's pools draw too: the contract's rendering member)
    champion = str(folder / "champion.pickle")
    assert main(["record", "envpool::CartPole-v1", "--policy", champion, "--out", str(envpool_video)]) == 0
    assert envpool_video.stat().st_size > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "act_length"),
    [("gym::Hopper-v5", 3), ("brax::inverted_pendulum", 1), ("playground::CartpoleBalance", 1)],
)
def test_videos_of_mujoco_brax_and_playground_envs_decode(tmp_path, env, act_length):
    import imageio.v3 as imageio

    pytest.importorskip(f"vecrl_{env.partition('::')[0]}")  # (vecrl-evotorch alone has the gym backend)

    path = tmp_path / "video.mp4"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        recording = record_video(env, lambda observation: torch.zeros(act_length), path, max_steps=12)
    assert not [w for w in caught if "os.fork()" in str(w.message)]  # (jax's, for ffmpeg's fork and exec)
    decoded = list(imageio.imiter(path))
    assert (
        recording.frames == 13 and len(decoded) == 13 and decoded[0].std() > 0
    )  # (a blank frame draws nothing)
    assert (recording.steps, recording.ended) == (12, False) and recording.episode_return != 0


def readme_runs() -> list[list[str]]:
    """The README's ``vecrl evolve`` commands that start a run, as its reader types them."""
    readme = Path(__file__).parents[1] / "README.md"
    lines = [line.strip() for line in readme.read_text().splitlines() if line.startswith("vecrl evolve ")]
    return [shlex.split(line, comments=True)[2:] for line in lines if "--resume" not in line]


def small(args: list[str], out: Path) -> list[str]:
    """``args`` with small settings: 2 generations of 8 (map-elites: of its grid's cells), no target, the run's
    folder in ``out``."""
    kept, words = [], iter(args)
    for word in words:
        if word in ("--generations", "--until", "--out", "--popsize"):
            next(words)
        else:
            kept.append(word)
    population = [] if "map-elites" in kept else ["--popsize", "8"]
    return [*kept, "--generations", "2", *population, "--out", str(out)]


@pytest.mark.slow
@pytest.mark.parametrize("args", readme_runs(), ids=lambda args: args[0])
def test_the_readme_runs_go_as_written_with_small_settings(tmp_path, capsys, args):
    from vecrl.testing import no_process_left

    pytest.importorskip(f"vecrl_{args[0].partition('::')[0]}")  # (vecrl-evotorch alone has the gym backend)

    with no_process_left():
        assert main(["evolve", *small(args, tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "gen    2" in out and (tmp_path / "run" / "plot.png").exists()
    if "--video" in args:
        assert "video of the champion" in out, out
        assert len(list(imageio_frames(tmp_path / "run" / "champion.mp4"))) > 1


def imageio_frames(path: Path):
    import imageio.v3 as imageio

    return imageio.imiter(path)


JAX_MODULES = ("jax", "jaxlib", "brax", "mujoco", "warp")


def test_a_gym_run_imports_neither_jax_nor_brax_nor_mjx_though_they_are_installed(tmp_path):
    pytest.importorskip("brax")
    args = [
        "evolve",
        "gym::CartPole-v1",
        "--popsize",
        "8",
        "--generations",
        "1",
        "--out",
        str(tmp_path / "run"),
    ]
    script = (
        f"import sys; from vecrl.cli import main; code = main({args!r}); import evotorch;"
        f" print(sorted({{m.partition('.')[0] for m in sys.modules}} & {set(JAX_MODULES)!r})); sys.exit(code)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines()[-1] == "[]", result.stdout
    assert "warp" not in result.stderr


def test_brax_envs_still_work_after_evotorch_was_imported_without_jax():
    pytest.importorskip("vecrl_brax")
    script = (
        "import sys; from vecrl_evotorch.evotorch_import import import_evotorch_without_jax;"
        " import_evotorch_without_jax(); assert 'evotorch' in sys.modules and 'jax' not in sys.modules;"
        " import vecrl; env = vecrl.make_vector_env('brax::inverted_pendulum', num_envs=2);"
        " print(type(env.unwrapped).__name__, 'jax' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["VectorEnvFromBrax", "True"]


def test_the_time_left_is_the_last_generation_s_env_steps_at_the_recent_speed_and_no_bound():
    from types import SimpleNamespace

    from vecrl_evotorch.evolve import Evolution
    from vecrl_evotorch.run_settings import DEFAULTS

    history = {"mean": [1.0], "best": [2.0], "center": [3.0], "env_steps": [100.0], "seconds": [2.0]}
    state = {"searcher": SimpleNamespace(problem=None), "generation": 1, "history": history}
    lines = {}
    for until, said in ((None, "  ~18 s left"), (475.0, "  ~18 s to gen 10")):
        settings = {**DEFAULTS, "env": "gym::CartPole-v1", "generations": 10, "until": until}
        lines[until] = Evolution(RunFolder("unused"), settings, state).progress()
        assert lines[until].endswith(said)
    # episodes that lengthen: 8 generations of the last one's 400 env-steps at 100 env-steps/s (the mean
    # generation's seconds would say 20 s)
    longer = {**history, "mean": [1.0, 1.0], "best": [2.0, 2.0], "center": [3.0, 3.0]}
    longer.update(env_steps=[100.0, 400.0], seconds=[1.0, 4.0])
    state = {**state, "generation": 2, "history": longer}
    assert Evolution(RunFolder("unused"), settings, state).progress().endswith("  ~32 s to gen 10")
    # the root README shows the demo's lines (--until 475): the same words, the numbers aside

    def shape(line: str) -> str:
        return re.sub(r"[\d,.]+", "N", re.sub(r" +", " ", line))

    readme = (Path(__file__).parents[3] / "README.md").read_text()
    shown = [line for line in readme.splitlines() if line.startswith("gen ")]
    assert shown and {shape(line) for line in shown} == {shape(lines[475.0])}


def test_a_long_generation_says_how_far_it_is_and_a_missed_target_is_said(tmp_path, capsys, monkeypatch):
    from vecrl_evotorch import evolve

    monkeypatch.setattr(evolve, "WITHIN_GENERATION_EVERY", 0.0)  # (every word of the evaluation said)
    args = ["gym::CartPole-v1", "--popsize", "8", "--generations", "2", "--until", "1e6"]
    assert main(["evolve", *args, "--out", str(tmp_path / "run")]) == 0
    out, err = capsys.readouterr()
    within = re.findall(r"\.\.\. generation (\d): (\d+) of 8 solutions evaluated", err)
    assert {generation for generation, _ in within} == {"1", "2"} and ("2", "8") in within, err
    assert "did not reach --until 1e+06 in 2 generations: the center's best score was" in out, out
    assert f"--resume {tmp_path / 'run'} --generations N goes on" in out


def test_a_shaped_run_records_and_plots_the_env_s_own_returns_with_the_fitness_beside_them(tmp_path):
    # CartPole's reward is 1 per step: less 1.0, every fitness is 0 while the returns are the episodes' lengths
    folder = tmp_path / "shaped"
    args = ["gym::CartPole-v1", "--popsize", "8", "--generations", "2", "--decrease-rewards-by", "1.0"]
    assert main(["evolve", *args, "--out", str(folder)]) == 0
    with open(folder / "results.csv") as file:
        table = list(csv.DictReader(file))
    assert list(table[0])[:6] == [
        "generation",
        "mean_return",
        "best_return",
        "center_return",
        "mean_fitness",
        "best_fitness",
    ]
    for row in table:
        assert float(row["mean_fitness"]) == float(row["best_fitness"]) == 0.0
        assert 8 <= float(row["mean_return"]) <= float(row["best_return"])
    status = RunFolder(folder).load_state()["searcher"].status
    assert float(table[-1]["best_return"]) == status["pop_best_raw_return"]
    unshaped = tmp_path / "plain"
    assert main(["evolve", *args[:5], "--out", str(unshaped)]) == 0
    with open(unshaped / "results.csv") as file:
        assert "mean_fitness" not in next(csv.DictReader(file))


def test_the_searchers_knobs_reach_evotorch_and_are_kept_with_the_run(tmp_path, capsys):
    folder = tmp_path / "run"
    knobs = ["--center-learning-rate", "0.2", "--stdev-learning-rate", "0.3", "--max-speed", "0.5"]
    command = ["evolve", "gym::CartPole-v1", "--out", str(folder), "--popsize", "8", "--generations", "1"]
    assert main([*command, *knobs, "--ranking-method", "linear"]) == 0
    searcher = RunFolder(folder).load_state()["searcher"]
    assert (searcher._center_learning_rate, searcher._stdev_learning_rate) == (0.2, 0.3)
    assert searcher._optimizer._max_speed == 0.5 and searcher._ranking_method == "linear"
    snes = tmp_path / "snes"
    given = ["--algorithm", "snes", "--ranking-method", "raw", "--center-learning-rate", "0.4"]
    assert main([*command[:3], str(snes), *command[4:], *given]) == 0
    searcher = RunFolder(snes).load_state()["searcher"]
    assert (searcher._ranking_method, searcher._center_learning_rate) == ("raw", 0.4)
    settings = RunFolder(folder).settings()
    assert (settings["center_learning_rate"], settings["max_speed"], settings["parenthood_ratio"]) == (
        0.2,
        0.5,
        None,
    )
    assert main(["evolve", "--resume", str(folder), "--generations", "2", "--max-speed", "0.5"]) == 0
    cem = tmp_path / "cem"
    assert (
        main(
            [
                "evolve",
                "gym::CartPole-v1",
                "--out",
                str(cem),
                "--popsize",
                "8",
                "--generations",
                "1",
                "--algorithm",
                "cem",
                "--parenthood-ratio",
                "0.25",
            ]
        )
        == 0
    )
    assert RunFolder(cem).load_state()["searcher"].DISTRIBUTION_PARAMS["parenthood_ratio"] == 0.25


def test_help_shows_the_searchers_knobs_with_their_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["evolve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    for words in (
        "--center-learning-rate RATE",
        "pgpe 0.075",
        "--max-speed SPEED",
        "(default: 0.15)",
        "cem (default: 0.5)",
        "--ranking-method {centered,linear,nes,normalized,raw}",
        "(default: pgpe centered, snes nes)",
    ):
        assert words in shown, words


def test_a_config_file_sets_the_run_and_the_flags_given_override_it(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('env = "gym::CartPole-v1"\npopsize = 8\ngenerations = 1\ncenter-learning-rate = 0.2\n')
    folder = tmp_path / "run"
    assert main(["evolve", "--config", str(config), "--out", str(folder), "--popsize", "12"]) == 0
    settings = RunFolder(folder).settings()
    assert (settings["popsize"], settings["center_learning_rate"], settings["generations"]) == (12, 0.2, 1)
    assert RunFolder(folder).load_state()["searcher"]._center_learning_rate == 0.2
    # a run's settings.json is a config: resuming with it contradicts nothing
    assert (
        main(
            [
                "evolve",
                "--resume",
                str(folder),
                "--config",
                str(folder / "settings.json"),
                "--generations",
                "2",
            ]
        )
        == 0
    )
    capsys.readouterr()
    for text, said in (
        (
            "popsiez = 3",
            "'popsiez' is no setting of the command (its settings are its options, named as in a run's settings.json). Did you mean 'popsize'?",
        ),
        ("popsize = -3", "popsize = -3: expected a positive whole number"),
        ("algorithm = 'ga'", "algorithm = 'ga': expected one of pgpe"),
        ("obs_norm = 1", "obs_norm = 1: expected true or false"),
        ("popsize = ", "not valid TOML"),
    ):
        config.write_text(text)
        status = main(
            [
                "evolve",
                "gym::CartPole-v1",
                "--generations",
                "1",
                "--out",
                str(tmp_path / "new"),
                "--config",
                str(config),
            ]
        )
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert (
            status == 2 and line.startswith(f"vecrl evolve: error: --config {config}: ") and said in line
        ), line
    assert not (tmp_path / "new").exists()
