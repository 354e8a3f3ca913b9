"""evaluate(num_workers=2)'s faults with real worker processes: an exception in a worker reaches the caller
as itself with the worker's traceback, a worker killed from outside (between calls or mid-call) loses
nothing: its rows run elsewhere with equal results, a warning names it, and a new worker replaces it;
a process whose rows run longer takes fewer rows; closing the env leaves no process running."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import gymnasium as gym
import pytest
import torch

import vecrl
import vecrl.testing
from vecrl.checks import SubEnvError
from vecrl.processes import RemoteTraceback
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy


@pytest.fixture
def no_process_left():
    with vecrl.testing.no_process_left():
        yield


class FailsInAWorker(gym.Wrapper):
    """CartPole whose step raises in a worker process only; in the caller it runs fine, slowly (the error
    reaches the caller while its own rows still run)."""

    def step(self, action):
        if multiprocessing.parent_process() is not None:
            raise ZeroDivisionError("boom in a worker")
        time.sleep(0.05)
        return self.env.step(action)


def cartpole(**kwargs) -> tuple[vecrl.TorchWrapper, Policy, torch.Tensor]:
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1, **kwargs)
    policy = Policy("Linear(4, 2)")
    return env, policy, torch.randn(8, policy.parameter_length, generator=torch.Generator().manual_seed(0))


def test_an_exception_in_a_worker_is_raised_as_itself_with_the_workers_traceback(no_process_left):
    env, policy, rows = cartpole(wrappers=[FailsInAWorker])
    try:
        with pytest.raises(
            SubEnvError,
            match=r"Population row [4-7] \(on sub-env [0-3] of the env running it\) raised ZeroDivisionError in"
            r" step\(\): boom in a worker",
        ) as caught:
            evaluate(policy, env, rows, num_workers=2)
        # each process has 8 / (2 * 2) sub-envs; the worker starts the last rows, 6 and 7, on its two
        assert caught.value.row == 6 + caught.value.index
        original = caught.value.__cause__
        assert isinstance(original, ZeroDivisionError) and str(original) == "boom in a worker"
        assert isinstance(original.__cause__, RemoteTraceback)
        worker_traceback = str(original.__cause__)
        assert "In the worker process" in worker_traceback
        assert 'raise ZeroDivisionError("boom in a worker")' in worker_traceback
        assert len(evaluate(policy, env, rows).steps) == 8  # the env itself is fine
    finally:
        env.close()


@pytest.mark.races
def test_a_worker_killed_between_calls_has_its_rows_run_here_and_is_replaced(no_process_left):
    env, policy, rows = cartpole()
    try:
        expected = evaluate(policy, env, rows, seed=3)
        evaluate(policy, env, rows, seed=3, num_workers=2)
        (worker,) = env._evaluation_workers.workers
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.join(5)
        with pytest.warns(
            UserWarning,
            match=rf"pid {worker.process.pid}\) died \(signal SIGKILL\).*The rows meant for it ran elsewhere",
        ):
            result = evaluate(policy, env, rows, seed=3, num_workers=2)
        assert torch.equal(result.total_return, expected.total_return)
        (new_worker,) = env._evaluation_workers.workers
        assert new_worker.process.pid != worker.process.pid and new_worker.process.is_alive()
        again = evaluate(policy, env, rows, seed=3, num_workers=2)
        assert torch.equal(again.total_return, expected.total_return)
    finally:
        env.close()


class DiesInAWorker(gym.Wrapper):
    """CartPole that kills its own process (SIGKILL) on its 5th step in a worker process only."""

    def __init__(self, env):
        super().__init__(env)
        self.steps = 0

    def step(self, action):
        self.steps += 1
        if self.steps == 5 and multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return self.env.step(action)


@pytest.mark.races
def test_a_worker_killed_mid_call_loses_nothing_its_rows_run_elsewhere_with_equal_results(no_process_left):
    env, policy, rows = cartpole(wrappers=[DiesInAWorker])
    try:
        expected = evaluate(policy, env, rows, seed=3)
        with pytest.warns(
            UserWarning, match=r"died \(signal SIGKILL\) before sending its results.*ran elsewhere"
        ):
            result = evaluate(policy, env, rows, seed=3, num_workers=2)
        assert torch.equal(result.total_return, expected.total_return)
        assert torch.equal(result.steps, expected.steps)
    finally:
        env.close()


def test_closing_the_env_ends_its_workers_and_garbage_collection_does_too(no_process_left):
    env, policy, rows = cartpole()
    evaluate(policy, env, rows, num_workers=2)
    env.close()
    env.close()  # idempotent
    env, policy, rows = cartpole()
    evaluate(policy, env, rows, num_workers=2)
    del env


class FailsOnItsThirdSubEnv(gym.Wrapper):
    """CartPole that raises in step() on the third sub-env made in its process."""

    made = 0

    def __init__(self, env):
        super().__init__(env)
        FailsOnItsThirdSubEnv.made += 1
        self.fails = FailsOnItsThirdSubEnv.made == 3

    def step(self, action):
        if self.fails:
            raise ZeroDivisionError("boom")
        return self.env.step(action)


def test_a_failing_sub_env_in_one_process_names_its_population_row():
    FailsOnItsThirdSubEnv.made = 0
    env, policy, rows = cartpole(wrappers=[FailsOnItsThirdSubEnv])
    try:
        with pytest.raises(SubEnvError, match=r"Population row 2 \(on sub-env 2 of the env running it\)"):
            evaluate(policy, env, rows)
    finally:
        env.close()


class SaysWhoStarts(gym.Wrapper):
    """CartPole that leaves a file ``<seed>-<pid>`` in ``folder`` for every seeded reset: which process
    started which row (each row's sub-env is reset once with the row's seed)."""

    def __init__(self, env, folder: str):
        super().__init__(env)
        self.folder = folder

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            open(os.path.join(self.folder, f"{seed}-{os.getpid()}"), "x").close()
        return self.env.reset(seed=seed, options=options)


def test_a_process_whose_rows_run_longer_takes_fewer_rows(tmp_path, no_process_left):
    env = vecrl.make_vector_env(
        "gym::CartPole-v1",
        num_envs=4,
        num_episodes=1,
        wrappers=[lambda env: SaysWhoStarts(env, str(tmp_path))],
    )
    policy = Policy("Linear(4, 2)")
    rows = 0.05 * torch.randn(16, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    rows[8:, 4:8] += torch.tensor([0.0, 0.0, 1.0, 1.0])  # action 1 when the pole leans right: long episodes
    try:
        result = evaluate(policy, env, rows, seed=3, num_workers=2)
    finally:
        env.close()
    plain = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_episodes=1)
    assert torch.equal(result.total_return, evaluate(policy, plain, rows, seed=3).total_return)
    plain.close()
    assert (result.steps[:8] < 50).all() and (result.steps[8:] > 100).all()
    row_of = {seed: row for row, seed in enumerate(row_seeds(3, 16))}
    started = [name.split("-") for name in os.listdir(tmp_path)]
    here = {row_of[int(seed)] for seed, pid in started if int(pid) == os.getpid()}
    worker = {row_of[int(seed)] for seed, pid in started if int(pid) != os.getpid()}
    assert len(started) == 16 and here | worker == set(range(16))  # every row started once
    # A fixed split would have given the worker rows 8-15 (100 to 500 steps each) and this process the short
    # ones. The worker starts with the last rows and takes more only as its sub-envs free up, while this
    # process, done with its short rows at once, runs most of the long ones.
    assert not worker & set(range(8)) and len(worker) < 8


@pytest.mark.races
def test_a_worker_that_stops_answering_is_killed_and_its_rows_run_elsewhere(no_process_left, monkeypatch):
    """A worker stopped (SIGSTOP: as a wedged env or a native deadlock would leave it) sends nothing: after
    VECRL_WORKER_SILENCE_SECONDS it is killed, its rows run elsewhere with equal results, and a new worker
    takes its place."""
    monkeypatch.setenv("VECRL_WORKER_SILENCE_SECONDS", "2")
    env, policy, rows = cartpole()
    try:
        expected = evaluate(policy, env, rows, seed=3)
        evaluate(policy, env, rows, seed=3, num_workers=2)
        (worker,) = env._evaluation_workers.workers
        os.kill(worker.process.pid, signal.SIGSTOP)  # (before the call: it never answers this one)
        with pytest.warns(
            UserWarning,
            match=rf"pid {worker.process.pid}\) sent nothing for \d+ s .*and was killed.*ran elsewhere",
        ):
            again = evaluate(policy, env, rows, seed=3, num_workers=2)
        assert torch.equal(again.total_return, expected.total_return)
        (new,) = env._evaluation_workers.workers
        assert new is not worker and new.process.is_alive() and worker.process.exitcode == -signal.SIGKILL
    finally:
        env.close()
