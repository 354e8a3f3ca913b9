"""Async batches (send/recv) against lockstep step(), in one run, as ratios, with the load average printed.

16 sub-envs on 2 worker processes; each side runs a CleanRL-style loop: a small torch MLP (64 hidden)
computes the actions from the observations, then the env steps. Env-steps/s, median of the repeats with
their spread:

  async      ProcessVectorEnv(batch_size=8, num_workers=2) in envpool's loop shape: recv() a batch,
             forward on its 8 rows, send(actions, info["env_id"]); the other batch steps meanwhile
  async 1w   the same on one worker process that steps both batches in turn: two processes on the 2 cores
             (this one computing a batch's actions while the worker steps the other), where async's three
             contend for them; the form for an env whose batch steps about as fast as the forward runs
  lockstep   ProcessVectorEnv(num_workers=2): step() on all 16 (this process steps the first 8)
  gymnasium  gymnasium's AsyncVectorEnv, one process per sub-env, step() on all 16 (its own form)

  ceiling    both workers never idle: 2 x the env-steps/s of one worker's batch (8 sub-envs) stepped with
             the same forward in this process, nothing between its steps (what async reaches at best with
             2 workers: it only removes the wait for the slower batch)

The envs: "lognormal" CartPole-v1 whose step waits a lognormal time (mean 1 ms, sigma SIGMA), as solver-
or I/O-bound simulators do; "slow reset" CartPole-v1 whose step waits 1 ms and whose reset waits 50 ms;
CartPole-v1 and Hopper-v5 as they are. The waits sleep (they take no CPU), as such simulators' waits do.

Targets: async >= 1.5x lockstep on the lognormal and slow-reset envs, and not slower than lockstep on
CartPole-v1 and Hopper-v5 (the better of async's two forms; each line names it).

evaluate, on the lognormal env (EVAL_ROWS random policies of vecrl_policy, one episode each, num_envs 16):

  evaluate   evaluate(num_workers=2), as vecrl evaluate and VecrlNE run it: this process and one worker,
             each its own loop over its own sub-envs (num_envs / 4 each, the rows handed out as sub-envs free),
             neither waiting for the other
  ceiling    both processes never idle: 2 x the env-steps/s of evaluate(num_workers=None) on one process's
             share (the same sub-envs, half the rows) in this process

Target: evaluate >= 1.3x today's evaluate(num_workers=2) (the issue's): a process of evaluate already steps
whichever of its rows are ready without waiting for the other process, so the ceiling bounds what is left.

    python bench/async.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from vecrl_gym import ProcessVectorEnv, SyncVectorEnv

NUM_ENVS, BATCH, WORKERS = 16, 8, 2
MEAN_WAIT_S, SIGMA, RESET_WAIT_S = 0.001, 1.0, 0.050


class LognormalSteps(gym.Wrapper):
    """A step waits a lognormal time of mean MEAN_WAIT_S."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._random = np.random.default_rng()
        self._mu = math.log(MEAN_WAIT_S) - SIGMA**2 / 2

    def step(self, action: Any) -> Any:
        time.sleep(self._random.lognormal(self._mu, SIGMA))
        return self.env.step(action)


class SlowResets(gym.Wrapper):
    """A step waits MEAN_WAIT_S, a reset RESET_WAIT_S (50 steps)."""

    def step(self, action: Any) -> Any:
        time.sleep(MEAN_WAIT_S)
        return self.env.step(action)

    def reset(self, **kwargs: Any) -> Any:
        time.sleep(RESET_WAIT_S)
        return self.env.reset(**kwargs)


def lognormal() -> gym.Env:
    return LognormalSteps(gym.make("CartPole-v1"))


def slow_reset() -> gym.Env:
    return SlowResets(gym.make("CartPole-v1"))


def cartpole() -> gym.Env:
    return gym.make("CartPole-v1")


def hopper() -> gym.Env:
    return gym.make("Hopper-v5")


ENVS: dict[str, tuple[Callable[[], gym.Env], int]] = {  # maker, env-steps a repeat
    "lognormal": (lognormal, 3_200),
    "slow reset": (slow_reset, 3_200),
    "CartPole-v1": (cartpole, 64_000),
    "Hopper-v5": (hopper, 32_000),
}


class Actor:
    """A CleanRL-sized actor: an MLP from the observations to the actions (argmax for discrete ones)."""

    def __init__(self, env: Any) -> None:
        space = env.single_action_space
        self.discrete = isinstance(space, gym.spaces.Discrete)
        outputs = int(space.n) if self.discrete else int(np.prod(space.shape))
        inputs = int(np.prod(env.single_observation_space.shape))
        self.net = torch.nn.Sequential(
            torch.nn.Linear(inputs, 64), torch.nn.Tanh(), torch.nn.Linear(64, outputs)
        ).double()

    @torch.no_grad()
    def __call__(self, observation: Any) -> np.ndarray:
        out = self.net(torch.as_tensor(np.asarray(observation), dtype=torch.float64))
        return (out.argmax(-1) if self.discrete else torch.tanh(out)).numpy()


def run_async(maker: Callable[[], gym.Env], env_steps: int, workers: int = WORKERS) -> float:
    env = ProcessVectorEnv([maker] * NUM_ENVS, batch_size=BATCH, num_workers=workers, empty_info=True)
    actor = Actor(env)
    env.async_reset(seed=0)
    for _ in range(2 * NUM_ENVS // BATCH):  # one step of every batch before the clock starts
        observation, *_, info = env.recv()
        env.send(actor(observation), info["env_id"])
    start, done = time.perf_counter(), 0
    while done < env_steps:
        observation, *_, info = env.recv()
        env.send(actor(observation), info["env_id"])
        done += BATCH
    rate = done / (time.perf_counter() - start)
    env.close()
    return rate


def run_lockstep(env: Any, env_steps: int, num_envs: int = NUM_ENVS) -> float:
    actor = Actor(env)
    observation, _ = env.reset(seed=0)
    observation = env.step(actor(observation))[0]
    start, done = time.perf_counter(), 0
    while done < env_steps:
        observation = env.step(actor(observation))[0]
        done += num_envs
    rate = done / (time.perf_counter() - start)
    env.close()
    return rate


def run_ceiling(maker: Callable[[], gym.Env], env_steps: int) -> float:
    return WORKERS * run_lockstep(
        SyncVectorEnv([maker] * BATCH, empty_info=True), env_steps // WORKERS, BATCH
    )


SIDES: dict[str, Callable[[Callable[[], gym.Env], int], float]] = {
    "ceiling": run_ceiling,
    "async": run_async,
    "async 1w": lambda maker, steps: run_async(maker, steps, workers=1),
    "lockstep": lambda maker, steps: run_lockstep(
        ProcessVectorEnv([maker] * NUM_ENVS, num_workers=WORKERS, empty_info=True), steps
    ),
    "gymnasium": lambda maker, steps: run_lockstep(gym.vector.AsyncVectorEnv([maker] * NUM_ENVS), steps),
}


EVAL_ROWS, EVAL_NET = 128, "Linear(obs_length, 64) >> Tanh() >> Linear(64, act_length)"


def run_evaluate(num_workers: int | None, rows: int, num_envs: int) -> float:
    """Env-steps/s of one evaluate call on the lognormal env (its workers started before the clock)."""
    import vecrl
    from vecrl_evaluate import evaluate
    from vecrl_policy import Policy

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=num_envs, wrappers=[LognormalSteps])
    policy = Policy.for_env(EVAL_NET, env)
    population = torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0))
    evaluate(policy, env, population[: 2 * num_envs], num_workers=num_workers, seed=1)  # workers started
    start = time.perf_counter()
    result = evaluate(policy, env, population, num_workers=num_workers, seed=0)
    rate = float(result.steps.sum()) / (time.perf_counter() - start)
    env.close()
    return rate


def evaluate_sides(repeats: int, rows: int) -> None:
    per_process = NUM_ENVS // (
        WORKERS * 2
    )  # (vecrl_evaluate.evaluate_workers: num_envs / (K * STARTED_SHARE))
    rates: dict[str, list[float]] = {"evaluate": [], "ceiling": []}
    for _ in range(repeats):
        rates["ceiling"].append(WORKERS * run_evaluate(None, rows // WORKERS, per_process))
        rates["evaluate"].append(run_evaluate(WORKERS, rows, NUM_ENVS))
    median = {side: statistics.median(values) for side, values in rates.items()}
    print(
        f"  evaluate on lognormal, {rows} rows: evaluate(num_workers={WORKERS}) {median['evaluate']:,.0f}"
        f" env-steps/s, ceiling {median['ceiling']:,.0f} = {median['ceiling'] / median['evaluate']:.2f}x"
        f" evaluate (the most a faster evaluate on {WORKERS} processes could give; target 1.30x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of the steps, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only-evaluate", action="store_true", help="the evaluate lines alone")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    torch.set_num_threads(1)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    print(f"{NUM_ENVS} sub-envs, batch_size {BATCH}, {WORKERS} workers; env-steps/s, median of {repeats}")
    for name, (maker, env_steps) in ({} if args.only_evaluate else ENVS).items():
        steps = env_steps // 10 if args.quick else env_steps
        rates: dict[str, list[float]] = {side: [] for side in SIDES}
        for _ in range(repeats):  # interleaved, so that a change of load reaches every side alike
            for side, run in SIDES.items():
                rates[side].append(run(maker, steps))
        median = {side: statistics.median(values) for side, values in rates.items()}
        best = max(("async", "async 1w"), key=median.__getitem__)
        ratios = [a / b for a, b in zip(rates[best], rates["lockstep"], strict=True)]
        print(
            f"  {name:12s} {best:8s} {median[best]:9,.0f} = {median[best] / median['lockstep']:.2f}x lockstep"
            f" ({median['lockstep']:,.0f}; per repeat {min(ratios):.2f}-{max(ratios):.2f}x),"
            f" {median[best] / median['gymnasium']:.2f}x gymnasium AsyncVectorEnv ({median['gymnasium']:,.0f});"
            f" async {median['async'] / median['lockstep']:.2f}x, async 1w {median['async 1w'] / median['lockstep']:.2f}x;"
            f" ceiling of 2 workers {median['ceiling'] / median['lockstep']:.2f}x lockstep"
        )
    evaluate_sides(repeats, EVAL_ROWS // 4 if args.quick else EVAL_ROWS)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
