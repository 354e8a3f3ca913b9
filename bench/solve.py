"""The time-to-solve race: EvoTorch's PGPE on Hopper-v5, EvoTorch's own VecGymNE against vecrl's VecrlNE.

Every side runs the same searcher (PGPE with ClipUp, centered ranking, symmetric sampling), network,
population size, number of generations and seed, with observation normalization and Hopper's alive bonus
removed (decrease_rewards_by=1.0), one after the other in this process:

  VecGymNE          EvoTorch 0.6.1's VecGymNE("gym::Hopper-v5"), in one process (its default)
  vecrl             VecrlNE("gym::Hopper-v5"), in one process
  vecrl workers=2   VecrlNE("gym::Hopper-v5", num_workers=2): two processes evaluate halves of the population
  vecrl envpool     VecrlNE("envpool::Hopper-v5"): envpool's C++ MuJoCo envs, in one process
  envpool unseeded  the same without VecrlNE's seed, so its evaluations are unseeded, as VecGymNE's are:
                    each sub-env continues its random stream, and the pool is built once (a seeded
                    evaluation builds envpool's pool again, since envpool fixes seeds when it builds
                    one: about 45 ms per generation for 64 Hopper-v5 sub-envs here); the run does not
                    reproduce, as VecGymNE's does not

Per side: the mean evaluation (the searcher's mean_eval: the shaped return, alive bonus removed) every
10 generations, seconds per generation, env-steps per second (interactions / time spent evaluating),
and the wall time at which the mean evaluation first reached the threshold. The ratios compare each
vecrl side with VecGymNE: env-steps/s (higher is better) and the time to the threshold (lower is better).
Targets on a quiet machine: vecrl in one process >= 2x VecGymNE's env-steps/s; vecrl's best side reaches
the threshold in <= 0.4x VecGymNE's wall time, with a learning curve no worse.

It first measures the floors, what stepping alone costs with no policy and no evaluator: a plain loop
over one gymnasium Hopper-v5 (random actions, reset when an episode ends) and envpool's raw pool of 64
Hopper-v5 stepped with the same actions. No gym-based side can pass the first in one process (x2 with
two processes), nor the envpool side the second.

    python bench/solve.py [--generations 100] [--popsize 64] [--threshold 500] [--quick]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

NETWORK = "Linear(obs_length, 64) >> Tanh() >> Linear(64, act_length)"
PROBLEM_OPTIONS = dict(observation_normalization=True, decrease_rewards_by=1.0)


@dataclass
class Run:
    name: str
    curve: dict[int, float] = field(default_factory=dict)
    history: list[tuple[float, float]] = field(default_factory=list)  # (seconds, mean_eval) per generation
    wall: float = 0.0
    steps: int = 0
    generations: int = 0

    def first_at(self, threshold: float) -> float | None:
        """The wall time at which mean_eval first reached ``threshold`` (None: never)."""
        return next((seconds for seconds, mean_eval in self.history if mean_eval >= threshold), None)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.wall

    @property
    def seconds_per_generation(self) -> float:
        return self.wall / self.generations


def race(name: str, make_problem: Callable[[], object], args: argparse.Namespace) -> Run:
    from evotorch.algorithms import PGPE

    torch.manual_seed(args.seed)
    problem = make_problem()
    searcher = PGPE(
        problem,
        popsize=args.popsize,
        center_learning_rate=0.075,
        stdev_learning_rate=0.1,
        stdev_init=0.1,
        optimizer="clipup",
        optimizer_config={"max_speed": 0.15},
        ranking_method="centered",
        symmetric=True,
    )
    run = Run(name)
    start = time.perf_counter()
    for generation in range(1, args.generations + 1):
        searcher.step()
        status = searcher.status
        mean_eval = float(status["mean_eval"])
        elapsed = time.perf_counter() - start
        run.history.append((elapsed, mean_eval))
        if generation % 10 == 0 or generation == args.generations:
            run.curve[generation] = mean_eval
            print(
                f"  {name:16s} gen {generation:4d}  mean_eval {mean_eval:8.1f}  {elapsed:7.1f} s"
                f"  {int(status['total_interaction_count']):,} steps",
                flush=True,
            )
    run.wall = time.perf_counter() - start
    run.steps = int(searcher.status["total_interaction_count"])
    run.generations = args.generations
    close = getattr(problem, "close", None)
    if close is not None:
        close()
    return run


def floors(steps: int = 20_000) -> dict[str, float]:
    """Env-steps per second of stepping alone: gymnasium's Hopper-v5 in a plain loop, envpool's raw pool."""
    import gymnasium
    import numpy as np

    rates = {}
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, 3)).astype(np.float32)
    env = gymnasium.make("Hopper-v5")
    env.reset(seed=0)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    rates["gymnasium Hopper-v5, one env"] = steps / (time.perf_counter() - start)
    env.close()
    try:
        import envpool
    except ImportError:
        return rates
    pool = envpool.make_gymnasium("Hopper-v5", num_envs=64)  # it resets ended envs itself
    pool.reset()
    batches = actions[: steps - steps % 64].reshape(-1, 64, 3)
    start = time.perf_counter()
    for batch in batches:
        pool.step(batch)
    rates["envpool Hopper-v5, 64 envs"] = batches.size / 3 / (time.perf_counter() - start)
    pool.close()
    return rates


def sides(args: argparse.Namespace) -> dict[str, Callable[[], object]]:
    from evotorch.neuroevolution import VecGymNE

    from vecrl_evotorch import VecrlNE

    def vecrl_problem(env: str, **extra: object) -> Callable[[], object]:
        return lambda: VecrlNE(env, NETWORK, seed=args.seed, **PROBLEM_OPTIONS, **extra)

    all_sides = {
        "VecGymNE": lambda: VecGymNE("gym::Hopper-v5", NETWORK, **PROBLEM_OPTIONS),
        "vecrl": vecrl_problem("gym::Hopper-v5"),
        "vecrl workers=2": vecrl_problem("gym::Hopper-v5", num_workers=2),
        "vecrl envpool": vecrl_problem("envpool::Hopper-v5"),
        "envpool unseeded": lambda: VecrlNE("envpool::Hopper-v5", NETWORK, **PROBLEM_OPTIONS),
    }
    return {name: all_sides[name] for name in args.side} if args.side else all_sides


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--generations", type=int, default=100)
    parser.add_argument("--popsize", type=int, default=64)
    parser.add_argument("--threshold", type=float, default=500.0, help="mean_eval (alive bonus removed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--side", action="append", help="run only these sides (repeatable)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 generations of 8")
    args = parser.parse_args()
    if args.quick:
        args.generations, args.popsize = 4, 8
    print(
        f"PGPE on Hopper-v5: popsize {args.popsize}, {args.generations} generations, seed {args.seed},"
        f" threshold {args.threshold}; load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    floor = floors()
    for name, rate in floor.items():
        print(f"floor: {name}: {rate:,.0f} env-steps/s", flush=True)
    runs = [race(name, make, args) for name, make in sides(args).items()]
    base = runs[0]
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    generations = sorted(base.curve)
    print(
        f"{'side':16s} {'s/gen':>7s} {'steps/s':>9s} {'x steps/s':>9s} {'to threshold':>13s} {'x time':>7s}  "
        + " ".join(f"g{g:<6d}" for g in generations)
    )
    for run in runs:
        at, base_at = run.first_at(args.threshold), base.first_at(args.threshold)
        time_ratio = "" if at is None or base_at is None else f"{at / base_at:.2f}"
        print(
            f"{run.name:16s} {run.seconds_per_generation:7.2f} {run.steps_per_second:9,.0f}"
            f" {run.steps_per_second / base.steps_per_second:9.2f} {'never' if at is None else f'{at:.1f} s':>13s}"
            f" {time_ratio:>7s}  " + " ".join(f"{run.curve.get(g, float('nan')):7.1f}" for g in generations)
        )
    for name, rate in floor.items():
        print(f"floor {name}: {rate:,.0f} env-steps/s = {rate / base.steps_per_second:.2f}x VecGymNE's")
    for threshold in sorted({args.threshold / 4, args.threshold / 2, args.threshold}):
        times = [run.first_at(threshold) for run in runs]
        print(
            f"to mean_eval {threshold:g}: "
            + ", ".join(
                f"{run.name} {'never' if t is None else f'{t:.1f} s'}"
                for run, t in zip(runs, times, strict=True)
            )
        )


if __name__ == "__main__":
    main()
