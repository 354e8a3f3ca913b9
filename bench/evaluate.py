"""One population evaluation: 256 MLP policies, one CartPole-v1 episode each, three ways, in one run.

  vecrl      vecrl_policy.evaluate(Policy, make_vector_env("gym::CartPole-v1", num_envs=256, num_episodes=1))
  (a) loop   what a user writes by hand: gymnasium's SyncVectorEnv and one nn.Module per row
  (b) evotorch  EvoTorch 0.6.1's make_vector_env + Policy, stepped until every row has ended once

Every way evaluates the same parameter rows; episode lengths differ a little between ways (the envs
are seeded differently), so the figure compared is env-steps per second, printed with the ratio
vecrl / other (higher is better for vecrl). Targets: >= 3x (a) and >= 1.3x (b).

    python bench/evaluate.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import vecrl
from vecrl_policy import Policy, evaluate

POPSIZE = 256
HIDDEN = 64


def network() -> nn.Module:
    return nn.Sequential(
        nn.Linear(4, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 2)
    )


def timed(run) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    env_steps = run()
    return time.perf_counter() - start, env_steps


def run_vecrl(rows: torch.Tensor, seed: int) -> int:
    policy = Policy(network())
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=len(rows), num_episodes=1, empty_info=True)
    result = evaluate(policy, env, rows, seed=seed)
    env.close()
    return int(result.steps.sum())


def run_user_loop(rows: torch.Tensor, seed: int) -> int:
    """gymnasium's SyncVectorEnv, one nn.Module per row, until each row has finished one episode."""
    template = Policy(network())
    modules = [template.to_torch_module(row) for row in rows]
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * len(rows))
    obs, _ = envs.reset(seed=seed)
    done = np.zeros(len(rows), dtype=bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            x = torch.as_tensor(obs, dtype=torch.float32)
            actions = np.array([int(module(x[i]).argmax()) for i, module in enumerate(modules)])
            obs, _, terminated, truncated, _ = envs.step(actions)
            env_steps += int((~done).sum())
            done |= terminated | truncated
    envs.close()
    return env_steps


def run_evotorch(rows: torch.Tensor, seed: int) -> int:
    from evotorch.neuroevolution.net.vecrl import Policy as EvoPolicy
    from evotorch.neuroevolution.net.vecrl import make_vector_env as evo_make_vector_env

    env = evo_make_vector_env("gym::CartPole-v1", num_envs=len(rows), num_episodes=1, empty_info=True)
    policy = EvoPolicy(network())
    policy.set_parameters(rows)
    obs, _ = env.reset(seed=seed)
    done = torch.zeros(len(rows), dtype=torch.bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            actions = policy(obs.float().nan_to_num()).argmax(dim=-1)
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
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    torch.set_num_threads(1)

    rows = (
        torch.randn(POPSIZE, Policy(network()).parameter_length, generator=torch.Generator().manual_seed(0))
        * 0.3
    )
    ways = {"vecrl": run_vecrl, "(a) user loop": run_user_loop, "(b) evotorch 0.6.1": run_evotorch}
    try:
        import evotorch  # noqa: F401
    except ImportError:
        ways.pop("(b) evotorch 0.6.1")
    best: dict[str, float] = {}
    for repeat in range(repeats):
        for name, run in ways.items():
            elapsed, env_steps = timed(lambda run=run, seed=repeat: run(rows, seed=seed))
            best[name] = max(best.get(name, 0.0), env_steps / elapsed)

    print(
        f"evaluate {POPSIZE} MLP policies (4-{HIDDEN}-{HIDDEN}-2, tanh) x 1 CartPole-v1 episode, best of {repeats}"
    )
    for name, rate in best.items():
        ratio = best["vecrl"] / rate
        print(f"  {name:20s} {rate:12,.0f} env-steps/s   vecrl is {ratio:5.2f}x this")
    if "(b) evotorch 0.6.1" not in best:
        print("  (b) evotorch 0.6.1   n/a (evotorch not installed)")


if __name__ == "__main__":
    main()
