"""Throughput of vecrl's gymnax backend against gymnax's own jitted, vmapped step, in one run (CPU).

For each case it times (a) raw gymnax as its README steps a batch: ``jax.vmap(env.step)`` (gymnax's step
with its own autoreset) and the split of a key per sub-env, in one ``jax.jit``, + ``block_until_ready``,
and (b) ``vecrl.make_vector_env("gymnax::name", num_envs=N)`` stepped with a torch action tensor (a fresh
random state per new episode, terminated/truncated split, final observations, episode bookkeeping, torch
tensors out through DLPack). Rounds of (a) and (b) alternate and the median round of each is kept.

gymnax pins gymnasium<1.4, so vecrl-gymnax lives in a venv of its own (``nox -s tests`` and ``bench`` leave it
out); run this there, e.g. in its isolation row's venv:

    .nox/isolation-core-jax-gymnax-policy/bin/python bench/gymnax_step.py
    python bench/gymnax_step.py --quick    # CartPole-v1 at 64 envs, short rounds
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable

import numpy as np

CASES = [(name, n) for name in ("CartPole-v1", "Pendulum-v1") for n in (64, 1024)]
Runner = Callable[[int], float]


def random_actions(name: str, num_envs: int) -> np.ndarray:
    """Random actions of the env's space: ints for a Discrete one, floats in the bounds of a Box."""
    import gymnax
    from gymnax.environments import spaces

    env, params = gymnax.make(name)
    space = env.action_space(params)
    rng = np.random.default_rng(0)
    if isinstance(space, spaces.Discrete):
        return rng.integers(0, space.n, size=num_envs).astype(np.int32)
    low, high = (np.broadcast_to(np.asarray(b, np.float32), space.shape) for b in (space.low, space.high))
    return rng.uniform(low, high, size=(num_envs, *space.shape)).astype(np.float32)


def raw_gymnax(name: str, num_envs: int, action: np.ndarray) -> tuple[float, Runner]:
    """(a): gymnax's step (with its own autoreset) vmapped and jitted with the split of the step keys."""
    import gymnax
    import jax

    start = time.perf_counter()
    env, params = gymnax.make(name)

    @jax.jit
    def step(rng: jax.Array, state: object, actions: jax.Array) -> tuple:
        rng, key = jax.random.split(rng)
        keys = jax.random.split(key, num_envs)
        out = jax.vmap(env.step, in_axes=(0, 0, 0, None))(keys, state, actions, params)
        return rng, out[1], out[0]

    rng, key = jax.random.split(jax.random.PRNGKey(0))
    _, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(jax.random.split(key, num_envs), params)
    jax_action = jax.numpy.asarray(action)
    rng, state, obs = step(rng, state, jax_action)
    obs.block_until_ready()
    first_call = time.perf_counter() - start

    def run(num_steps: int) -> float:
        nonlocal rng, state
        begin = time.perf_counter()
        for _ in range(num_steps):
            rng, state, obs = step(rng, state, jax_action)
            obs.block_until_ready()
        return time.perf_counter() - begin

    return first_call, run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small case, short rounds (smoke run)")
    parser.add_argument(
        "--rounds", type=int, default=None, help="alternating timed rounds per side (default 9)"
    )
    args = parser.parse_args()
    if importlib.util.find_spec("vecrl_gymnax") is None:
        print("vecrl-gymnax is not installed here: run this in its own venv (see this script's docstring).")
        return
    import jax
    from brax_step import compare, vecrl_stepper  # bench/ is on sys.path when a script runs

    cases = CASES[:1] if args.quick else CASES
    steps = 20 if args.quick else 200
    rounds = args.rounds or (2 if args.quick else 9)
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; {steps} steps x {rounds} rounds per side;"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"{'env':<14}{'N':>6}{'raw steps/s':>14}{'vecrl steps/s':>15}{'ratio':>8}{'raw 1st':>10}{'vecrl 1st':>11}"
    )
    for name, num_envs in cases:
        action = random_actions(name, num_envs)
        raw = raw_gymnax(name, num_envs, action)
        r = compare(raw, vecrl_stepper(f"gymnax::{name}", num_envs, action), num_envs, steps, rounds)
        print(
            f"{name:<14}{num_envs:>6}{r['raw_sps']:>14.0f}{r['ours_sps']:>15.0f}{r['ratio']:>8.3f}"
            f"{r['raw_first']:>9.1f}s{r['ours_first']:>10.1f}s",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
