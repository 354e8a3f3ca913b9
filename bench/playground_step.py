"""Throughput of vecrl's playground backend against the raw jitted, vmapped playground step, in one run (CPU).

For each case it times (a) raw playground as its own training code steps it: ``jax.jit(env.step)`` on
``mujoco_playground.wrapper.wrap_for_brax_training(env, episode_length)`` (vmapped, with its own
autoreset, which restarts from the first state it cached) + ``block_until_ready``, and (b)
``vecrl.make_vector_env("playground::name", num_envs=N)`` stepped with a torch action tensor (a fresh
random state per new episode, terminated/truncated split, torch tensors out through DLPack). Both use
impl="jax" (vecrl's default on CPU). Rounds of (a) and (b) alternate and the median round of each is
kept. The first call (load + reset + first step, compiles included) is what a user's script pays: each
side's is timed in a fresh Python process of its own (imports done before the clock starts), alternating,
and the median of --first-rounds is printed; timed in one process, whichever side ran second would find
jax and XLA warmed up by the first. Targets (issue 17): (b) at least 0.9 of (a), and a first call at most
1.3x raw's.

    python bench/playground_step.py            # CartpoleBalance and CheetahRun at 64 and 1024 envs
    python bench/playground_step.py --quick    # CartpoleBalance at 64 envs, short rounds
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import jax
import numpy as np
from brax_step import compare, random_actions, vecrl_stepper  # bench/ is on sys.path when a script runs

CASES = [(name, n) for name in ("CartpoleBalance", "CheetahRun") for n in (64, 1024)]
EPISODE_LENGTH = 1000
Runner = Callable[[int], float]


def raw_playground(name: str, num_envs: int, action: np.ndarray) -> tuple[float, Runner]:
    """(a): the env as playground's training code wraps it, its step jitted."""
    from mujoco_playground import registry, wrapper

    start = time.perf_counter()
    env = registry.load(name, config_overrides={"impl": "jax"})
    env = wrapper.wrap_for_brax_training(env, episode_length=EPISODE_LENGTH)
    step = jax.jit(env.step)
    state = jax.jit(env.reset)(jax.random.split(jax.random.PRNGKey(0), num_envs))
    jax_action = jax.numpy.asarray(action)
    state = step(state, jax_action)
    state.obs.block_until_ready()
    first_call = time.perf_counter() - start

    def run(num_steps: int) -> float:
        nonlocal state
        begin = time.perf_counter()
        for _ in range(num_steps):
            state = step(state, jax_action)
            state.obs.block_until_ready()
        return time.perf_counter() - begin

    return first_call, run


def stepper(side: str, name: str, num_envs: int) -> tuple[float, Runner]:
    """The first call and timed loop of one side, ``"raw"`` or ``"vecrl"``, on random actions in [-1, 1]."""
    from mujoco_playground import registry

    import vecrl_playground.vector_env  # noqa: F401  (imported before the first call's clock starts)

    size = registry.load(name, config_overrides={"impl": "jax"}).action_size  # actions in [-1, 1]
    action = random_actions(-np.ones(size, np.float32), np.ones(size, np.float32), num_envs)
    if side == "raw":
        return raw_playground(name, num_envs, action)
    return vecrl_stepper(f"playground::{name}", num_envs, action, episode_length=EPISODE_LENGTH)


def first_call_in_a_fresh_process(side: str, name: str, num_envs: int) -> float:
    """The first call of ``side``, timed in a new Python process (this script with --first-call)."""
    command = [sys.executable, __file__, "--first-call", side, "--only", f"{name}:{num_envs}"]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    return float(result.stdout.split()[-1])


def measure(name: str, num_envs: int, steps: int, rounds: int, first_rounds: int) -> dict[str, float]:
    firsts: dict[str, list[float]] = {"raw": [], "vecrl": []}
    for _ in range(first_rounds):
        for side, times in firsts.items():
            times.append(first_call_in_a_fresh_process(side, name, num_envs))
    result = compare(
        stepper("raw", name, num_envs), stepper("vecrl", name, num_envs), num_envs, steps, rounds
    )
    return {
        **result,
        "raw_first": statistics.median(firsts["raw"]),
        "ours_first": statistics.median(firsts["vecrl"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small case, short rounds (smoke run)")
    parser.add_argument("--only", metavar="NAME:N", help="one case, e.g. CheetahRun:1024")
    parser.add_argument(
        "--rounds", type=int, default=None, help="alternating timed rounds per side (default 9)"
    )
    parser.add_argument(
        "--first-rounds", type=int, default=1, help="fresh processes per side for the first call (median)"
    )
    parser.add_argument(
        "--first-call", choices=["raw", "vecrl"], help=argparse.SUPPRESS
    )  # one side's, then exit
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    if args.only:
        name, _, num_envs = args.only.partition(":")
        cases = [(name, int(num_envs or 64))]
    steps = 10 if args.quick else 50
    rounds = args.rounds or (2 if args.quick else 9)
    if args.first_call:
        print(stepper(args.first_call, *cases[0])[0])
        return

    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; {steps} steps x {rounds} rounds per side;"
        f" first calls: median of {args.first_rounds} fresh process(es) per side;"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'env':<18}{'N':>6}{'raw steps/s':>14}{'vecrl steps/s':>15}{'ratio':>8}{'raw 1st':>10}{'vecrl 1st':>11}{'1st ratio':>11}"
    )
    for name, num_envs in cases:
        r = measure(name, num_envs, steps, rounds, args.first_rounds)
        print(
            f"{name:<18}{num_envs:>6}{r['raw_sps']:>14.0f}{r['ours_sps']:>15.0f}{r['ratio']:>8.3f}"
            f"{r['raw_first']:>9.1f}s{r['ours_first']:>10.1f}s{r['ours_first'] / r['raw_first']:>11.2f}",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
