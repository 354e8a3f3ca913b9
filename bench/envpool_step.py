"""Env-steps per second of vecrl's envpool backend against raw envpool and a plain Python loop, in one run.

For CartPole-v1 and Hopper-v5 at 16, 256 and 1024 sub-envs:

  (a) loop       a plain loop over gymnasium.make envs: step, reset on done, write into preallocated arrays
  (b) envpool    raw envpool: envpool.make(id, env_type="gymnasium", num_envs=N).step(numpy actions), its
                 own next-step autoreset
  (c) vecrl      vecrl.make_vector_env("envpool::id", num_envs=N) stepped with torch actions: same-step
                 autoreset through envpool's per-env reset, final observations in info, torch out
  (d) vecrl-ns   the same with autoreset_mode="next_step" (envpool's own mode: what vecrl adds is the
                 action check and the conversions)

Each rate is printed with its ratio to (b) and to (a). Both envpool sides use the same ``--num-threads``
(default 1, the one core the plain loop uses). Sides alternate round by round and the median round of
each is kept, so that load from other processes hits all alike; the load average is printed before and
after. Targets (issue 16): (c) at least 0.85 of (b) from 256 envs on, and at least 3.5x (a) on CartPole at
256 envs.

    python bench/envpool_step.py            # full run (a few minutes)
    python bench/envpool_step.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from collections.abc import Callable

import envpool
import gymnasium as gym
import numpy as np
import torch
from gym_sync import NUM_ACTION_BATCHES, floor_stepper  # bench/ is on sys.path when a script runs

import vecrl

CASES = [(env_id, n) for env_id in ("CartPole-v1", "Hopper-v5") for n in (16, 256, 1024)]
ROUND_SECONDS = 0.25  # each side's round lasts about this long
Stepper = Callable[[int], None]


def random_actions(env_id: str, num_envs: int) -> list[np.ndarray]:
    """A fixed cycle of random action batches, made before timing."""
    rng = np.random.default_rng(0)
    if env_id == "CartPole-v1":
        return [rng.integers(0, 2, num_envs) for _ in range(NUM_ACTION_BATCHES)]
    return [rng.uniform(-1, 1, (num_envs, 3)) for _ in range(NUM_ACTION_BATCHES)]


def plain_loop(env_id: str, num_envs: int, actions: list[np.ndarray]) -> Stepper:
    """(a): gym_sync.py's floor, the plain loop over gymnasium.make envs."""
    run = floor_stepper(env_id, num_envs)
    torch_actions = [torch.from_numpy(a) for a in actions]
    return lambda steps: run(torch_actions, steps)


def raw_envpool(env_id: str, num_envs: int, actions: list[np.ndarray], num_threads: int) -> Stepper:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = envpool.make(env_id, env_type="gymnasium", num_envs=num_envs, seed=0, num_threads=num_threads)
        pool.reset()  # gymnasium warns about envpool's spaces when they are first made
    step = pool.step

    def run(steps: int) -> None:
        for t in range(steps):
            step(actions[t % NUM_ACTION_BATCHES])

    return run


def vecrl_envpool(
    env_id: str, num_envs: int, actions: list[np.ndarray], num_threads: int, mode: str
) -> Stepper:
    env = vecrl.make_vector_env(
        f"envpool::{env_id}", num_envs=num_envs, num_threads=num_threads, autoreset_mode=mode
    )
    env.reset(seed=0)
    step = env.step
    torch_actions = [torch.from_numpy(a) for a in actions]

    def run(steps: int) -> None:
        for t in range(steps):
            step(torch_actions[t % NUM_ACTION_BATCHES])

    return run


def steps_per_round(run: Stepper) -> int:
    """How many steps of ``run`` take about ROUND_SECONDS (after a warm-up)."""
    run(3)
    begin = time.perf_counter()
    run(5)
    per_step = (time.perf_counter() - begin) / 5
    return max(3, int(ROUND_SECONDS / per_step))


def measure(env_id: str, num_envs: int, rounds: int, num_threads: int, loop: bool) -> dict[str, float]:
    actions = random_actions(env_id, num_envs)
    sides: dict[str, Stepper] = {
        "(b) envpool": raw_envpool(env_id, num_envs, actions, num_threads),
        "(c) vecrl": vecrl_envpool(env_id, num_envs, actions, num_threads, "same_step"),
        "(d) vecrl-ns": vecrl_envpool(env_id, num_envs, actions, num_threads, "next_step"),
    }
    if loop:
        sides = {"(a) loop": plain_loop(env_id, num_envs, actions), **sides}
    steps = {name: steps_per_round(run) for name, run in sides.items()}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, run in sides.items():
            begin = time.perf_counter()
            run(steps[name])
            times[name].append(time.perf_counter() - begin)
    return {name: num_envs * steps[name] / statistics.median(times[name]) for name in sides}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="CartPole at 256 envs, 2 rounds (smoke run)")
    parser.add_argument(
        "--rounds", type=int, default=None, help="alternating timed rounds per side (default 7)"
    )
    parser.add_argument(
        "--num-threads", type=int, default=1, help="envpool's threads, both sides (0: envpool's choice)"
    )
    parser.add_argument("--no-loop", action="store_true", help="leave out the plain loop (a)")
    parser.add_argument("--only", metavar="ID:N", help="one case, e.g. CartPole-v1:256")
    args = parser.parse_args()
    cases = [("CartPole-v1", 256)] if args.quick else CASES
    if args.only:
        env_id, _, num_envs = args.only.partition(":")
        cases = [(env_id, int(num_envs or 256))]
    rounds = args.rounds or (2 if args.quick else 7)

    print(
        f"envpool {envpool.__version__}, gymnasium {gym.__version__}, torch {torch.__version__};"
        f" num_threads={args.num_threads}; {rounds} rounds; load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'env':<12} {'N':>5}  {'side':<13} {'env-steps/s':>12}  {'of (b)':>7}  {'of (a)':>7}")
    for env_id, num_envs in cases:
        rates = measure(env_id, num_envs, rounds, args.num_threads, loop=not args.no_loop)
        raw, loop = rates["(b) envpool"], rates.get("(a) loop")
        for name, rate in rates.items():
            of_loop = f"{rate / loop:>7.2f}" if loop else f"{'n/a':>7}"
            print(
                f"{env_id:<12} {num_envs:>5}  {name:<13} {rate:>12,.0f}  {rate / raw:>7.2f}  {of_loop}",
                flush=True,
            )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
