"""evaluate on Ray actors against evaluate in one process, in one run, as ratios, with the load average.

  speed       256 Hopper-v5 policies (64-64 MLPs), one episode each: evaluate(..., executor=RayExecutor(2))
              against the single-process evaluate (env of 256 sub-envs) and against the same-machine peer,
              evaluate(..., num_workers=2); every way evaluates the same seeds, and each ratio is that of
              the summed times (the spread of the per-seed ratios printed with it)
  fixed cost  one evaluate call on Ray with warm actors and almost no work (2 CartPole rows, one short
              episode each) against the same call in one process; and a bare actor round trip

Ray's start (ray.init and the actors, about 5 s and more on a quiet machine) and the first call (each
actor makes its env) are timed apart. Targets on a quiet 2-core machine: 2 actors >= 1.7x one process,
fixed cost < 10 ms.

    python bench/evaluate_ray.py [--quick] [--repeats 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time

import ray
import torch

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy
from vecrl_ray import RayExecutor

ROWS = 256


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure_speed(executor: RayExecutor, repeats: int, rows: int) -> None:
    env = vecrl.make_vector_env("gym::Hopper-v5", num_envs=rows, num_episodes=1, empty_info=True)
    policy = Policy("Linear(11, 64) >> Tanh() >> Linear(64, 64) >> Tanh() >> Linear(64, 3)")
    population = torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(0)) * 0.3
    ways = {
        "one process": dict(),
        "2 Ray actors": dict(executor=executor),
        "2 worker processes": dict(num_workers=2),
    }
    for name in ("2 Ray actors", "2 worker processes"):  # the first call makes the envs (and the workers)
        first = timed(functools.partial(evaluate, policy, env, population, seed=0, **ways[name]))
        print(f"  first call, {name}: {first:.2f} s")
    totals = dict.fromkeys(ways, 0.0)
    per_seed: dict[str, list[float]] = {name: [] for name in ways}
    for repeat in range(repeats):
        times = {
            name: timed(functools.partial(evaluate, policy, env, population, seed=repeat, **kw))
            for name, kw in ways.items()
        }
        for name, seconds in times.items():
            totals[name] += seconds
            per_seed[name].append(times["one process"] / seconds)
    env.close()
    base = totals["one process"]
    print(f"  {rows} x Hopper-v5, one episode each: one process {base / repeats:.2f} s")
    for name in ("2 Ray actors", "2 worker processes"):
        print(
            f"    {name}: {totals[name] / repeats:.2f} s = {base / totals[name]:.2f}x one process"
            f" (per seed {min(per_seed[name]):.2f}x to {max(per_seed[name]):.2f}x)"
        )
    print(
        f"    2 Ray actors = {totals['2 worker processes'] / totals['2 Ray actors']:.2f}x 2 worker processes"
    )


def measure_fixed_cost(executor: RayExecutor, calls: int) -> None:
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1)
    policy = Policy("Linear(4, 2)")
    population = torch.zeros(2, policy.parameter_length)  # always the same action: ~10 steps per episode
    evaluate(policy, env, population, seed=0, executor=executor)
    ray_times, local_times = [], []
    for call in range(calls):
        ray_times.append(
            timed(functools.partial(evaluate, policy, env, population, seed=call, executor=executor))
        )
        local_times.append(timed(functools.partial(evaluate, policy, env, population, seed=call)))
    env.close()
    actor = executor.actors[0]
    ray.get(actor.__ray_ready__.remote())
    trips = [timed(lambda: ray.get(actor.__ray_ready__.remote())) for _ in range(calls)]
    on_ray, local = statistics.median(ray_times) * 1e3, statistics.median(local_times) * 1e3
    print(
        f"  fixed cost of a call (median of {calls}): {on_ray:.1f} ms on Ray against {local:.1f} ms in one"
        f" process, {on_ray - local:.1f} ms more; a bare actor round trip {statistics.median(trips) * 1e3:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, 32 rows, for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="seeds evaluated each way")
    args = parser.parse_args()
    repeats, rows = (1, 32) if args.quick else (args.repeats, ROWS)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    print("starting Ray on this machine and 2 actors (ray.init takes about 5 s) ...")
    start = time.perf_counter()
    with RayExecutor(num_actors=2) as executor:
        print(f"  started in {time.perf_counter() - start:.1f} s")
        measure_speed(executor, repeats, rows)
        measure_fixed_cost(executor, 5 if args.quick else 50)
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
