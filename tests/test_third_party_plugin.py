"""A third-party backend, installed with pip as a user would, is found through its entry point."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def pip_install_into(target: Path, *packages: str) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            *(str(FIXTURES / p) for p in packages),
        ],
        check=True,
    )
    return target


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory):
    return pip_install_into(tmp_path_factory.mktemp("toy-site"), "vecrl-toy")


@pytest.fixture(scope="module")
def drift_site(tmp_path_factory):
    pytest.importorskip("vecrl_jax")
    return pip_install_into(tmp_path_factory.mktemp("drift-site"), "vecrl-drift")


@pytest.fixture(scope="module")
def count_site(tmp_path_factory):
    return pip_install_into(tmp_path_factory.mktemp("count-site"), "vecrl-count")


@pytest.fixture(scope="module")
def clone_site(tmp_path_factory):
    return pip_install_into(tmp_path_factory.mktemp("clone-site"), "vecrl-toy-clone")


def source_lines(fixture: str) -> int:
    """The lines of a fixture plugin's Python source: what its author wrote."""
    return sum(len(path.read_text().splitlines()) for path in (FIXTURES / fixture / "src").rglob("*.py"))


def run_python(code: str, *sites: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VECRL_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join(str(s) for s in sites)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env
    )


def test_a_fresh_process_finds_the_plugin_by_its_prefix(toy_site):
    result = run_python(
        """
        import sys, torch, vecrl
        env = vecrl.make_vector_env("toy::Counter", num_envs=3, toy_kwargs={"length": 2})
        obs, info = env.reset()
        obs, reward, terminated, truncated, info = env.step(torch.tensor([1, 0, 1]))
        obs, reward, terminated, truncated, info = env.step(torch.tensor([1, 0, 1]))
        print(reward.tolist())
        print(truncated.tolist())
        print(sorted(m for m in ("vecrl_gym", "vecrl_brax", "jax") if m in sys.modules))
        print(vecrl.backend_distribution("toy"))
        """,
        toy_site,
    )
    assert result.returncode == 0, result.stderr
    rewards, truncated, loaded, dist = result.stdout.strip().splitlines()
    assert rewards == "[1.0, 0.0, 1.0]" and truncated == "[True, True, True]"
    assert loaded == "[]", "asking for toy:: must load only the 'toy' entry point"
    assert dist == "('vecrl-toy', '0.0.1')"


def test_the_installed_plugin_passes_the_backend_checks(toy_site):
    result = run_python(
        """
        from vecrl.testing import check_backend, maker
        from vecrl_toy import make_toy_env
        check_backend(make_toy_env, "Counter", num_envs=4)
        check_backend(maker("toy"), "Counter", num_envs=4)
        print("ok")
        """,
        toy_site,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_a_third_party_jax_backend_passes_the_conformance_spec_and_runs_evaluate_fused(drift_site):
    """vecrl-drift (tests/fixtures): a pure-jax env written to vecrl-jax's protocol, in two short files."""
    result = run_python(
        """
        import torch, vecrl
        from vecrl import testing
        testing.run_conformance("drift", [{"env": "point", "kwargs": {"episode_length": 4}}])
        print(vecrl.backend_distribution("drift"))
        try:
            from vecrl_policy import Policy
            from vecrl_evaluate import evaluate
        except ImportError:
            print("fused stepped")
        else:
            env = vecrl.make_vector_env("drift::point", num_envs=8, num_episodes=1, episode_length=20)
            policy = Policy("Linear(1, 8) >> Tanh() >> Linear(8, 1)")
            population = 0.3 * torch.randn(20, policy.parameter_length, generator=torch.Generator().manual_seed(0))
            fused, stepped = evaluate(policy, env, population, seed=0), evaluate(policy, env, population, seed=0, fused=False)
            assert torch.equal(fused.steps, stepped.steps), (fused.steps, stepped.steps)
            torch.testing.assert_close(fused.total_return, stepped.total_return, rtol=1e-5, atol=1e-5)
            print(fused.path, stepped.path)
        """,
        drift_site,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == ["('vecrl-drift', '0.0.1')", "fused stepped"]
    assert source_lines("vecrl-drift") < 80


def test_a_third_party_host_backend_passes_the_conformance_spec_and_is_listed_without_importing_its_env(
    count_site,
):
    """vecrl-count (tests/fixtures): counters on vecrl's episode engine, in two short files, its make named by
    import path."""
    result = run_python(
        """
        import sys, torch, vecrl
        from vecrl import testing
        print([b.prefix for b in vecrl.list_backends() if b.prefix == "count"], "vecrl_count.env" in sys.modules)
        testing.run_conformance("count", [{"env": "counter"}])
        try:
            from vecrl_policy import Policy
            from vecrl_evaluate import evaluate
        except ImportError:
            print("True")
        else:  # a row's results do not depend on how many sub-envs run the rows
            policy = Policy("Linear(1, 2)")
            population = torch.randn(7, policy.parameter_length, generator=torch.Generator().manual_seed(0))
            results = [
                evaluate(policy, vecrl.make_vector_env("count::counter", num_envs=n, num_episodes=2), population, num_episodes=2, seed=3)
                for n in (2, 5)
            ]
            print(torch.equal(results[0].total_return, results[1].total_return) and torch.equal(results[0].steps, results[1].steps))
        """,
        count_site,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == ["['count'] False", "True"]
    assert source_lines("vecrl-count") < 80


def test_a_plugin_written_to_the_contract_before_gets_the_torch_options(toy_site):
    """The toy's make takes force_classic_api, discrete_to_continuous_act and clip_actions and returns a
    TorchWrapper (the contract before make_vector_env applied them itself): it keeps working, options too."""
    result = run_python(
        """
        import torch, vecrl
        env = vecrl.make_vector_env(
            "toy::Counter", num_envs=2, force_classic_api=True, discrete_to_continuous_act=True
        )
        print(env.reset().tolist())
        obs, reward, done, info = env.step(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
        print(reward.tolist(), env.single_action_space.shape)
        print(type(vecrl.make_vector_env("toy::Counter", num_envs=2, array_type="numpy").reset()[0]).__name__)
        """,
        toy_site,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines() == ["[[0.0], [0.0]]", "[1.0, 0.0] (2,)", "ndarray"]


def test_listing_backends_loads_every_plugin(toy_site):
    result = run_python("import vecrl; print([b.prefix for b in vecrl.list_backends()])", toy_site)
    assert result.returncode == 0, result.stderr
    assert "'toy'" in result.stdout


def test_two_distributions_claiming_one_prefix_is_an_error_naming_both(toy_site, clone_site):
    result = run_python(
        'import vecrl; vecrl.make_vector_env("toy::Counter", num_envs=1)', toy_site, clone_site
    )
    assert result.returncode != 0
    assert "vecrl-toy 0.0.1" in result.stderr and "vecrl-toy-clone 0.0.2" in result.stderr


def test_an_in_process_backend_cannot_take_an_installed_prefix(toy_site):
    result = run_python(
        """
        import vecrl
        try:
            vecrl.register_backend(vecrl.Backend("toy", make=lambda name, **kw: None))
        except ValueError as error:
            print(error)
        """,
        toy_site,
    )
    assert "already provided by distribution vecrl-toy 0.0.1" in result.stdout, result.stderr


def test_autoload_can_be_switched_off(toy_site):
    env = {**os.environ, "PYTHONPATH": str(toy_site), "VECRL_DISABLE_PLUGIN_AUTOLOAD": "1"}
    code = 'import vecrl; vecrl.make_vector_env("toy::Counter")'
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode != 0 and "VECRL_DISABLE_PLUGIN_AUTOLOAD is set" in result.stderr


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory):
    return pip_install_into(tmp_path_factory.mktemp("broken-site"), "vecrl-broken")


def run_vecrl(*args: str, site: Path) -> subprocess.CompletedProcess:
    return run_python(f"import sys; from vecrl.cli import main; sys.exit(main({list(args)!r}))", site)


def test_a_broken_backend_plugin_is_listed_with_its_error_and_the_others_still_are(broken_site):
    result = run_vecrl("backends", site=broken_site)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    broken = next(line for line in lines if line.startswith("broken "))
    assert "broken" in broken.split()[1] and "No module named 'vecrl_broken_simulator'" in broken
    assert any(line.startswith("gym ") and "vecrl-gym" in line for line in lines)


def test_an_unknown_prefix_says_which_installed_plugin_is_broken_and_does_not_list_it(broken_site):
    result = run_python(
        """
        import vecrl
        try:
            vecrl.make_vector_env("bad::x", num_envs=1)
        except ValueError as error:
            print(error)
        """,
        broken_site,
    )
    message = result.stdout
    listed = message.split("Registered prefixes: ")[1].split(".")[0].split(", ")
    assert "gym" in listed and "broken" not in listed, message
    assert "The plugin 'broken' is installed but broken: ModuleNotFoundError: No module named" in message, (
        message
    )


def test_a_broken_command_plugin_leaves_the_built_in_commands_working(broken_site):
    result = run_vecrl("bench", "gym::CartPole-v1", "--num-envs", "2", "--steps", "5", site=broken_site)
    assert result.returncode == 0, result.stderr
    assert "10 env-steps" in result.stdout
    assert "warning: the command plugin 'broken' from vecrl-broken 0.0.1 failed to load" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def dup_site(tmp_path_factory):
    return pip_install_into(tmp_path_factory.mktemp("dup-site"), "vecrl-dup")


def test_a_plugin_listing_another_prefix_than_its_entry_point_is_refused_whatever_ran_before(dup_site):
    # vecrl-dup's entry point is named "dup" and lists the prefix "gym", which vecrl-gym serves
    result = run_python(
        """
        import vecrl
        def gym_works():
            return vecrl.make_vector_env("gym::CartPole-v1", num_envs=1).num_envs == 1
        print(gym_works())
        backends, broken = vecrl.registry.installed_backends()
        print(sorted(broken), "gym" in [b.prefix for b in backends])
        print(gym_works())
        for call in (vecrl.list_backends, lambda: vecrl.make_vector_env("dup::x", num_envs=1)):
            try:
                call()
            except ValueError as error:
                print(error)
        """,
        dup_site,
    )
    assert result.returncode == 0, result.stderr
    before, listed, after, *errors = result.stdout.strip().splitlines()
    assert before == after == "True" and listed == "['dup'] True"
    assert len(errors) == 2
    for error in errors:
        assert (
            "vecrl-dup 0.0.3 is installed under the entry point 'dup' but lists the backend prefix 'gym'"
            in error
        )
    command = run_vecrl("backends", site=dup_site)
    assert command.returncode == 0 and "Traceback" not in command.stderr
    assert any(line.startswith("dup ") and "broken" in line for line in command.stdout.splitlines())


@pytest.mark.parametrize(
    ("site", "env", "obs_length", "act_length"),
    [("count", "count::counter", 1, 2), ("drift", "drift::point", 1, 1)],
)
def test_third_party_backends_that_draw_are_recorded_by_vecrl_record(
    request, tmp_path, site, env, obs_length, act_length
):
    """The rendering member of the contract (vecrl.rendering): a host backend's render_snapshot (vecrl-count) and a
    JaxEnv's render(states) (vecrl-drift) are all vecrl record needs."""
    pytest.importorskip("vecrl_evotorch")
    sites = {"count": "count_site", "drift": "drift_site"}
    champion = tmp_path / "champion.pickle"
    import pickle

    import torch

    with open(champion, "wb") as file:
        pickle.dump({"policy": torch.nn.Linear(obs_length, act_length)}, file)
    video = tmp_path / "video.mp4"  # (a GIF would merge frames that repeat)
    result = run_python(
        f"""
        import sys
        from vecrl.cli import main
        sys.exit(main(["record", "{env}", "--policy", r"{champion}", "--out", r"{video}", "--max-steps", "6"]))
        """,
        request.getfixturevalue(sites[site]),
    )
    assert result.returncode == 0, result.stderr
    frames = int(
        re.search(r"; (\d+) frames", result.stdout).group(1)
    )  # (vecrl record's line: `...; N frames saved to`)
    import imageio.v3 as imageio

    decoded = list(imageio.imiter(video))
    assert 2 <= frames <= 7 and len(decoded) == frames and decoded[0].shape == (16, 64, 3)
    # (the backend drew, not a blank canvas; MP4 is lossy, a one-pixel line is not white to the bit)
    assert any(frame.max() > 128 for frame in decoded)
