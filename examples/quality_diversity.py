"""Quality-diversity on Hopper-v5: EvoTorch's MAP-Elites fills an archive of gaits over two measures that
vecrl takes from the same rollouts as the return, the hopper's mean forward velocity (MuJoCo's step info
``x_velocity``) and its torso height where each episode ends (entry 0 of the observation), then draws the
archive as a heatmap of each cell's elite's return.

    python examples/quality_diversity.py [--generations 20] [--bins 8] [--workers 2] [--out hopper_gaits.png]

Every generation mutates each elite of the archive once (one population per generation, evaluated by
``vecrl_evaluate.evaluate`` in one call) and keeps, per cell, the best of old and new. The same numbers come
from brax's hopper with ``--env brax::hopper`` (its observation's entry 5 is the forward velocity: give
``--speed obs``), evaluated as one compiled jax program.
"""

from __future__ import annotations

import argparse

import torch
from evotorch.algorithms import MAPElites
from evotorch.operators import GaussianMutation

from vecrl_evaluate import Measure
from vecrl_evotorch import VecrlNE

VELOCITY = (-0.5, 1.5)  # m/s: standing still to a steady hop
HEIGHT = (0.7, 1.3)  # m: Hopper's episodes end when the torso drops below 0.7


def torso_height(observation, action, reward):
    return observation[:, 0]


def forward_velocity(observation, action, reward):  # brax's hopper: no step info, entry 5 is the velocity
    return observation[:, 5]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="gym::Hopper-v5")
    parser.add_argument(
        "--speed", choices=("info", "obs"), default="info", help="x_velocity from the info or obs[5]"
    )
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--bins", type=int, default=8, help="cells per measure")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="hopper_gaits.png", help="the heatmap (needs matplotlib)")
    args = parser.parse_args()

    speed = "x_velocity" if args.speed == "info" else Measure(forward_velocity, "mean")
    problem = VecrlNE(
        args.env,
        "Linear(obs_length, act_length) >> Tanh()",
        measures={"velocity": speed, "height": Measure(torso_height, "last")},
        num_workers=args.workers,
        initial_bounds=(-0.5, 0.5),
        seed=args.seed,
    )
    grid = MAPElites.make_feature_grid(
        lower_bounds=[VELOCITY[0], HEIGHT[0]],
        upper_bounds=[VELOCITY[1], HEIGHT[1]],
        num_bins=args.bins,
        dtype="float32",
    )
    searcher = MAPElites(
        problem, operators=[GaussianMutation(problem, stdev=0.1)], re_evaluate=False, feature_grid=grid
    )
    for generation in range(1, args.generations + 1):
        searcher.step()
        filled = searcher.filled
        fitness = searcher.population.evals[:, 0]
        print(
            f"gen {generation:3d}  {int(filled.sum()):3d} of {len(filled)} cells  best {float(fitness[filled].max()):7.1f}"
            f"  qd-score {float(fitness[filled].sum()):9.1f}"
        )
    problem.close()
    draw(searcher, args.bins, args.out)


def draw(searcher: MAPElites, bins: int, path: str) -> None:
    """Each cell's elite's return over (velocity, height); the outer bins reach past the bounds."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no heatmap: matplotlib is not installed")
        return
    fitness = torch.where(searcher.filled, searcher.population.evals[:, 0], torch.nan).reshape(bins, bins)
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(fitness.T.numpy(), origin="lower", cmap="viridis")
    fig.colorbar(image, label="elite's return")
    ax.set_xlabel(f"mean forward velocity, {VELOCITY[0]} to {VELOCITY[1]} m/s")
    ax.set_ylabel(f"torso height at the end, {HEIGHT[0]} to {HEIGHT[1]} m")
    ax.set_title("Hopper gaits: MAP-Elites with vecrl")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"heatmap saved to {path}")


if __name__ == "__main__":
    main()
