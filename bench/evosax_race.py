"""A small population's generation, vecrl against evosax on gymnax envs, in one run (CPU).

Both sides run PGPE (ClipUp) on a population of P MLPs (obs -> 16 tanh -> act; the argmax of the scores on
CartPole-v1, the raw output on Pendulum-v1), one episode per solution, no observation normalization, one
generation each in turn, on CartPole-v1 at P = 64 and Pendulum-v1 at P = 64 and 1,024, each race run with
three seeds (the median of the three is the figure):

  evosax   evosax 0.3's own loop: ``PGPE.ask``, ``GymnaxProblem.eval`` (a ``lax.scan`` of the episode's
           full length per solution, vmapped over the population, jitted) and ``PGPE.tell``
  vecrl    EvoTorch's ``PGPE`` on ``vecrl_evotorch.VecrlNE("gymnax::ENV")``: every generation one
           ``evaluate`` call, which runs as one compiled program (a ``lax.while_loop`` that stops when
           every row's episode has ended)

It prints, per env, the first generation (compiles included) and the median steady generation of each
side, their ratio (vecrl / evosax: lower is better for vecrl), and the env-steps each simulates per
generation (evosax steps every solution for the episode's full length; vecrl stops a row at its
episode's end), and where a steady vecrl generation's time goes: EvoTorch's searcher (PGPE and its
bookkeeping around the problem), ``VecrlNE``'s own handling of the batch, and the ``evaluate`` call it makes.
Then the evaluation alone, without the searchers, interleaved: evosax's ``GymnaxProblem.eval`` against
``VecrlNE.evaluate`` (EvoTorch's bookkeeping included), the ``vecrl_evaluate.evaluate`` call it makes, and
evaluate's compiled program called directly: ``evaluate``'s own work outside it is their difference.
Targets (issue 69): a steady generation at most 0.8x evosax's on CartPole and 1.0x on Pendulum at P = 64,
``evaluate`` alone at most 1.0x evosax's eval at P = 1,024, evaluate's work outside its program at most
0.3 ms at P = 64, and ``VecrlNE``'s own part at most 10% of evaluate's.

gymnax pins gymnasium<1.4, so this runs in a venv of its own with vecrl-gymnax, vecrl-evotorch and
evosax 0.3 (``nox -s tests`` and ``bench`` leave gymnax out), e.g.:

    python3.11 -m venv /tmp/race && /tmp/race/bin/pip install -c constraints.txt torch==2.13.0 && \\
      /tmp/race/bin/pip install -c constraints.txt packages/vecrl-core packages/vecrl-brax \\
      packages/vecrl-gymnax packages/vecrl-policy packages/vecrl-evaluate packages/vecrl-evotorch evosax==0.3.2
    /tmp/race/bin/python bench/evosax_race.py [--generations 12] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

HIDDEN = 16
RACES = (("CartPole-v1", 64), ("Pendulum-v1", 64), ("Pendulum-v1", 1024))
SEEDS = (0, 1, 2)


def evosax_side(env_name: str, seed: int, popsize: int):  # type: ignore[no-untyped-def]
    """evosax's generation as a function of the generation's key; returns its env-steps."""
    import jax
    import jax.numpy as jnp
    from evosax.algorithms import PGPE
    from evosax.core.optimizer import clipup
    from evosax.problems import GymnaxProblem
    from evosax.problems.networks import MLP

    discrete = env_name == "CartPole-v1"
    output = (lambda x, key: jnp.argmax(x, axis=-1)) if discrete else (lambda x, key: x)
    acts = 2 if discrete else 1
    policy = MLP(layer_sizes=(HIDDEN, acts), output_fn=output)
    problem = GymnaxProblem(env_name, policy, use_normalize_obs=False)
    key = jax.random.key(seed)
    template = policy.init(key, jnp.zeros(problem.observation_shape), key)
    strategy = PGPE(popsize, template, optimizer=clipup(learning_rate=0.1, max_velocity=0.2))
    params = strategy.default_params.replace(std_init=0.1)
    state = strategy.init(key, jax.tree.map(jnp.zeros_like, template), params)
    problem_state = problem.init(key)
    box = {"state": state, "problem_state": problem_state}

    def generation(step: int) -> int:
        k_ask, k_eval, k_tell = jax.random.split(jax.random.fold_in(key, step), 3)
        population, box["state"] = strategy.ask(k_ask, box["state"], params)
        box["population"] = population
        fitness, box["problem_state"], _ = problem.eval(k_eval, population, box["problem_state"])
        box["state"], _ = strategy.tell(k_tell, population, -fitness, box["state"], params)
        jax.block_until_ready(box["state"].mean)
        return popsize * problem.episode_length

    def evaluation(step: int) -> None:
        fitness, _, _ = problem.eval(jax.random.fold_in(key, step), box["population"], box["problem_state"])
        jax.block_until_ready(fitness)

    return generation, evaluation


def vecrl_side(env_name: str, seed: int, popsize: int, parts: dict[str, list[float]]):  # type: ignore[no-untyped-def]
    """vecrl's generation (EvoTorch's PGPE on VecrlNE); returns its env-steps. ``parts`` gets the seconds of
    each generation's ``VecrlNE._evaluate_batch`` and of the ``evaluate`` call within it."""
    import torch
    from evotorch.algorithms import PGPE

    from vecrl_evaluate import evaluate
    from vecrl_evotorch import VecrlNE
    from vecrl_evotorch import problem as vecrl_ne_module

    problem = VecrlNE(
        f"gymnax::{env_name}",
        f"Linear(obs_length, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, act_length)",
        num_envs=popsize,
        seed=seed,
    )
    timed_part(problem, "_evaluate_batch", parts["batch"])
    timed_part(vecrl_ne_module, "evaluated", parts["evaluate"])
    searcher = PGPE(
        problem,
        popsize=popsize,
        center_learning_rate=0.1,
        stdev_learning_rate=0.1,
        stdev_init=0.1,
        optimizer="clipup",
        optimizer_config={"max_speed": 0.2},
        ranking_method="centered",
    )

    def generation(step: int) -> int:
        before = problem.interaction_count
        searcher.step()
        return problem.interaction_count - before

    def whole(step: int) -> None:
        problem.evaluate(searcher.population)

    def evaluation(step: int) -> None:  # the call VecrlNE makes, without EvoTorch's bookkeeping around it
        population = searcher.population.values.as_subclass(torch.Tensor)
        evaluate(problem._policy, problem._env, population, seed=seed + step)

    def population() -> torch.Tensor:  # what the searcher asks of the problem now
        return searcher.population.values.as_subclass(torch.Tensor)

    return generation, whole, evaluation, population


def timed_part(owner: object, name: str, seconds: list[float]) -> None:
    """``owner.name`` (a method or a module's function) timed: each call's seconds appended to ``seconds``."""
    original = getattr(owner, name)

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            seconds.append(time.perf_counter() - start)

    setattr(owner, name, timed)


def program_alone(env_name: str, seed: int, population_now, popsize: int):  # type: ignore[no-untyped-def]
    """evaluate's compiled program for the population vecrl evaluated last, called directly: one segment
    from the start to the end (what the fused loop costs without evaluate's checks and conversions)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from vecrl.arrays import convert_from_torch
    from vecrl_evaluate import fused
    from vecrl_evaluate.randomness import row_seeds

    programs = next(reversed(fused.PROGRAMS.values()))
    population = convert_from_torch(population_now().contiguous(), "jax")  # (evaluate's: the same episodes)
    seeds = jnp.asarray(np.asarray(row_seeds(seed, popsize), dtype=np.uint32))
    rows = jnp.asarray([popsize], jnp.int32)

    def evaluation(step: int) -> None:
        # (population, seeds, mean, std, the rows that run, params, checks): no normalization, every row, no
        # params, checks enough for every step; the program a configuration of short calls runs (``whole``),
        # else its resumable segment from the start
        arguments = (population, seeds, None, None, rows, None, np.int32(2**30))
        if programs.whole is not None:
            jax.block_until_ready(programs.whole(*arguments))
        else:
            jax.block_until_ready(programs.segment(programs.blank, np.bool_(True), *arguments))

    return evaluation


def race(env_name: str, popsize: int, generations: int, seed: int) -> dict[str, float]:
    """One race: its figures printed (a line each), and returned for the median over seeds."""
    parts: dict[str, list[float]] = {"batch": [], "evaluate": []}
    (
        (evosax_generation, evosax_evaluation),
        (vecrl_generation, problem_evaluation, vecrl_evaluation, population_now),
    ) = (
        evosax_side(env_name, seed, popsize),
        vecrl_side(env_name, seed, popsize, parts),
    )
    sides = {"evosax": evosax_generation, "vecrl": vecrl_generation}
    times: dict[str, list[float]] = {name: [] for name in sides}
    steps: dict[str, list[int]] = {name: [] for name in sides}
    for step in range(generations):
        for name, generation in sides.items():  # one generation each in turn
            start = time.perf_counter()
            steps[name].append(generation(step))
            times[name].append(time.perf_counter() - start)
    steady = {name: statistics.median(t[1:]) for name, t in times.items()}
    # a steady vecrl generation: the searcher (all but the batch's evaluation), VecrlNE's own, evaluate's
    batch, inner = statistics.median(parts["batch"][1:]), statistics.median(parts["evaluate"][1:])
    searcher = statistics.median(
        [whole - part for whole, part in zip(times["vecrl"][1:], parts["batch"][1:], strict=True)]
    )
    evaluations = {
        "evosax eval": evosax_evaluation,
        "VecrlNE.evaluate": problem_evaluation,
        "vecrl evaluate": vecrl_evaluation,
        "vecrl program": program_alone(env_name, seed, population_now, popsize),
    }
    alone: dict[str, list[float]] = {name: [] for name in evaluations}
    for step in range(5 * generations):
        for name, evaluation in evaluations.items():
            start = time.perf_counter()
            evaluation(step)
            alone[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t[1:]) for name, t in alone.items()}
    figures = {
        "generation": steady["vecrl"] / steady["evosax"],
        "first": times["vecrl"][0] / times["evosax"][0],
        "evaluate alone": median["vecrl evaluate"] / median["evosax eval"],
        "program alone": median["vecrl program"] / median["evosax eval"],
        "outside ms": 1e3 * (median["vecrl evaluate"] - median["vecrl program"]),
        "searcher ms": 1e3 * searcher,
        "VecrlNE own ms": 1e3 * (batch - inner),
        "evaluate ms": 1e3 * inner,
    }
    print(
        f"{env_name:<12} P={popsize:<5} seed {seed}: steady generation evosax {1e3 * steady['evosax']:.2f} ms,"
        f" vecrl {1e3 * steady['vecrl']:.2f} ms ({figures['generation']:.2f}x; first {figures['first']:.2f}x;"
        f" env-steps {statistics.mean(steps['evosax'][1:]):.0f} / {statistics.mean(steps['vecrl'][1:]):.0f});"
        f" vecrl's generation: searcher {figures['searcher ms']:.2f} ms, VecrlNE's own"
        f" {figures['VecrlNE own ms']:.2f} ms, evaluate {figures['evaluate ms']:.2f} ms;"
        f" alone: evosax eval {1e3 * median['evosax eval']:.2f} ms, VecrlNE.evaluate"
        f" {1e3 * median['VecrlNE.evaluate']:.2f} ms, evaluate {1e3 * median['vecrl evaluate']:.2f} ms"
        f" ({figures['evaluate alone']:.2f}x), its program {1e3 * median['vecrl program']:.2f} ms"
        f" ({figures['program alone']:.2f}x), outside it {figures['outside ms']:.2f} ms",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--generations", type=int, default=12, help="generations per side (the first compiles)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 generations of CartPole-v1, one seed (smoke run)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    missing = [
        name
        for name in ("evosax", "vecrl_gymnax", "vecrl_evotorch")
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        print(
            f"{', '.join(missing)} not installed here: run this in a venv of its own (see this script's docstring)."
        )
        return
    import jax
    import torch

    torch.set_num_threads(1)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; load average {os.getloadavg()[0]:.2f}")
    for env_name, popsize in RACES[:1] if args.quick else RACES:
        seeds = (args.seed,) if args.quick else tuple(args.seed + seed for seed in SEEDS)
        runs = [race(env_name, popsize, 3 if args.quick else args.generations, seed) for seed in seeds]
        medians = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
        print(
            f"{env_name:<12} P={popsize:<5} median of {len(runs)} seed(s): "
            + ", ".join(
                f"{name} {value:.2f}{'' if name.endswith('ms') else 'x'}" for name, value in medians.items()
            )
            + f"; VecrlNE's own / evaluate {medians['VecrlNE own ms'] / medians['evaluate ms']:.2f}",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
