"""Evolve a CartPole-v1 policy with a separable natural evolution strategy (SNES), in a few lines of torch.

Each generation samples a population of parameter vectors around a mean, scores them all in one
`evaluate` call on a vectorized env, and moves the mean and the per-parameter step sizes towards the
better ones. It stops when the mean policy scores >= 475 (CartPole's solved score) over fresh
episodes, and saves a plot of the best and mean return per generation. The run's state (the search
distribution, the random generator, the histories) is saved to `--state` after every generation, so
Ctrl-C loses at most one: `--resume` goes on from it, exactly as the uninterrupted run would have.
`nox -s demo` installs what it needs and runs it; by hand, from the root of the repository:

    python3.11 -m pip install -c constraints.txt packages/vecrl-core packages/vecrl-gym packages/vecrl-policy matplotlib
    python examples/evolve_cartpole.py --generations 3  # a first look in seconds; without it, on until solved

    python examples/evolve_cartpole.py [--popsize 64] [--generations 100] [--out evolve_cartpole.png]
                                       [--state evolve_cartpole.state] [--resume]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time

import checkpoint
import torch

import vecrl
from vecrl.cli import HelpFormatter
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    parser.add_argument("--popsize", type=positive_int, default=64, help="parameter vectors per generation")
    parser.add_argument("--generations", type=positive_int, default=100, help="most generations to run")
    parser.add_argument(
        "--test-episodes", type=positive_int, default=20, help="fresh episodes to judge 'solved'"
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the noise and the envs")
    parser.add_argument("--out", default="evolve_cartpole.png", help="where to save the plot (PNG)")
    parser.add_argument(
        "--state", default="evolve_cartpole.state", help="the run's state, saved each generation"
    )
    parser.add_argument("--resume", action="store_true", help="go on from --state")
    args = parser.parse_args()
    plotting = can_plot()

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.popsize, num_episodes=1)
    test_env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.test_episodes, num_episodes=1)
    policy = Policy(NETWORK, obs_length=4, act_length=2)
    n = policy.parameter_length
    lr_sigma = (3 + math.log(n)) / (5 * math.sqrt(n))
    if args.resume:
        state = checkpoint.load(args.state)
        torch.set_rng_state(state["rng"])
        print(f"resumed from {args.state} after generation {state['generation']}", flush=True)
    else:
        torch.manual_seed(args.seed)
        state = {
            "mean": torch.zeros(n),
            "sigma": torch.full((n,), 0.5),
            "generation": 0,
            "solved": float("nan"),
        }
        state["history"] = {"best": [], "mean": [], "center": []}
    history = state["history"]
    start = time.perf_counter()
    generation = saved = state["generation"]  # saved: what Ctrl-C keeps (a printed generation is saved)
    try:
        while generation < args.generations and not state["solved"] >= SOLVED:
            generation += 1
            noise = torch.randn(args.popsize, n)
            population = state["mean"] + state["sigma"] * noise
            fitness = evaluate(policy, env, population, seed=args.seed + generation).mean_return.float()
            mean, sigma = snes_step(state["mean"], state["sigma"], noise, fitness, lr_sigma)
            center = mean.expand(args.test_episodes, n)
            score = evaluate(policy, test_env, center, seed=10_000 + generation).mean_return.mean().item()
            history["best"].append(fitness.max().item())
            history["mean"].append(fitness.mean().item())
            history["center"].append(score)
            state.update(
                mean=mean, sigma=sigma, generation=generation, solved=score, rng=torch.get_rng_state()
            )
            checkpoint.save(state, args.state)
            saved = generation
            print(
                f"gen {generation:3d}  best {history['best'][-1]:6.1f}  mean {history['mean'][-1]:6.1f}"
                f"  center policy on {args.test_episodes} fresh episodes {score:6.1f}"
                f"  ({time.perf_counter() - start:5.1f} s)",
                flush=True,
            )
    except KeyboardInterrupt:
        checkpoint.interrupted(args.state, saved)
    if state["solved"] >= SOLVED:
        print(
            f"solved: mean return {state['solved']:.1f} >= {SOLVED} after {state['generation']} generations"
        )
    else:
        print(f"not solved within {args.generations} generations (last score {state['solved']:.1f})")

    if plotting:
        title = "SNES on CartPole-v1 with vecrl"
        save_plot(history["best"], history["mean"], history["center"], args.out, title, SOLVED)
        print(f"plot saved to {args.out}")


def can_plot() -> bool:
    """Whether matplotlib is installed; if not, say at the start that no plot will be saved."""
    if importlib.util.find_spec("matplotlib") is None:
        print(
            "note: matplotlib is not installed, so no plot will be saved (pip install matplotlib)",
            file=sys.stderr,
        )
        return False
    return True


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
