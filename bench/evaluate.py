"""One population evaluation: 256 MLP policies, one episode each, three ways, in one run, on CartPole-v1
(Discrete actions) and Hopper-v5 (MuJoCo: float64 observations, Box actions).

  vecrl      vecrl_policy.evaluate(Policy, make_vector_env("gym::ENV", num_envs=256, num_episodes=1))
  (a) loop   what a user writes by hand: gymnasium's SyncVectorEnv and one nn.Module per row
  (b) evotorch  EvoTorch 0.6.1's make_vector_env + Policy, stepped until every row has ended once

Every way evaluates the same parameter rows; episode lengths differ a little between ways (the envs
are seeded differently), so the figure compared is env-steps per second, printed with the ratio
vecrl / other (higher is better for vecrl). Targets: >= 3x (a) and >= 1.3x (b).

    python bench/evaluate.py [--quick] [--repeats 3] [--env CartPole-v1 --env Hopper-v5]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import vecrl
from vecrl_policy import Policy, evaluate

POPSIZE = 256
HIDDEN = 64
ENV_IDS = ("CartPole-v1", "Hopper-v5")


@dataclass(frozen=True)
class Task:
    env_id: str
    obs_length: int
    act_length: int
    discrete: bool

    @classmethod
    def of(cls, env_id: str) -> Task:
        env = gym.make(env_id)
        discrete = isinstance(env.action_space, gym.spaces.Discrete)
        act_length = gym.spaces.flatdim(env.action_space)
        return cls(env_id, gym.spaces.flatdim(env.observation_space), act_length, discrete)

    def network(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(self.obs_length, HIDDEN),
            nn.Tanh(),
            nn.Linear(HIDDEN, HIDDEN),
            nn.Tanh(),
            nn.Linear(HIDDEN, self.act_length),
        )


def timed(run) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    env_steps = run()
    return time.perf_counter() - start, env_steps


def run_vecrl(task: Task, rows: torch.Tensor, seed: int) -> int:
    policy = Policy(task.network())
    env = vecrl.make_vector_env(f"gym::{task.env_id}", num_envs=len(rows), num_episodes=1, empty_info=True)
    result = evaluate(policy, env, rows, seed=seed)
    env.close()
    return int(result.steps.sum())


def run_user_loop(task: Task, rows: torch.Tensor, seed: int) -> int:
    """gymnasium's SyncVectorEnv, one nn.Module per row, until each row has finished one episode."""
    template = Policy(task.network())
    modules = [template.to_torch_module(row) for row in rows]
    envs = gym.vector.SyncVectorEnv([lambda: gym.make(task.env_id)] * len(rows))
    obs, _ = envs.reset(seed=seed)
    done = np.zeros(len(rows), dtype=bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            x = torch.as_tensor(obs, dtype=torch.float32)
            outputs = [module(x[i]) for i, module in enumerate(modules)]
            actions = np.array([int(y.argmax()) if task.discrete else y.numpy() for y in outputs])
            obs, _, terminated, truncated, _ = envs.step(actions)
            env_steps += int((~done).sum())
            done |= terminated | truncated
    envs.close()
    return env_steps


def run_evotorch(task: Task, rows: torch.Tensor, seed: int) -> int:
    from evotorch.neuroevolution.net.vecrl import Policy as EvoPolicy
    from evotorch.neuroevolution.net.vecrl import make_vector_env as evo_make_vector_env

    env = evo_make_vector_env(f"gym::{task.env_id}", num_envs=len(rows), num_episodes=1, empty_info=True)
    policy = EvoPolicy(task.network())
    policy.set_parameters(rows)
    obs, _ = env.reset(seed=seed)
    done = torch.zeros(len(rows), dtype=torch.bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            outputs = policy(obs.float().nan_to_num())
            actions = outputs.argmax(dim=-1) if task.discrete else outputs
            obs, _, terminated, truncated, _ = env.step(actions)
            ended = (terminated | truncated) & ~done
            env_steps += int((~done).sum())
            done |= ended
            if ended.any():
                policy.reset(ended)
    env.close()
    return env_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per way (best kept)")
    parser.add_argument("--env", action="append", help=f"gymnasium id (repeatable; default {ENV_IDS})")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    torch.set_num_threads(1)
    for env_id in args.env or ENV_IDS:
        measure(Task.of(env_id), repeats)


def measure(task: Task, repeats: int) -> None:
    """Every way on the same rows, interleaved, best rate of ``repeats`` kept; ratios printed."""
    length = Policy(task.network()).parameter_length
    rows = torch.randn(POPSIZE, length, generator=torch.Generator().manual_seed(0)) * 0.3
    ways = {"vecrl": run_vecrl, "(a) user loop": run_user_loop, "(b) evotorch 0.6.1": run_evotorch}
    try:
        import evotorch  # noqa: F401
    except ImportError:
        ways.pop("(b) evotorch 0.6.1")
    best: dict[str, float] = {}
    for repeat in range(repeats):
        for name, run in ways.items():
            elapsed, env_steps = timed(lambda run=run, seed=repeat: run(task, rows, seed=seed))
            best[name] = max(best.get(name, 0.0), env_steps / elapsed)

    shape = f"{task.obs_length}-{HIDDEN}-{HIDDEN}-{task.act_length}"
    print(f"evaluate {POPSIZE} MLP policies ({shape}, tanh) x 1 {task.env_id} episode, best of {repeats}")
    for name, rate in best.items():
        ratio = best["vecrl"] / rate
        print(f"  {name:20s} {rate:12,.0f} env-steps/s   vecrl is {ratio:5.2f}x this")
    if "(b) evotorch 0.6.1" not in best:
        print("  (b) evotorch 0.6.1   n/a (evotorch not installed)")


if __name__ == "__main__":
    main()
