"""pyribs drives the search, vecrl evaluates: pyribs' scheduler asks for solutions, ``vecrl_evaluate.evaluate``
scores them all in one vectorized call with the objective (the mean return) and the measures pyribs'
archive is a grid over, and the scheduler is told. pyribs leaves the rollout to its user; here it is one call.

    python -m pip install -c constraints.txt ribs
    python examples/pyribs_interop.py [--iterations 50] [--env gym::CartPole-v1]

CartPole's measures: where the cart ends its episodes and how far the pole leans at most.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from ribs.archives import GridArchive
from ribs.emitters import EvolutionStrategyEmitter
from ribs.schedulers import Scheduler

import vecrl
from vecrl_evaluate import Measure, evaluate
from vecrl_policy import Policy

MEASURES = {
    "position": Measure(lambda observation, action, reward: observation[:, 0], "last"),
    "lean": Measure(lambda observation, action, reward: abs(observation[:, 2]), "max"),
}
RANGES = [(-1.0, 1.0), (0.0, 0.21)]  # the cart's track is +-2.4; the pole falls past 0.21 rad


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="gym::CartPole-v1")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--batch", type=int, default=32, help="solutions each emitter asks for")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = vecrl.make_vector_env(args.env, num_envs=args.batch * 2)
    policy = Policy("Linear(obs, act)", obs=4, act=2)
    archive = GridArchive(solution_dim=policy.parameter_length, dims=[10, 10], ranges=RANGES, seed=args.seed)
    emitters = [
        EvolutionStrategyEmitter(
            archive,
            x0=np.zeros(policy.parameter_length),
            sigma0=0.5,
            batch_size=args.batch,
            seed=args.seed + i,
        )
        for i in range(2)
    ]
    scheduler = Scheduler(archive, emitters)
    for iteration in range(1, args.iterations + 1):
        solutions = scheduler.ask()
        result = evaluate(
            policy, env, torch.as_tensor(solutions, dtype=torch.float32), seed=iteration, measures=MEASURES
        )
        measures = torch.stack([result.measures[name] for name in MEASURES], dim=1)
        scheduler.tell(result.mean_return.numpy(), measures.numpy())
        if iteration % 10 == 0 or iteration == args.iterations:
            stats = archive.stats
            print(
                f"iteration {iteration:3d}  {stats.num_elites:3d} elites  coverage {stats.coverage:6.1%}"
                f"  best {stats.obj_max:6.1f}"
            )
    env.close()


if __name__ == "__main__":
    main()
