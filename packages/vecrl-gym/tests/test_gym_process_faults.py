"""ProcessVectorEnv's faults and lifecycle with real worker processes: a sub-env's exception, a worker
killed from outside, close() (twice, by garbage collection, at interpreter exit) and Ctrl-C. After each,
the processes this test started are counted: none may be left running."""

from __future__ import annotations

import gc
import os
import select
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gym_helpers import MUJOCO_ENV_ID

import vecrl
import vecrl.testing
from vecrl_gym import ProcessVectorEnv


@pytest.fixture
def no_process_left():
    with vecrl.testing.no_process_left():
        yield


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class Bomb(gym.Wrapper):
    """CartPole that raises on the step numbered ``fuse`` (counted from its last reset)."""

    def __init__(self, env: gym.Env, fuse: int) -> None:
        super().__init__(env)
        self.fuse, self.count = fuse, 0

    def reset(self, **kwargs):
        self.count = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        self.count += 1
        if self.count == self.fuse:
            raise ZeroDivisionError(f"boom at step {self.count}")
        return self.env.step(action)


def bomb_makers(num_envs: int, faulty: int, fuse: int) -> list:
    def make(index: int):
        return lambda: Bomb(gym.make("CartPole-v1"), fuse if index == faulty else 10**9)

    return [make(index) for index in range(num_envs)]


def test_a_sub_env_error_in_a_worker_names_the_sub_env_chains_the_original_and_reset_recovers(
    no_process_left,
):
    env = ProcessVectorEnv(bomb_makers(4, faulty=3, fuse=2), num_workers=2)
    env.reset(seed=0)
    env.step(np.zeros(4, np.int64))
    with pytest.raises(vecrl.SubEnvError, match=r"Sub-env 3 raised ZeroDivisionError in step\(\)") as caught:
        env.step(np.zeros(4, np.int64))
    assert caught.value.index == 3
    original = caught.value.__cause__
    assert isinstance(original, ZeroDivisionError) and str(original) == "boom at step 2"
    assert "in step" in str(original.__cause__) and "ZeroDivisionError" in str(
        original.__cause__
    )  # its traceback
    with pytest.raises(RuntimeError, match=r"step\(\) refused: sub-env 3 raised ZeroDivisionError"):
        env.step(np.zeros(4, np.int64))
    with pytest.raises(RuntimeError, match="refused"):
        env.reset(options={"reset_mask": np.array([False, False, False, True])})
    obs, _ = env.reset(seed=1)
    assert obs.shape == (4, 4)
    env.step(np.zeros(4, np.int64))
    env.close()


def test_a_sub_env_error_in_the_callers_block_is_raised_after_the_workers_answered(no_process_left):
    env = ProcessVectorEnv(bomb_makers(4, faulty=0, fuse=1), num_workers=2)
    env.reset(seed=0)
    with pytest.raises(vecrl.SubEnvError, match="Sub-env 0 raised ZeroDivisionError"):
        env.step(np.zeros(4, np.int64))
    env.reset(seed=0)  # the workers' replies were all read: the pipes are in step again
    with pytest.raises(vecrl.SubEnvError, match="Sub-env 0"):
        env.step(np.ones(4, np.int64))
    env.close()


@pytest.mark.races
def test_a_killed_worker_is_an_error_naming_it_at_once_and_reset_starts_a_new_one(no_process_left):
    env = ProcessVectorEnv([lambda: gym.make(MUJOCO_ENV_ID)] * 4, num_workers=2)
    env.reset(seed=0)
    worker = env._workers[0].process
    os.kill(worker.pid, signal.SIGKILL)
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"worker 1 \(pid \d+, sub-envs 2 to 3\) died \(signal SIGKILL\)"):
        env.step(np.zeros((4, 1)))
    waited = time.monotonic() - start
    with pytest.raises(RuntimeError, match="refused"):
        env.step(np.zeros((4, 1)))
    obs, _ = env.reset(seed=0)
    assert env._workers[0].process.pid != worker.pid and not alive(worker.pid)
    assert np.isfinite(obs).all()
    env.step(np.zeros((4, 1)))
    env.close()
    print(f"the death was seen after {waited:.3f} s")


def test_close_is_idempotent_and_refuses_step_and_reset_after(no_process_left):
    env = ProcessVectorEnv([lambda: gym.make("CartPole-v1")] * 3, num_workers=3)
    pids = [worker.process.pid for worker in env._workers]
    env.close()
    env.close()
    assert not any(alive(pid) for pid in pids)
    with pytest.raises(RuntimeError, match="closed"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_garbage_collection_ends_the_workers(no_process_left):
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_workers=2)
    pids = [worker.process.pid for worker in env.unwrapped._workers]
    env.reset(seed=0)
    del env
    gc.collect()
    assert not any(alive(pid) for pid in pids)


SCRIPT = """
import sys, time, numpy as np, vecrl
if __name__ == "__main__":
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_workers=2)
    env.reset(seed=0)
    from multiprocessing import resource_tracker
    tracker = resource_tracker._resource_tracker._pid
    print(tracker, *[worker.process.pid for worker in env.unwrapped._workers], flush=True)
    if sys.argv[1] == "loop":
        env.step(np.zeros(4, np.int64))
        print("stepping", flush=True)
        while True:
            env.step(np.zeros(4, np.int64))
"""


def run_script(mode: str) -> tuple[subprocess.Popen, list[int]]:
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    assert line, process.stderr.read()
    return process, [int(pid) for pid in line.split()]


def wait_gone(pids: list[int], timeout: float = 60.0) -> bool:
    """Whether every process of ``pids`` exits within ``timeout``: woken by each exit (a pidfd becomes
    readable then), not by polling."""
    end = time.monotonic() + timeout
    for pid in pids:
        try:
            descriptor = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already
            continue
        try:
            ready, _, _ = select.select([descriptor], [], [], max(0.0, end - time.monotonic()))
        finally:
            os.close(descriptor)
        if not ready:
            return False
    return True


@pytest.mark.races
def test_interpreter_exit_without_close_ends_the_workers():
    process, pids = run_script("exit")
    assert process.wait(30) == 0, process.stderr.read()
    assert wait_gone(pids)


@pytest.mark.races
def test_ctrl_c_in_the_caller_ends_every_worker():
    process, pids = run_script("loop")
    assert process.stdout.readline() == "stepping\n", process.stderr.read()
    process.send_signal(signal.SIGINT)
    assert process.wait(30) != 0
    assert "KeyboardInterrupt" in process.stderr.read()
    assert wait_gone(pids)


def test_bad_num_workers_is_a_value_error_saying_what_fits(no_process_left):
    with pytest.raises(ValueError, match=r"num_workers must be an int from 1 to num_envs=2 .* but got 3"):
        ProcessVectorEnv([lambda: gym.make("CartPole-v1")] * 2, num_workers=3)
    with pytest.raises(ValueError, match="but got 'fast'"):
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_workers="fast")
    with pytest.raises(ValueError, match="but got True"):  # a bool is no count (True was one worker)
        vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_workers=True)
    with pytest.raises(ValueError, match="num_workers"):
        vecrl.make_vector_env("gym::CartPole-v1", num_workers=2)  # one plain env


def test_a_maker_that_fails_in_a_worker_raises_its_own_error(no_process_left):
    makers = [lambda: gym.make("CartPole-v1")] * 2 + [lambda: gym.make("NoSuchEnv-v0")] * 2
    with pytest.raises(gym.error.NameNotFound, match="NoSuchEnv"):
        ProcessVectorEnv(makers, num_workers=2)


def test_auto_picks_the_sync_env_for_few_cheap_sub_envs_and_workers_for_costly_ones(no_process_left):
    from vecrl_gym import SyncVectorEnv
    from vecrl_gym.auto_workers import auto_num_workers

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=4, num_workers="auto")
    assert isinstance(env.unwrapped, SyncVectorEnv)
    env.close()
    assert auto_num_workers(lambda: gym.make(MUJOCO_ENV_ID), 1000, cores=2) == 2  # ~10 ms per batch step
    assert auto_num_workers(lambda: gym.make(MUJOCO_ENV_ID), 1000, cores=1) == 1


def test_a_script_without_a_main_guard_gets_an_error_saying_to_add_one(tmp_path):
    script = tmp_path / "no_guard.py"
    script.write_text("import vecrl\nvecrl.make_vector_env('gym::CartPole-v1', num_envs=4, num_workers=2)\n")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "could not be made" in result.stderr and "if __name__ == '__main__':" in result.stderr


@pytest.mark.races
def test_ctrl_c_reaching_the_workers_while_they_start_leaves_them_working(no_process_left):
    # Ctrl-C goes to the whole process group; a worker still importing torch died of it with a traceback
    before, signalled, making = vecrl.testing.child_processes(), set(), True

    def interrupt_each_new_worker() -> None:
        while making:
            for pid in vecrl.testing.child_processes() - before - signalled:
                os.kill(pid, signal.SIGINT)
                signalled.add(pid)
            time.sleep(0.001)

    interrupter = threading.Thread(target=interrupt_each_new_worker)
    interrupter.start()
    try:
        env = ProcessVectorEnv([lambda: gym.make("CartPole-v1")] * 3, num_workers=3)  # the caller runs one
    finally:
        making = False
        interrupter.join()
    try:
        workers = vecrl.testing.child_processes() - before
        env.reset(seed=0)
        env.step(np.zeros(3, dtype=np.int64))
    finally:
        env.close()
    assert len(workers) == 2 and workers <= signalled  # (the first spawn also starts a resource tracker)
