"""Throughput of vecrl's playground backend against the raw jitted, vmapped playground step, in one run (CPU).

For each case it times (a) raw playground as its own training code steps it: ``jax.jit(env.step)`` on
``mujoco_playground.wrapper.wrap_for_brax_training(env, episode_length)`` (vmapped, with its own
autoreset, which restarts from the first state it cached) + ``block_until_ready``, and (b)
``vecrl.make_vector_env("playground::name", num_envs=N)`` stepped with a torch action tensor (a fresh
random state per new episode, terminated/truncated split, torch tensors out through DLPack). Both use
impl="jax" (vecrl's default on CPU). Rounds of (a) and (b) alternate, the median round of each is kept,
and the first call (load + reset + first step, compiles included) of each is printed. Targets (issue 17):
(b) at least 0.9 of (a), and a first call at most 1.3x raw's.

    python bench/playground_step.py            # CartpoleBalance and CheetahRun at 64 and 1024 envs
    python bench/playground_step.py --quick    # CartpoleBalance at 64 envs, short rounds
"""

from __future__ import annotations

import argparse
import os
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


def measure(name: str, num_envs: int, steps: int, rounds: int) -> dict[str, float]:
    from mujoco_playground import registry

    import vecrl_playground.vector_env  # noqa: F401  (imports out of both first calls)

    size = registry.load(name, config_overrides={"impl": "jax"}).action_size  # actions in [-1, 1]
    action = random_actions(-np.ones(size, np.float32), np.ones(size, np.float32), num_envs)
    raw = raw_playground(name, num_envs, action)
    ours = vecrl_stepper(f"playground::{name}", num_envs, action, episode_length=EPISODE_LENGTH)
    return compare(raw, ours, num_envs, steps, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small case, short rounds (smoke run)")
    parser.add_argument("--only", metavar="NAME:N", help="one case, e.g. CheetahRun:1024")
    parser.add_argument(
        "--rounds", type=int, default=None, help="alternating timed rounds per side (default 9)"
    )
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    if args.only:
        name, _, num_envs = args.only.partition(":")
        cases = [(name, int(num_envs or 64))]
    steps = 10 if args.quick else 50
    rounds = args.rounds or (2 if args.quick else 9)

    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; {steps} steps x {rounds} rounds per side;"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'env':<18}{'N':>6}{'raw steps/s':>14}{'vecrl steps/s':>15}{'ratio':>8}{'raw 1st':>10}{'vecrl 1st':>11}{'1st ratio':>11}"
    )
    for name, num_envs in cases:
        r = measure(name, num_envs, steps, rounds)
        print(
            f"{name:<18}{num_envs:>6}{r['raw_sps']:>14.0f}{r['ours_sps']:>15.0f}{r['ratio']:>8.3f}"
            f"{r['raw_first']:>9.1f}s{r['ours_first']:>10.1f}s{r['ours_first'] / r['raw_first']:>11.2f}",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
