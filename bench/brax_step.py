"""Throughput of vecrl's brax backend against the raw jitted brax step, measured in one run (CPU).

For each case it times (a) the raw loop ``state = jit(env.step)(state, action)`` +
``state.obs.block_until_ready()`` on ``brax.envs.create(name, batch_size=N)`` (brax's own autoreset,
which replays a cached first state), and (b) ``vecrl.make_vector_env("brax::name", num_envs=N)``
stepped with a torch action tensor (fresh random state per new episode, terminated/truncated split,
outputs as torch tensors through DLPack). Rounds of (a) and (b) alternate, and the median round of
each is kept, so that load from other processes hits both alike. Also prints the first-call time
(make + reset + first step, which includes jit compilation) of each.

    python bench/brax_step.py            # inverted_pendulum at 64 and 1024 envs, ant at 64 envs
    python bench/brax_step.py --quick    # a short smoke run
    python bench/brax_step.py --only ant:64
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

CASES = [("inverted_pendulum", 64), ("inverted_pendulum", 1024), ("ant", 64)]
TARGETS = {64: 0.9, 1024: 0.97}


def random_actions(low: np.ndarray, high: np.ndarray, num_envs: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, size=(num_envs, low.shape[0])).astype(np.float32)


def raw_brax(name: str, num_envs: int, action: np.ndarray):
    """The baseline: brax's batched env, jitted step, blocking on the observation each step."""
    import brax.envs

    start = time.perf_counter()
    env = brax.envs.create(name, batch_size=num_envs)
    step = jax.jit(env.step)
    state = jax.jit(env.reset)(jax.random.PRNGKey(0))
    jax_action = jnp.asarray(action)
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


def vecrl_stepper(env_name: str, num_envs: int, action: np.ndarray, **kwargs):
    """A vecrl jax backend (``brax::``, ``playground::``) as a user drives it: make_vector_env, torch actions
    in, torch tensors out. Returns the first call's time (make + reset + first step) and the timed loop."""
    import vecrl

    start = time.perf_counter()
    env = vecrl.make_vector_env(env_name, num_envs=num_envs, **kwargs)
    env.reset(seed=0)
    torch_action = torch.from_numpy(action)
    env.step(torch_action)
    first_call = time.perf_counter() - start

    def run(num_steps: int) -> float:
        begin = time.perf_counter()
        for _ in range(num_steps):
            env.step(torch_action)
        return time.perf_counter() - begin

    return first_call, run


def compare(raw, ours, num_envs: int, steps: int, rounds: int) -> dict[str, float]:
    """Alternating timed rounds of the ``(first_call, run)`` pairs ``raw`` and ``ours``: their rates
    (medians) and first calls."""
    (raw_first, raw_run), (ours_first, ours_run) = raw, ours
    raw_run(steps // 4)  # warm-up: the first calls after compiling are slower
    ours_run(steps // 4)
    raw_times, ours_times = [], []
    for _ in range(rounds):
        raw_times.append(raw_run(steps))
        ours_times.append(ours_run(steps))
    raw_sps = num_envs * steps / statistics.median(raw_times)
    ours_sps = num_envs * steps / statistics.median(ours_times)
    return {
        "raw_first": raw_first,
        "ours_first": ours_first,
        "raw_sps": raw_sps,
        "ours_sps": ours_sps,
        "ratio": ours_sps / raw_sps,
    }


def measure(name: str, num_envs: int, steps: int, rounds: int) -> dict[str, float]:
    import brax.envs

    probe = brax.envs.create(name)
    bounds = np.asarray(probe.sys.actuator.ctrl_range, dtype=np.float32)
    action = random_actions(bounds[:, 0], bounds[:, 1], num_envs)
    raw = raw_brax(name, num_envs, action)
    return compare(raw, vecrl_stepper(f"brax::{name}", num_envs, action), num_envs, steps, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small case, few steps (smoke run)")
    parser.add_argument("--steps", type=int, default=None, help="steps per timed round")
    parser.add_argument("--rounds", type=int, default=None, help="alternating timed rounds per side")
    parser.add_argument("--only", metavar="NAME:N", help="one case, e.g. inverted_pendulum:1024")
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    if args.only:
        name, _, num_envs = args.only.partition(":")
        cases = [(name, int(num_envs or 64))]
    steps = args.steps or (20 if args.quick else 200)
    rounds = args.rounds or (2 if args.quick else 15)  # 5 rounds left a ±10% spread between runs

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; {steps} steps x {rounds} rounds per side")
    print(
        f"{'env':<20}{'N':>6}{'raw steps/s':>14}{'vecrl steps/s':>15}{'ratio':>8}{'target':>8}"
        f"{'raw 1st call':>14}{'vecrl 1st call':>16}"
    )
    for name, num_envs in cases:
        r = measure(name, num_envs, steps, rounds)
        target = TARGETS.get(num_envs, 0.9)
        print(
            f"{name:<20}{num_envs:>6}{r['raw_sps']:>14.0f}{r['ours_sps']:>15.0f}{r['ratio']:>8.3f}{target:>8.2f}"
            f"{r['raw_first']:>13.1f}s{r['ours_first']:>15.1f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
