"""Domain randomization: evolve a policy for brax's inverted pendulum under randomized masses and motor
strength, another on the one default model, and compare them over a grid of pole masses.

Each solution of a population is scored under parameters drawn for its every episode from its own seed
(``VecrlNE(randomize=...)``: ``vecrl.randomize.scale``), so a run reproduces on any number of sub-envs, in
worker processes and on the fused jax path. The grid gives every row of one ``evaluate`` call fixed
parameters (``randomize={"body_mass": ...}``, one row each). Prints the table; with matplotlib, saves the plot.

    python examples/randomized_pendulum.py                       # both runs and the grid, a few minutes
    python examples/randomized_pendulum.py --generations 3 --out grid.png
"""

from __future__ import annotations

import argparse
import logging

import numpy as np
import torch

import vecrl
from vecrl.randomize import scale
from vecrl_evaluate import evaluate
from vecrl_evotorch import VecrlNE
from vecrl_evotorch.evolve import make_searcher
from vecrl_policy import Policy

ENV = "brax::inverted_pendulum"
CONFIG = {"episode_length": 300}
#: What each episode of a randomized run varies: every body's mass and the motor's gear, element by element.
RANDOMIZE = scale({"body_mass": (0.2, 1.5), "actuator_gear": (0.8, 1.2)})
#: The pole masses of the grid, as multiples of the default.
POLE_MASSES = np.geomspace(0.25, 4.0, 9)


def evolve(randomize: scale | None, generations: int, popsize: int) -> tuple[VecrlNE, torch.Tensor]:
    """The problem and the center PGPE reaches after ``generations``."""
    problem = VecrlNE(ENV, env_config=CONFIG, num_episodes=2, seed=0, randomize=randomize)
    searcher = make_searcher(problem, "pgpe", popsize, stdev_init=0.1)  # as `vecrl evolve` makes it
    for generation in range(1, generations + 1):
        searcher.step()
        if generation % 10 == 0 or generation == generations:
            print(f"  generation {generation}: mean return {searcher.status['mean_eval']:.1f}", flush=True)
    return problem, searcher.status["center"].as_subclass(torch.Tensor).clone()


def grid_returns(problem: VecrlNE, center: torch.Tensor, env: object) -> np.ndarray:
    """The center's mean return over 4 episodes at each pole mass of the grid (one row each)."""
    defaults = env.unwrapped.default_params["body_mass"]
    masses = np.repeat(defaults[None], len(POLE_MASSES), axis=0)
    masses[:, -1] *= POLE_MASSES  # the pole is the last body
    rows = center.expand(len(POLE_MASSES), -1).contiguous()
    policy = Policy.for_env(problem.network_string, env)  # the network the center parametrizes
    result = evaluate(policy, env, rows, num_episodes=4, seed=1, randomize={"body_mass": masses})
    return result.mean_return.numpy()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=80)
    parser.add_argument("--popsize", type=int, default=64)
    parser.add_argument("--out", default="randomized_pendulum.png", help="the plot (needs matplotlib)")
    args = parser.parse_args()
    logging.getLogger("evotorch").setLevel(logging.WARNING)  # its INFO lines on every problem made
    env = vecrl.make_vector_env(ENV, num_envs=len(POLE_MASSES), **CONFIG)
    curves = {}
    for label, randomize in (("default model", None), ("randomized", RANDOMIZE)):
        print(f"evolving on {ENV}, {label} ...", flush=True)
        problem, center = evolve(randomize, args.generations, args.popsize)
        curves[label] = grid_returns(problem, center, env)
        problem.close()
    env.close()
    print(f"{'pole mass':>10}" + "".join(f"{label:>16}" for label in curves))
    for k, mass in enumerate(POLE_MASSES):
        print(f"{mass:>9.2f}x" + "".join(f"{curve[k]:>16.1f}" for curve in curves.values()))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    figure, axes = plt.subplots(figsize=(6, 4))
    for label, curve in curves.items():
        axes.plot(POLE_MASSES, curve, marker="o", label=f"evolved on the {label}")
    axes.set(xscale="log", xlabel="pole mass (x default)", ylabel="mean return", title=ENV)
    axes.legend()
    figure.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"plot saved to {args.out}")


if __name__ == "__main__":
    main()
