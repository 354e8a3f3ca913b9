"""Refill against whole-env starts: a population 4x num_envs, evaluated by vecrl_evaluate.evaluate in one
process, on gym's Hopper-v5 (MuJoCo) and CartPole-v1 and on brax's inverted_pendulum, in one run.

  refill        evaluate as it runs: a sub-env whose row is done takes the next row at once (masked reset)
  whole starts  the loop before refill (and envpool's seeded path): the next num_envs rows start together,
                once every sub-env is done, so each group of rows waits for its longest episode

Both ways evaluate the same rows with the same seed (each row from its own seed: the same episodes, the
same env-steps), timed from the first reset to the results, after one untimed call (brax compiles); the
figure is env-steps per second and the ratio refill / whole starts (higher is better). The gym backend
skips the sub-envs whose budget is spent, so there whole starts lose only the loop's per-step overhead;
brax steps the whole batch whatever is left, so there every step of a group's tail costs in full. Both
ways run evaluate's stepped loop (fused=False): on jax envs such as brax's, evaluate runs the call as one
compiled program by default, which starts no rows (bench/brax_evaluate.py measures it).

On gym envs a third line, "stepping alone", is the floor: gymnasium envs in a plain loop, each row reset
with a seed and stepped for as many steps as evaluate took on it (no policy, no batching). No order of
starting rows runs faster than stepping, so floor / whole starts bounds what refill could gain. The floor
steps one fixed action: on CartPole a step costs the same whatever the action, while on MuJoCo envs the
contacts the policies' actions cause make their steps dearer, so there the bound is loose.

    python bench/refill.py [--quick] [--repeats 3] [--num-envs 64] [--env gym::Hopper-v5 ...]
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace

import gymnasium as gym
import torch
from gymnasium.spaces import flatdim

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy

ENV_NAMES = ("gym::Hopper-v5", "gym::CartPole-v1", "brax::inverted_pendulum")
WAYS = ("refill", "whole starts")
NETWORK = "Linear(obs_length, 64) >> Tanh() >> Linear(64, 64) >> Tanh() >> Linear(64, act_length)"


class Way:
    """One way of evaluating: its env (kept across repeats, so brax compiles once), policy and rows."""

    def __init__(self, env_name: str, num_envs: int, rows_per_env: int, refill: bool) -> None:
        self.env = vecrl.make_vector_env(env_name, num_envs=num_envs, num_episodes=1)
        if not refill:  # declared as envpool declares it: a seeded call then starts rows with whole resets
            unwrapped = self.env.unwrapped
            unwrapped.capabilities = replace(unwrapped.capabilities, seeded_masked_reset=False)
        space = self.env.single_action_space
        act_length = space.n if hasattr(space, "n") else space.shape[0]
        obs_length = flatdim(self.env.single_observation_space)
        self.policy = Policy(NETWORK, obs_length=obs_length, act_length=int(act_length))
        self.rows = 0.3 * torch.randn(
            rows_per_env * num_envs, self.policy.parameter_length, generator=torch.Generator().manual_seed(0)
        )
        evaluate(self.policy, self.env, self.rows, seed=10**6, fused=False)  # untimed: brax compiles here
        self.steps: list[int] = []  # each row's env-steps in the last timed call

    def rate(self, seed: int) -> float:
        started = time.perf_counter()
        result = evaluate(self.policy, self.env, self.rows, seed=seed, fused=False)
        elapsed = time.perf_counter() - started
        self.steps = result.steps.tolist()
        return sum(self.steps) / elapsed


class SteppingAlone:
    """The floor of a gym env: ``num_envs`` gymnasium envs, each row reset with a seed on one of them and
    stepped (one fixed action) for as many steps as evaluate took on it."""

    def __init__(self, env_id: str, num_envs: int) -> None:
        self.envs = [gym.make(env_id) for _ in range(num_envs)]
        self.action = self.envs[0].action_space.sample()

    def rate(self, steps: list[int], seed: int) -> float:
        started = time.perf_counter()
        for row, count in enumerate(steps):
            env = self.envs[row % len(self.envs)]
            env.reset(seed=seed + row)
            for _ in range(count):
                _, _, terminated, truncated, _ = env.step(self.action)
                if terminated or truncated:
                    env.reset()
        return sum(steps) / (time.perf_counter() - started)

    def close(self) -> None:
        for env in self.envs:
            env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per way (best kept)")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--rows-per-env", type=int, default=4, help="population = this x num_envs")
    parser.add_argument("--env", action="append", help=f"env name (repeatable; default {ENV_NAMES})")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    print(f"load average {os.getloadavg()}")
    for env_name in args.env or ENV_NAMES:
        ways = {name: Way(env_name, args.num_envs, args.rows_per_env, name == "refill") for name in WAYS}
        rates: dict[str, list[float]] = {name: [] for name in WAYS}
        prefix, _, env_id = env_name.rpartition("::")
        floor = SteppingAlone(env_id, args.num_envs) if prefix == "gym" else None
        for repeat in range(repeats):  # interleaved, so that a busy moment hits every way
            for name, way in ways.items():
                rates[name].append(way.rate(seed=repeat))
            if floor is not None:
                rates.setdefault("stepping alone", []).append(floor.rate(ways["refill"].steps, seed=repeat))
        for way in ways.values():
            way.env.close()
        if floor is not None:
            floor.close()
        population = args.num_envs * args.rows_per_env
        print(
            f"{env_name}: {population} MLPs (64-64) on {args.num_envs} sub-envs, 1 episode, best of {repeats}"
        )
        for name, values in rates.items():
            spread = f"{min(values):,.0f}-{max(values):,.0f}"
            print(f"  {name:13s} {max(values):10,.0f} env-steps/s (spread {spread})")
        whole = max(rates["whole starts"])
        print(f"  refill / whole starts: {max(rates['refill']) / whole:.2f}x")
        if "stepping alone" in rates:
            print(
                f"  stepping alone / whole starts (what refill could gain at most): {max(rates['stepping alone']) / whole:.2f}x"
            )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
