"""Evolve a Hopper-v5 (MuJoCo) policy with SNES, evaluating each generation's population on Ray actors.

The same loop as evolve_cartpole.py on a physics task: each generation samples a population around a
mean, scores it in one `evaluate` call, here split between Ray actors (`--ray`: Ray started on this
machine; `--ray ADDRESS`: the cluster at that address), and moves the mean and the step sizes towards
the better rows. The actors start once, before the first generation, and keep their envs. Without
`--ray` it evaluates in this process. It prints a line per generation and saves a plot.

    python examples/evolve_hopper.py --ray [ADDRESS] [--actors N] [--popsize 64] [--generations 30]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time

import torch
from evolve_cartpole import save_plot, snes_step

import vecrl
from vecrl.command import positive_int, seed_int
from vecrl_policy import Policy, evaluate

NETWORK = "Linear(obs_length, 32) >> Tanh() >> Linear(32, act_length)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--popsize", type=positive_int, default=64, help="parameter vectors per generation")
    parser.add_argument("--generations", type=positive_int, default=30, help="generations to run")
    parser.add_argument("--test-episodes", type=positive_int, default=8, help="fresh episodes of the center")
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help="evaluate on Ray actors (vecrl-ray)",
    )
    parser.add_argument("--actors", type=positive_int, default=None, help="Ray actors (default: one per CPU)")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the noise and the envs")
    parser.add_argument("--out", default="evolve_hopper.png", help="where to save the plot (PNG)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=min(args.popsize, 64), num_episodes=1)
    test_env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=args.test_episodes, num_episodes=1)
    policy = Policy(NETWORK, obs_length=11, act_length=3)
    n = policy.parameter_length
    mean, sigma = torch.zeros(n), torch.full((n,), 0.1)
    lr_sigma = (3 + math.log(n)) / (5 * math.sqrt(n))

    with contextlib.ExitStack() as stack:
        executor = None
        if args.ray is not None:
            from vecrl_ray import RayExecutor

            start = time.perf_counter()
            executor = stack.enter_context(RayExecutor(args.actors, address=args.ray or None))
            print(f"{executor!r} started in {time.perf_counter() - start:.1f} s", flush=True)
        best_history, mean_history, center_history = [], [], []
        start = time.perf_counter()
        for generation in range(1, args.generations + 1):
            noise = torch.randn(args.popsize, n)
            population = mean + sigma * noise
            result = evaluate(policy, env, population, seed=args.seed + generation, executor=executor)
            fitness = result.mean_return.float()
            mean, sigma = snes_step(mean, sigma, noise, fitness, lr_sigma)

            best_history.append(fitness.max().item())
            mean_history.append(fitness.mean().item())
            test = evaluate(policy, test_env, mean.expand(args.test_episodes, n), seed=10_000 + generation)
            center_history.append(test.mean_return.mean().item())
            print(
                f"gen {generation:3d}  best {best_history[-1]:7.1f}  mean {mean_history[-1]:7.1f}"
                f"  center policy on {args.test_episodes} fresh episodes {center_history[-1]:7.1f}"
                f"  {int(result.steps.sum()):6d} env-steps  ({time.perf_counter() - start:5.1f} s)",
                flush=True,
            )
    env.close()
    test_env.close()
    save_plot(best_history, mean_history, center_history, args.out, "SNES on Hopper-v5 with vecrl", None)
    print(f"plot saved to {args.out}")


if __name__ == "__main__":
    main()
