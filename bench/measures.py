"""What measures cost: ``evaluate`` with two measures (an info key where the env reports one, and a function of
the step's batch) against the same call without, in one run, on gym's Hopper-v5 (the stepped loop) and on
brax's hopper (the fused program).

  plain       evaluate(policy, env, rows, seed=s)
  measured    evaluate(..., measures={"speed": "x_velocity" (brax: a function of the observation),
                                      "height": Measure(lambda o, a, r: o[:, 0], "last")})

Both calls evaluate the same rows with the same seed, one untimed call first (brax compiles each program
once); the figure is each call's median seconds over the repeats and the ratio measured / plain (the cost
of measuring: 1.10 is 10% more). The spread is the repeats' lowest and highest ratio.

    python bench/measures.py [--quick] [--repeats 5] [--rows 128] [--env gym::Hopper-v5 ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from gymnasium.spaces import flatdim

import vecrl
from vecrl_evaluate import Measure, evaluate
from vecrl_policy import Policy

NETWORK = "Linear(obs_length, 64) >> Tanh() >> Linear(64, act_length)"
ENVS = {
    # name: (num_envs, measures)
    "gym::Hopper-v5": (64, {"speed": "x_velocity", "height": Measure(lambda o, a, r: o[:, 0], "last")}),
    "brax::hopper": (
        128,
        {
            "speed": Measure(lambda o, a, r: o[:, 5], "mean"),
            "height": Measure(lambda o, a, r: o[:, 0], "last"),
        },
    ),
}


def seconds(policy: Policy, env: object, rows: torch.Tensor, seed: int, measures: dict | None) -> float:
    started = time.perf_counter()
    evaluate(policy, env, rows, seed=seed, measures=measures)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one repeat of 32 rows, for a smoke run")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--env", action="append", choices=list(ENVS), help="default: every one")
    args = parser.parse_args()
    repeats, num_rows = (1, 32) if args.quick else (args.repeats, args.rows)
    print(f"load average {os.getloadavg()[0]:.2f}; {num_rows} rows, median of {repeats} calls each way")
    for name in args.env or list(ENVS):
        num_envs, measures = ENVS[name]
        env = vecrl.make_vector_env(name, num_envs=min(num_envs, num_rows), num_episodes=1)
        space = env.single_action_space
        policy = Policy(NETWORK, obs_length=flatdim(env.single_observation_space), act_length=space.shape[0])
        rows = 0.1 * torch.randn(
            num_rows, policy.parameter_length, generator=torch.Generator().manual_seed(0)
        )
        for given in (None, measures):  # untimed: each program compiles once
            path = evaluate(policy, env, rows, seed=0, measures=given).path
        times: dict[str, list[float]] = {"plain": [], "measured": []}
        for repeat in range(repeats):  # (alternated, so that a busy moment falls on both alike)
            times["plain"].append(seconds(policy, env, rows, repeat, None))
            times["measured"].append(seconds(policy, env, rows, repeat, measures))
        ratios = [m / p for m, p in zip(times["measured"], times["plain"], strict=True)]
        plain, measured = statistics.median(times["plain"]), statistics.median(times["measured"])
        print(
            f"{name:16s} {path:8s} plain {plain:7.3f} s  measured {measured:7.3f} s  ratio {measured / plain:5.2f}"
            f"  (spread {min(ratios):.2f}-{max(ratios):.2f})"
        )
        env.close()
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
