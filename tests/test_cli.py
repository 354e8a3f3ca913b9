"""The `vecrl` console command, run as a user runs it: a real subprocess of the installed script."""

import os
import pty
import re
import signal
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
        assert "pip install -c constraints.txt packages/vecrl-brax" in result.stdout
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
        (["bench", "gym::NoSuchEnv-v0"], "argument env: gymnasium has no environment 'NoSuchEnv-v0'"),
        (["bench", "nosuch::Thing"], "No vecrl backend serves the prefix 'nosuch'"),
        (["bench", "gym::CartPole-v1", "--num-envs", "0"], "expected a positive whole number"),
        (["bench", "gym::CartPole-v1", "--steps", "-3"], "expected a positive whole number"),
        (["bench", "gym::CartPole-v1", "--seed", "-1"], "expected a seed in [0, 2**32), got -1"),
        (["bench", "gym:CartPole-v1"], "did you mean 'gym::CartPole-v1'"),
        (["bench", "gym::CartPole-v1", "--num-envs", "100000000"], "would need about"),
        (["bench", "brax::antt"], "brax has no environment 'antt'. Did you mean 'ant'?"),
        (["evaluate", "gym::CartPole-v1", "--seed", "-1"], "expected a seed in [0, 2**32), got -1"),
        (["evaluate", "gym::CartPole-v1", "--sigma", "nan"], "expected a finite positive number, got 'nan'"),
        (["evaluate", "gym::CartPole-v1", "--sigma", "-1"], "expected a finite positive number"),
        (
            ["evaluate", "gym::CartPole-v1", "--sigma", "1e308"],
            "--sigma 1e+308: random parameters that large",
        ),
        (["evaluate", "gym::CartPole-v1", "--policy", "Linear(3, 2)"], "vectors of length 4"),
        (["evaluate", "gym::CartPole-v1", "--policy", "Linear(4, 3)"], "needs one score per discrete action"),
        (["evaluate", "gym::FrozenLake-v1", "--policy", "Linear(1, act_length)"], "vectors of length 16"),
        (["evaluate", "gym::CartPole-v1", "--policy", "Linear(50000, 50000)"], "more than the limit"),
        (["evaluate", "gym::CartPole-v1", "--workers", "0"], "expected a positive whole number"),
        (["evaluate", "gym::CartPole-v1", "--randomize", "masspole=2:1"], "takes name=low:high"),
        (["evaluate", "gym::CartPole-v1", "--randomize", "masspole"], "takes name=low:high"),
        (
            ["evaluate", "gym::CartPole-v1", "--randomize", "maspole=0.5:2"],
            "--randomize: scale() names 'maspole'",
        ),
        (
            ["evaluate", "gym::FrozenLake-v1", "--randomize", "g=1:2"],
            "--randomize: gym::FrozenLake-v1 lets no parameter vary per sub-env",
        ),
        (
            ["evaluate", "brax::fast", "--workers", "2"],
            "--workers 2: evaluate(num_workers=2) makes the env again",
        ),
    ],
)
def test_bad_arguments_exit_non_zero_with_a_one_line_error(args, expected):
    if "brax::" in args[1]:
        pytest.importorskip("vecrl_brax")
    result = vecrl(*args)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert len([line for line in result.stderr.splitlines() if "error" in line]) == 1


def test_a_missing_command_plugin_is_named_with_the_reason():
    environment = {**os.environ, "VECRL_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run(
        [VECRL, "evaluate", "gym::CartPole-v1"], capture_output=True, text=True, timeout=300, env=environment
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "'vecrl evaluate' is added by the package vecrl-evaluate" in result.stderr
    assert "VECRL_DISABLE_PLUGIN_AUTOLOAD is set" in result.stderr


def test_help_shows_the_defaults():
    result = vecrl("evaluate", "--help")
    assert "(default: 64)" in result.stdout and "(default: 0.5)" in result.stdout


def test_a_brax_command_announces_its_compile_and_prints_no_warp_notice():
    pytest.importorskip("vecrl_brax")
    result = vecrl("bench", "brax::fast", "--num-envs", "2", "--steps", "20")
    assert result.returncode == 0, result.stderr
    assert "brax::fast: compiling the first reset and step" in result.stderr
    assert re.search(r"brax::fast: compiled in \d+\.\d s", result.stderr), result.stderr
    assert "Failed to import" not in result.stdout + result.stderr
    assert "40 env-steps" in result.stdout


def test_version_names_every_installed_vecrl_package():
    result = subprocess.run([VECRL, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "vecrl-core 0." in result.stdout and "vecrl-policy 0." in result.stdout


def test_help_shows_examples_and_each_default_once():
    top = subprocess.run([VECRL, "--help"], capture_output=True, text=True, timeout=60).stdout
    assert "examples:\n  vecrl backends" in top
    evaluate_help = subprocess.run(
        [VECRL, "evaluate", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    flat = " ".join(evaluate_help.split())
    assert "(default: one per CPU of the cluster)" in flat and "(default: None)" not in flat
    assert flat.count("default") == flat.count("(default:")  # no option says its default twice


def test_network_strings_take_both_spellings_of_the_lengths():
    for network in ["Linear(obs, 8) >> Tanh() >> Linear(8, act)", "Linear(obs_length, act_length)"]:
        result = subprocess.run(
            [VECRL, "evaluate", "gym::CartPole-v1", "--popsize", "4", "--policy", network],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        assert "(stepped path)" in result.stdout


def test_evaluate_says_a_brax_env_ran_as_one_compiled_program():
    pytest.importorskip("vecrl_brax")
    result = vecrl(
        "evaluate", "brax::fast", "--popsize", "4", "--num-envs", "2", "--policy", "Linear(obs, act)"
    )
    assert result.returncode == 0, result.stderr
    assert "(fused path)" in result.stdout
    # the program's compile is said and left out of the rate: "compiled in 3.1 s, then 48 env-steps in ..."
    assert (
        "compiling the rollout of 4 rows as one jax program" in result.stderr
        and "compiled in" in result.stderr
    )
    assert re.search(r"compiled in \d+\.\d s, then [\d,]+ env-steps in", result.stdout), result.stdout


@pytest.mark.races
@pytest.mark.parametrize("imported", ["vecrl.command", "vecrl.cli", "torch"])
def test_ctrl_c_while_the_command_starts_is_one_line_and_status_130(imported):
    # the first second imports torch, gymnasium and the plugins: Ctrl-C then is no traceback either. Python
    # says each import as it completes (PYTHONPROFILEIMPORTTIME): the signal goes once IMPORTED is in, so it
    # lands where it is meant to, however slow the machine (vecrl.cli: the plugins are loaded; torch: the env
    # is being made)
    process = subprocess.Popen(
        [VECRL, "bench", "gym::CartPole-v1", "--num-envs", "4", "--steps", "1000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    while not re.search(rf"\|\s+{re.escape(imported)}$", line := process.stderr.readline()):
        assert line, f"the command ended before importing {imported}"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-3000:]
    assert "interrupted" in stderr and "Traceback" not in stderr


@pytest.mark.races
def test_ctrl_c_in_the_command_s_imports_exits_at_once_raising_nothing():
    # a KeyboardInterrupt raised inside torch.distributed's import aborted the command (status -6, 1 run in 60)
    code = (
        "import os, signal, time\n"
        "from vecrl.command import ctrl_c_exits_at_once\n"
        "try:\n"
        "    with ctrl_c_exits_at_once('vecrl: interrupted'):\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(30)\n"
        "except BaseException as error:\n"
        "    print('raised', type(error).__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "vecrl: interrupted\n")


def test_the_handler_before_ctrl_c_exits_at_once_is_back_after_it():
    from vecrl.command import ctrl_c_exits_at_once

    before = signal.getsignal(signal.SIGINT)
    with ctrl_c_exits_at_once("vecrl: interrupted"):
        assert signal.getsignal(signal.SIGINT) is not before
    assert signal.getsignal(signal.SIGINT) is before


#: A script whose Ctrl-C lands inside a finalizer, where Python reports the KeyboardInterrupt and drops it
#: (as it did inside jax's garbage-collector callback, 2 runs of 25 of ``vecrl evolve``).
CTRL_C_IN_A_FINALIZER = (
    "import os, signal, time\n"
    "class Dropping:\n"
    "    def __del__(self):\n"
    "        os.kill(os.getpid(), signal.SIGINT)\n"
    "        time.sleep(0.5)  # the handler runs here: its KeyboardInterrupt is reported and dropped\n"
    "def ctrl_c_dropped():\n"
    "    Dropping()\n"
)


def test_a_ctrl_c_that_python_dropped_is_raised_again_by_the_loop_that_checks():
    code = CTRL_C_IN_A_FINALIZER + (
        "from vecrl.interrupts import ctrl_c_remembered, raise_if_ctrl_c_pressed\n"
        "with ctrl_c_remembered():\n"
        "    ctrl_c_dropped()\n"
        "    print('dropped')\n"
        "    try:\n"
        "        raise_if_ctrl_c_pressed()\n"
        "    except KeyboardInterrupt:\n"
        "        print('raised again')\n"
        "raise_if_ctrl_c_pressed()  # outside the block: forgotten\n"
        "print('forgotten')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n") == ["dropped", "raised again", "forgotten", ""], result.stderr
    assert "Exception ignored" in result.stderr and "KeyboardInterrupt" in result.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["bench", "gym::CartPole-v1", "--num-envs", "2", "--steps", "1000000"],
        ["evaluate", "gym::CartPole-v1", "--num-envs", "2", "--popsize", "100000"],
    ],
    ids=["bench", "evaluate"],
)
def test_a_command_stops_on_a_ctrl_c_that_python_dropped(command):
    code = CTRL_C_IN_A_FINALIZER + (
        "import sys, gymnasium.envs.classic_control\n"
        "from vecrl.cli import main\n"
        "step = gymnasium.envs.classic_control.CartPoleEnv.step\n"
        "calls = [0]\n"
        "def step_once_dropping(self, action):\n"
        "    calls[0] += 1\n"
        "    if calls[0] == 500:\n"
        "        ctrl_c_dropped()\n"
        "    return step(self, action)\n"
        "gymnasium.envs.classic_control.CartPoleEnv.step = step_once_dropping\n"
        f"sys.exit(main({command!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 130, result.stderr[-3000:]
    assert f"vecrl {command[0]}: interrupted" in result.stderr.splitlines()[-1]
    assert "Exception ignored" in result.stderr


def test_import_vecrl_alone_imports_neither_torch_nor_gymnasium():
    code = "import sys, vecrl; print(sorted({'torch', 'gymnasium'} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]", result.stderr
    code = "import vecrl; print(vecrl.compat.GYMNASIUM_1 in (True, False), vecrl.make_vector_env.__name__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["True", "make_vector_env"], result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["backends"],
        ["evaluate", "--help"],
        ["evaluate"],
        ["evolve", "--help"],
        ["evolve", "--out", "runs/x"],
        ["record"],
        ["bogus"],
        ["bench", "--steps", "0"],
    ],
    ids=lambda args: " ".join(args),
)
def test_the_command_answers_help_version_backends_and_usage_mistakes_without_torch_gymnasium_or_jax(args):
    # the command as its script runs it, then which heavy modules that imported (each costs seconds on a busy
    # machine, paid on every typo)
    code = (
        "import sys\n"
        "from vecrl.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('torch', 'gymnasium', 'jax') if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.stderr.strip().splitlines()[-1] == "[]", result.stderr[-2000:]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["evolve", "gym::CartPol-v1", "--out", "x"],
            "gymnasium has no environment 'CartPol-v1'. Did you mean",
        ),
        (["evaluate", "gymm::CartPole-v1"], "No vecrl backend serves the prefix 'gymm'"),
        (["bench", "gym::Foo-v0"], "gymnasium has no environment 'Foo-v0'"),
        (["bench", "brax::antt"], "brax has no environment 'antt'. Did you mean 'ant'?"),
        (["evaluate", "playground::Cartpole"], "MuJoCo Playground has no environment 'Cartpole'"),
        (["record", "nosuch::x", "--policy", "p", "--out", "v.mp4"], "No vecrl backend serves the prefix"),
        (["evolve", "gym::CartPole-v1", "--out", "run", "--generations", "2"], "'run' already holds a run"),
        (["evolve", "--resume", "run", "--popsize", "16"], "--popsize 16 (the run was started with 8)"),
        (["evolve", "--resume", "nothing"], "--resume: "),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_name_and_folder_mistakes_are_refused_before_torch_or_evotorch_is_imported(tmp_path, args, said):
    # a newcomer's typo or reused --out costs what argparse's mistakes cost, not the seconds of the imports
    from vecrl_evotorch.runs import RunFolder

    run = RunFolder.create(tmp_path / "run", {"env": "gym::CartPole-v1", "popsize": 8})
    run.save_state({"generation": 1})
    run.release()
    code = (
        "import sys\n"
        "from vecrl.cli import main\n"
        "try:\n"
        f"    status = main({args!r})\n"
        "except SystemExit as exit:\n"
        "    status = exit.code\n"
        "print(status, sorted(m for m in ('torch', 'jax', 'evotorch') if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    *said_lines, last = result.stderr.strip().splitlines()
    assert last == "2 []" and said in said_lines[-1], result.stderr[-2000:]


@pytest.mark.parametrize(
    ("word", "said"),
    [
        ("--versoin", "unrecognized option '--versoin'. Did you mean '--version'?"),
        ("-x", "unrecognized option '-x'"),
    ],
)
def test_an_unknown_option_before_the_command_is_named(capsys, word, said):
    from vecrl.cli import main

    with pytest.raises(SystemExit) as exit:
        main([word])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and said in line and "COMMAND" not in line, line


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (
            ["evolve", "gym::CartPole-v1", "--popsise", "64"],
            "vecrl evolve: error: unrecognized arguments: --popsise 64. Did you mean '--popsize'?",
        ),
        (  # a prefix is no abbreviation of the option: it is refused, not taken for --popsize
            ["evolve", "gym::CartPole-v1", "--popsiz", "64"],
            "vecrl evolve: error: unrecognized arguments: --popsiz 64. Did you mean '--popsize'?",
        ),
        (
            ["evaluate", "gym::CartPole-v1", "--episodez=2"],
            "vecrl evaluate: error: unrecognized arguments: --episodez=2. Did you mean '--episodes'?",
        ),
    ],
)
def test_a_command_names_its_own_unknown_option_and_the_closest_it_has(capsys, words, said):
    from vecrl.cli import main

    with pytest.raises(SystemExit) as exit:
        main(words)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert exit.value.code == 2 and line.startswith(said), line


@pytest.mark.parametrize("command", ["evaluate", "evolve"])
def test_device_is_refused_in_one_line_where_this_torch_cannot_use_it(tmp_path, capsys, command):
    from vecrl.cli import main

    def words(device: str) -> list[str]:
        run = ["--generations", "1", "--out", str(tmp_path / device)] if command == "evolve" else []
        return [command, "gym::CartPole-v1", "--popsize", "8", *run, "--device", device]

    assert main(words("cuda:99")) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert (
        line.startswith(f"vecrl {command}: error: --device cuda:99: ")
        and "cannot be used by this torch" in line
    )
    assert not (tmp_path / "cuda:99").exists()
    assert main(words("cpu")) == 0
