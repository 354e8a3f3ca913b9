"""The fused program's loop in the shape a GPU needs (vecrl_evaluate.fused): ``steps_per_check`` env steps
between two checks of its predicate (a ``lax.scan`` inside the ``lax.while_loop``), finished slots restarted
by selection rather than ``lax.cond``, and polls of the host: the results are the same, bit for bit, whatever
``steps_per_check`` and the polls (on Playground, and with selection or ``cond``, which XLA compiles apart, to
float rounding: MJX's step rounds its last bits otherwise in a scan or a branch of its own), and the compiled
program reads as asked.
A configuration compiles one program, whatever its calls; a Ctrl-C stops a long call at its next poll."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

import vecrl
from vecrl_evaluate import evaluate, fused
from vecrl_policy import Policy

pytest.importorskip("jax")

STEPS_PER_CHECK = (1, 4, 16, 64)
#: Refills (more rows than slots), three episodes a row, action noise and shaping: every restart path runs.
OPTIONS = dict(seed=3, num_episodes=3, action_noise_stdev=0.1, decrease_rewards_by=0.5)


def results_of_each_shape(
    env_name: str, monkeypatch: pytest.MonkeyPatch, **env_kwargs
) -> dict[bool, list[tuple[torch.Tensor, ...]]]:
    """The results of one population for each ``steps_per_check``, with restarts by ``cond`` (False) and by
    selection (True)."""
    env = vecrl.make_vector_env(env_name, num_envs=8, num_episodes=3, **env_kwargs)
    obs, act = env.single_observation_space.shape[0], env.single_action_space.shape[0]
    policy = Policy(f"Linear({obs}, 8) >> Tanh() >> Linear(8, {act})")
    rows = 0.5 * torch.randn(20, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    results: dict[bool, list[tuple[torch.Tensor, ...]]] = {False: [], True: []}
    for select in results:
        for index, steps in enumerate(STEPS_PER_CHECK):
            # every other one polling the host at each check
            monkeypatch.setattr(fused, "FIRST_POLL", 1 if index % 2 else fused.UNBOUNDED)
            monkeypatch.setattr(fused, "POLL_SECONDS", 0.0 if index % 2 else fused.POLL_SECONDS)
            result = evaluate(policy, env, rows, steps_per_check=steps, select_restarts=select, **OPTIONS)
            assert result.path == "fused"
            results[select].append((result.total_return, result.episodes, result.steps))
    env.close()
    return results


def assert_bit_equal_for_every_steps_per_check(
    results: dict[bool, list[tuple[torch.Tensor, ...]]], *, returns_to_rounding: bool = False
) -> None:
    for select, of_each in results.items():
        first = of_each[0]
        assert (first[1] == OPTIONS["num_episodes"]).all()
        for steps, other in zip(STEPS_PER_CHECK[1:], of_each[1:], strict=True):
            assert torch.equal(first[1], other[1]) and torch.equal(first[2], other[2]), (select, steps)
            if returns_to_rounding:
                torch.testing.assert_close(first[0], other[0], rtol=1e-6, atol=1e-5)
            else:
                assert torch.equal(first[0], other[0]), (select, steps, first[0], other[0])
    by_cond, by_selection = results[False][0], results[True][0]
    assert torch.equal(by_cond[1], by_selection[1]) and torch.equal(by_cond[2], by_selection[2])
    torch.testing.assert_close(by_cond[0], by_selection[0], rtol=1e-6, atol=1e-5)


@pytest.mark.slow
def test_brax_results_are_bit_equal_for_every_loop_shape_and_polls(monkeypatch):
    pytest.importorskip("vecrl_brax")
    results = results_of_each_shape("brax::inverted_pendulum", monkeypatch, episode_length=60)
    assert_bit_equal_for_every_steps_per_check(results)


@pytest.mark.slow
def test_playground_results_are_bit_equal_for_every_loop_shape_and_polls(monkeypatch):
    pytest.importorskip("vecrl_playground")
    results = results_of_each_shape("playground::CartpoleBalance", monkeypatch, episode_length=30)
    # (MJX's step inside a scan of K steps is compiled otherwise in its last bits than one step a check, now that
    # the program hands out its results alone: the same episodes and steps, returns to float rounding)
    assert_bit_equal_for_every_steps_per_check(results, returns_to_rounding=True)


def program_text(steps: int, select: bool) -> str:
    pytest.importorskip("vecrl_brax")
    env = vecrl.make_vector_env("brax::fast", num_envs=4, num_episodes=2, episode_length=9)
    policy = Policy("Linear(2, 8) >> Tanh() >> Linear(8, 1)")
    fused.PROGRAMS.clear()
    evaluate(
        policy,
        env,
        torch.randn(6, policy.parameter_length),
        seed=0,
        num_episodes=2,
        steps_per_check=steps,
        select_restarts=select,
    )
    (programs,) = fused.PROGRAMS.values()
    return programs.program.as_text()  # type: ignore[no-any-return]


def conditionals_in_the_loop(text: str) -> list[str]:
    """The conditionals of the program's text inside its loop but the poll's (it answers (stop, checks to the
    next poll): a (pred, s32) pair), which runs once a check."""
    return [
        line
        for line in text.splitlines()
        if " conditional(" in line and "/while" in line and "(pred[], s32[]) conditional(" not in line
    ]


def test_the_gpu_shape_compiles_no_conditional_in_its_loop_and_one_predicate_per_k_steps():
    """Read from the program compiled for this CPU: asked for the GPU's shape (4 steps a check, restarts by
    selection), the loop holds no conditional, and its one predicate (the outer while) runs every 4 steps
    (the inner while, a scan, runs exactly 4); the CPU's shape keeps its conditional and one loop."""
    gpu = program_text(4, True)
    loops = re.findall(r"while\(.*", gpu)
    trip_counts = [re.findall(r'"known_trip_count":\{"n":"(\d+)"\}', loop) for loop in loops]
    assert conditionals_in_the_loop(gpu) == []
    assert sorted(trip_counts) == [[], ["4"]]  # the predicate's loop, and the 4 steps between two checks
    cpu = program_text(1, False)
    assert conditionals_in_the_loop(cpu) and len(re.findall(r"while\(.*", cpu)) == 1


def test_a_configuration_compiles_one_program_whose_polls_change_nothing(monkeypatch):
    """Every call of a configuration runs its one program (no second one after a few calls); polling the
    host at every check, which hears the rows done, gives the same results, bit for bit."""
    pytest.importorskip("vecrl_brax")
    env = vecrl.make_vector_env("brax::fast", num_envs=4, num_episodes=2, episode_length=9)
    policy = Policy("Linear(2, 8) >> Tanh() >> Linear(8, 1)")
    rows = torch.randn(6, policy.parameter_length, generator=torch.Generator().manual_seed(1))
    fused.PROGRAMS.clear()
    compiled = []
    results = []
    for call in range(5):
        heard: list[int] = []
        if call == 4:  # a poll at every check
            monkeypatch.setattr(fused, "FIRST_POLL", 1)
            monkeypatch.setattr(fused, "POLL_SECONDS", 0.0)
        result = evaluate(
            policy, env, rows, seed=5, num_episodes=2, action_noise_stdev=0.1, progress=heard.append
        )
        results.append(result)
        compiled.append(result.compile_seconds > 0)
    assert compiled == [True, False, False, False, False] and len(fused.PROGRAMS) == 1
    assert len(heard) > 3 and heard == sorted(heard)  # 0 first, then the rows done at each poll
    for result in results[1:]:
        assert torch.equal(result.total_return, results[0].total_return)
        assert torch.equal(result.steps, results[0].steps) and torch.equal(
            result.episodes, results[0].episodes
        )


LONG_CALL = """
import sys, torch, vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
env = vecrl.make_vector_env("brax::fast", num_envs=4, episode_length=1000)
policy = Policy("Linear(2, 1)")
heard = []
def progress(rows):
    heard.append(rows)
    if len(heard) == 2:  # (the program's first poll: it runs)
        print("polled", flush=True)
evaluate(policy, env, torch.zeros(4, policy.parameter_length), num_episodes=100_000, seed=0, progress=progress)
print("finished", flush=True)
"""


@pytest.mark.races
def test_a_ctrl_c_stops_a_long_fused_call_at_its_next_poll():
    pytest.importorskip("vecrl_brax")
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(LONG_CALL)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "polled\n"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=300)  # (a bound on a hang: 10**8 steps take hours)
    finally:
        process.kill()
        process.wait()
    assert "KeyboardInterrupt" in stderr and "finished" not in stdout, stderr[-2000:]
