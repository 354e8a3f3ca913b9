"""evaluate(num_workers=2)'s faults with real worker processes: an exception in a worker reaches the caller
as itself with the worker's traceback, a worker killed from outside (between calls or mid-call) loses
nothing: its rows run elsewhere with equal results, a warning names it, and a new worker replaces it, and closing the env leaves no process running."""

from __future__ import annotations

import multiprocessing
import os
import signal

import gymnasium as gym
import pytest
import torch

import vecrl
import vecrl.testing
from vecrl.checks import SubEnvError
from vecrl.processes import RemoteTraceback
from vecrl_policy import Policy, evaluate


@pytest.fixture
def no_process_left():
    with vecrl.testing.no_process_left():
        yield


class FailsInAWorker(gym.Wrapper):
    """CartPole whose step raises in a worker process only (the caller's part runs fine)."""

    def step(self, action):
        if multiprocessing.parent_process() is not None:
            raise ZeroDivisionError("boom in a worker")
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
            evaluate(policy, env, rows, num_workers=2)  # rows 4 to 7 run in the worker
        assert caught.value.row == 4 + caught.value.index
        original = caught.value.__cause__
        assert isinstance(original, ZeroDivisionError) and str(original) == "boom in a worker"
        assert isinstance(original.__cause__, RemoteTraceback)
        worker_traceback = str(original.__cause__)
        assert "In the worker process" in worker_traceback
        assert 'raise ZeroDivisionError("boom in a worker")' in worker_traceback
        assert len(evaluate(policy, env, rows).steps) == 8  # the env itself is fine
    finally:
        env.close()


def test_a_worker_killed_between_calls_has_its_rows_run_here_and_is_replaced(no_process_left):
    env, policy, rows = cartpole()
    try:
        expected = evaluate(policy, env, rows, seed=3)
        evaluate(policy, env, rows, seed=3, num_workers=2)
        (worker,) = env._evaluation_workers.workers
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.join(5)
        with pytest.warns(
            UserWarning, match=rf"pid {worker.process.pid}\) died \(signal SIGKILL\).*rows 4-7 ran elsewhere"
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
