"""Env-steps per second of vecrl_sb3.SB3VecEnv against stable-baselines3's own DummyVecEnv, the VecEnv an
SB3 user picks for cheap envs, on the same gymnasium env with the same actions.

  (a) DummyVecEnv   DummyVecEnv([lambda: gym.make(env_id)] * N)  (the baseline, 1.00)
  (b) SB3VecEnv     SB3VecEnv(vecrl.make_vector_env("gym::" + env_id, num_envs=N))

Ratios are of (a)'s throughput in the same run; each mode is measured several times, interleaved, and the
best kept (CPU time of this single-threaded process).

    python bench/sb3_vec_env.py            # CartPole-v1 and Pendulum-v1 at 1, 16 and 256 sub-envs
    python bench/sb3_vec_env.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv

import vecrl
from vecrl_sb3 import SB3VecEnv


def steps_per_second(env: VecEnv, actions: list[np.ndarray]) -> float:
    env.reset()
    start = time.process_time()
    for action in actions:
        env.step(action)
    return len(actions) * env.num_envs / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    repeats, total_steps = (1, 2_000) if args.quick else (3, 40_000)
    for env_id in ("CartPole-v1", "Pendulum-v1"):
        for num_envs in (1, 16, 256):
            envs = {
                "(a) DummyVecEnv": DummyVecEnv([lambda env_id=env_id: gym.make(env_id)] * num_envs),
                "(b) SB3VecEnv": SB3VecEnv(vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs)),
            }
            space = envs["(a) DummyVecEnv"].action_space
            space.seed(0)
            actions = [np.stack([space.sample() for _ in range(num_envs)]) for _ in range(64)]
            actions = actions * max(1, total_steps // num_envs // len(actions))
            best = dict.fromkeys(envs, 0.0)
            for _ in range(repeats):
                for name, env in envs.items():
                    best[name] = max(best[name], steps_per_second(env, actions))
            floor = best["(a) DummyVecEnv"]
            for name, rate in best.items():
                print(f"{env_id:<12} {num_envs:>4}  {name:<18} {rate:>10,.0f}  {rate / floor:>6.2f}")
            for env in envs.values():
                env.close()


if __name__ == "__main__":
    main()
