"""A pyribs MAP-Elites loop on gymnasium's Hopper-v5, its solutions scored by vecrl's ``evaluate`` against the
loop a pyribs user writes without vecrl (the baseline): one ``gymnasium.make`` env, each solution's episode
stepped to its end in turn, the same policy (``vecrl_policy.Policy``, one row) and the same seeds.

Both sides run pyribs' ask/tell as its tutorials write it (a ``GridArchive`` over two measures, an
``EvolutionStrategyEmitter`` of 32 solutions, a ``Scheduler``), with archives and emitters seeded alike,
so they ask for the same solutions while they are told the same scores. vecrl's side makes its env as
``examples/pyribs_interop.py`` does: ``make_vector_env("gym::Hopper-v5", num_envs=32)``, no episode
budget. The two sides alternate, one iteration each, timed from ``ask`` to ``tell``; the median of each
side's iterations is printed, the ratio of each iteration's pair (vecrl / plain loop, lower is better: their
median and spread) and of the totals, the largest gap
between the two archives' objectives and measures, and the load average.

    python bench/qd_loop.py [--iterations 20] [--batch 32] [--env Hopper-v5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium
import numpy as np
import torch
from ribs.archives import GridArchive
from ribs.emitters import EvolutionStrategyEmitter
from ribs.schedulers import Scheduler

import vecrl
from vecrl_evaluate import Measure, evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy

MEASURES = {
    "height": Measure(lambda observation, action, reward: observation[:, 0], "last"),
    "lean": Measure(lambda observation, action, reward: abs(observation[:, 1]), "max"),
}
RANGES = [(0.7, 1.3), (0.0, 0.3)]


def _scheduler(solution_dim: int, batch: int, seed: int) -> tuple[Scheduler, GridArchive]:
    archive = GridArchive(solution_dim=solution_dim, dims=[20, 20], ranges=RANGES, seed=seed)
    emitter = EvolutionStrategyEmitter(
        archive, x0=np.zeros(solution_dim), sigma0=0.5, batch_size=batch, seed=seed
    )
    return Scheduler(archive, [emitter]), archive


def plain_loop(
    policy: Policy, env: gymnasium.Env, solutions: np.ndarray, seed: int
) -> tuple[np.ndarray, ...]:
    """Each solution's episode on one env, in turn: its return and the two measures, as evaluate scores them."""
    seeds = row_seeds(seed, len(solutions))
    returns, measures = np.zeros(len(solutions)), np.zeros((len(solutions), 2))
    with torch.no_grad():
        for r, solution in enumerate(torch.as_tensor(solutions, dtype=torch.float32)):
            policy.set_parameters(solution[None])
            observation, _ = env.reset(seed=int(seeds[r]))
            total, lean, done = 0.0, 0.0, False
            while not done:
                seen = torch.as_tensor(observation, dtype=torch.float32)[None]
                action = policy(seen)[0].numpy()
                height, lean = float(seen[0, 0]), max(lean, abs(float(seen[0, 1])))
                observation, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
            returns[r], measures[r] = total, (height, lean)
    return returns, measures


def vecrl_loop(
    policy: Policy, env: vecrl.TorchWrapper, solutions: np.ndarray, seed: int
) -> tuple[np.ndarray, ...]:
    result = evaluate(
        policy, env, torch.as_tensor(solutions, dtype=torch.float32), seed=seed, measures=MEASURES
    )
    measures = torch.stack([result.measures[name] for name in MEASURES], dim=1)
    return result.mean_return.numpy(), measures.numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Hopper-v5")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    plain_env = gymnasium.make(args.env)
    vector_env = vecrl.make_vector_env(f"gym::{args.env}", num_envs=args.batch)
    obs = plain_env.observation_space.shape[0]
    act = plain_env.action_space.shape[0]
    policies = {side: Policy("Linear(obs, act) >> Tanh()", obs=obs, act=act) for side in ("plain", "vecrl")}
    sides = {
        "plain": (lambda s, i: plain_loop(policies["plain"], plain_env, s, i)),
        "vecrl": (lambda s, i: vecrl_loop(policies["vecrl"], vector_env, s, i)),
    }
    searches = {side: _scheduler(policies[side].parameter_length, args.batch, args.seed) for side in sides}
    seconds: dict[str, list[float]] = {side: [] for side in sides}
    print(f"load average {os.getloadavg()}")
    for iteration in range(1, args.iterations + 1):
        for side, run in sides.items():
            scheduler, _ = searches[side]
            start = time.perf_counter()
            solutions = scheduler.ask()
            objectives, measures = run(solutions, iteration)
            scheduler.tell(objectives, measures)
            seconds[side].append(time.perf_counter() - start)
    archives = {side: searches[side][1].data(return_type="pandas").sort_values("index") for side in sides}
    plain, ours = archives["plain"], archives["vecrl"]
    same_cells = plain["index"].tolist() == ours["index"].tolist()
    gap = (
        float(np.abs(plain["objective"].to_numpy() - ours["objective"].to_numpy()).max())
        if same_cells
        else float("nan")
    )
    median = {side: statistics.median(times[1:]) for side, times in seconds.items()}
    print(
        f"pyribs on {args.env}: {args.batch} solutions an iteration, {args.iterations} iterations (the first left out)"
    )
    print("  baseline: one gymnasium env, each solution's episode in turn (the loop a pyribs user writes)")
    for side in sides:
        spread = f"{min(seconds[side][1:]) * 1e3:.0f}-{max(seconds[side][1:]) * 1e3:.0f} ms"
        print(f"  {side:6s} {median[side] * 1e3:8.1f} ms an iteration (spread {spread})")
    ratios = [ours / plain for ours, plain in zip(seconds["vecrl"][1:], seconds["plain"][1:], strict=True)]
    total = sum(seconds["vecrl"][1:]) / sum(seconds["plain"][1:])
    print(
        f"  vecrl / plain loop: {statistics.median(ratios):.2f}x the median iteration's"
        f" (spread {min(ratios):.2f}-{max(ratios):.2f}x), {total:.2f}x in all"
    )
    print(
        f"  archives: {len(plain)} and {len(ours)} elites, same cells {same_cells}, largest objective gap {gap:.2e}"
    )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
