"""Evolve a CartPole-v1 policy with a separable natural evolution strategy (SNES), in a few lines of torch.

Each generation samples a population of parameter vectors around a mean, scores them all in one
`evaluate` call on a vectorized env, and moves the mean and the per-parameter step sizes towards the
better ones. It stops when the mean policy scores >= 475 (CartPole's solved score) over fresh
episodes. Its folder (`--out`, a `vecrl_evotorch.RunFolder`) gets the run's state (the search distribution,
the random generator, the histories) after every generation, so Ctrl-C or a crash loses at most one and
`--resume` goes on exactly as the uninterrupted run would have, the results table and the plot: what
`vecrl evolve` writes for EvoTorch's searchers, for a searcher of your own. From the repository's root:

    python3.11 -m pip install -c constraints.txt packages/vecrl-core packages/vecrl-gym packages/vecrl-policy packages/vecrl-evaluate packages/vecrl-evotorch
    python examples/evolve_cartpole.py --generations 3 --out runs/snes  # a first look in seconds

    python examples/evolve_cartpole.py [--popsize 64] [--generations 100] [--out runs/snes-cartpole]
                                       [--resume | --overwrite]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import torch

import vecrl
from vecrl.cli import HelpFormatter
from vecrl.command import positive_int, seed_int
from vecrl_evaluate import evaluate
from vecrl_evotorch.runs import RunError, RunFolder
from vecrl_policy import Policy

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
    parser.add_argument("--out", default="runs/snes-cartpole", help="the run's folder (state, results, plot)")
    parser.add_argument("--resume", action="store_true", help="go on with the run in --out")
    parser.add_argument("--overwrite", action="store_true", help="start again over the run in --out")
    args = parser.parse_args()
    settings = {"popsize": args.popsize, "test_episodes": args.test_episodes, "seed": args.seed}
    try:
        folder = (
            RunFolder.open(args.out)
            if args.resume
            else RunFolder.create(args.out, settings, overwrite=args.overwrite)
        )
        state = folder.load_state() if args.resume else None
    except RunError as error:
        sys.exit(f"evolve_cartpole.py: {error}")
    if state is not None and folder.settings() != settings:
        sys.exit(f"evolve_cartpole.py: --resume: the run in {args.out} was started with {folder.settings()}")

    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.popsize, num_episodes=1)
    test_env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=args.test_episodes, num_episodes=1)
    policy = Policy(NETWORK, obs_length=4, act_length=2)
    n = policy.parameter_length
    lr_sigma = (3 + math.log(n)) / (5 * math.sqrt(n))
    if state is not None:
        torch.set_rng_state(state["rng"])
        print(f"resumed {args.out} after generation {state['generation']}", flush=True)
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
    try:
        while state["generation"] < args.generations and not state["solved"] >= SOLVED:
            generation = state["generation"] + 1
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
            folder.save_state(state)  # a printed generation is saved
            folder.write_results(history)
            print(
                f"gen {generation:3d}  best {history['best'][-1]:6.1f}  mean {history['mean'][-1]:6.1f}"
                f"  center policy on {args.test_episodes} fresh episodes {score:6.1f}"
                f"  ({time.perf_counter() - start:5.1f} s)",
                flush=True,
            )
    except KeyboardInterrupt:
        saved = state["generation"]
        sys.stderr.write(
            f"\ninterrupted after {saved} generations saved: --resume --out {args.out} goes on\n"
        )
        sys.exit(130)
    if state["solved"] >= SOLVED:
        print(
            f"solved: mean return {state['solved']:.1f} >= {SOLVED} after {state['generation']} generations"
        )
    else:
        print(f"not solved within {args.generations} generations (last score {state['solved']:.1f})")
    curves = {"best of population": history["best"], "population mean": history["mean"]}
    curves["center policy, fresh episodes"] = history["center"]
    plot = folder.save_plot(curves, "SNES on CartPole-v1 with vecrl", SOLVED)
    if plot is not None:
        print(f"plot saved to {plot}")


if __name__ == "__main__":
    main()
