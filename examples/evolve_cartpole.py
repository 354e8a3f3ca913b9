"""Evolve a CartPole-v1 policy with a separable natural evolution strategy (SNES), in a few lines of torch.

Each generation samples a population of parameter vectors around a mean, scores them all in one
`evaluate` call on a vectorized env, and moves the mean and the per-parameter step sizes towards the
better ones. It stops when the mean policy scores >= 475 (CartPole's solved score) over fresh
episodes, and saves a plot of the best and mean return per generation.

    python examples/evolve_cartpole.py [--popsize 64] [--generations 100] [--out evolve_cartpole.png]
"""

from __future__ import annotations

import argparse
import math
import time

import torch

import vecrl
from vecrl.command import positive_int, seed_int
from vecrl_policy import Policy, evaluate

SOLVED = 475.0
NETWORK = "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)"


def nes_utilities(fitness: torch.Tensor) -> torch.Tensor:
    """NES rank utilities: the better half gets log-decreasing weights, all shifted to sum to zero."""
    n = len(fitness)
    weights = (math.log(n / 2 + 1) - torch.log(torch.arange(1, n + 1, dtype=torch.float32))).clamp(min=0)
    weights = weights / weights.sum() - 1 / n
    utility = torch.empty(n)
    utility[fitness.argsort(descending=True)] = weights
    return utility


def snes_step(
    mean: torch.Tensor, sigma: torch.Tensor, noise: torch.Tensor, fitness: torch.Tensor, lr_sigma: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """One SNES update: the mean and the per-parameter step sizes moved towards the rows (``mean + sigma *
    noise``) of better fitness."""
    utility = nes_utilities(fitness)
    return mean + sigma * (utility @ noise), sigma * torch.exp(0.5 * lr_sigma * (utility @ (noise**2 - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--popsize", type=positive_int, default=64, help="parameter vectors per generation")
    parser.add_argument("--generations", type=positive_int, default=100, help="most generations to run")
    parser.add_argument(
        "--test-episodes", type=positive_int, default=20, help="fresh episodes to judge 'solved'"
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the noise and the envs")
    parser.add_argument("--out", default="evolve_cartpole.png", help="where to save the plot (PNG)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.popsize, num_episodes=1)
    test_env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.test_episodes, num_episodes=1)
    policy = Policy(NETWORK, obs_length=4, act_length=2)
    n = policy.parameter_length
    mean, sigma = torch.zeros(n), torch.full((n,), 0.5)
    lr_sigma = (3 + math.log(n)) / (5 * math.sqrt(n))

    best_history, mean_history, center_history = [], [], []
    start = time.perf_counter()
    solved_score = float("nan")
    for generation in range(1, args.generations + 1):
        noise = torch.randn(args.popsize, n)
        population = mean + sigma * noise
        fitness = evaluate(policy, env, population, seed=args.seed + generation).mean_return.float()
        mean, sigma = snes_step(mean, sigma, noise, fitness, lr_sigma)

        best_history.append(fitness.max().item())
        mean_history.append(fitness.mean().item())
        test = evaluate(policy, test_env, mean.expand(args.test_episodes, n), seed=10_000 + generation)
        solved_score = test.mean_return.mean().item()
        center_history.append(solved_score)
        print(
            f"gen {generation:3d}  best {best_history[-1]:6.1f}  mean {mean_history[-1]:6.1f}"
            f"  center policy on {args.test_episodes} fresh episodes {solved_score:6.1f}"
            f"  ({time.perf_counter() - start:5.1f} s)",
            flush=True,
        )
        if solved_score >= SOLVED:
            print(f"solved: mean return {solved_score:.1f} >= {SOLVED} after {generation} generations")
            break
    else:
        print(f"not solved within {args.generations} generations (last score {solved_score:.1f})")

    save_plot(best_history, mean_history, center_history, args.out, "SNES on CartPole-v1 with vecrl", SOLVED)
    print(f"plot saved to {args.out}")


def save_plot(
    best: list[float],
    mean: list[float],
    center: list[float] | None,
    path: str,
    title: str,
    solved: float | None,
) -> None:
    """The best and mean return of each generation's population and (where given) the center policy's, as
    a PNG; a dashed line at the ``solved`` score where the task has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 3.5))
    generations = range(1, len(best) + 1)
    ax.plot(generations, best, label="best of population")
    ax.plot(generations, mean, label="population mean")
    if center is not None:
        ax.plot(generations, center, label="center policy, fresh episodes")
    if solved is not None:
        ax.axhline(solved, color="gray", linestyle="--", linewidth=1, label=f"solved ({solved:.0f})")
    ax.set_xlabel("generation")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)  # beside the curves, not on them
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    main()
