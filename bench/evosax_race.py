"""A small population's generation, vecrl against evosax on gymnax envs, in one run (CPU).

Both sides run PGPE (ClipUp) on a population of P = 64 MLPs (obs -> 16 tanh -> act; the argmax of the
scores on CartPole-v1, the raw output on Pendulum-v1), one episode per solution, no observation
normalization, one generation each in turn:

  evosax   evosax 0.3's own loop: ``PGPE.ask``, ``GymnaxProblem.eval`` (a ``lax.scan`` of the episode's
           full length per solution, vmapped over the population, jitted) and ``PGPE.tell``
  vecrl    EvoTorch's ``PGPE`` on ``vecrl_evotorch.VecrlNE("gymnax::ENV")``: every generation one
           ``evaluate`` call, which runs as one compiled program (a ``lax.while_loop`` that stops when
           every row's episode has ended)

It prints, per env, the first generation (compiles included) and the median steady generation of each
side, their ratio (vecrl / evosax: lower is better for vecrl), and the env-steps each simulates per
generation (evosax steps every solution for the episode's full length; vecrl stops a row at its
episode's end). Then the evaluation alone, without the searchers, interleaved: evosax's
``GymnaxProblem.eval`` against ``VecrlNE.evaluate`` (EvoTorch's bookkeeping included), the
``vecrl_policy.evaluate`` call it makes, and evaluate's compiled program called directly (what the
fused loop costs without evaluate's checks and conversions). Targets (issue 54): a steady CartPole generation at most 0.8x evosax's; on Pendulum,
where every episode runs its full 200 steps, no more than evosax's.

gymnax pins gymnasium<1.4, so this runs in a venv of its own with vecrl-gymnax, vecrl-evotorch and
evosax 0.3 (``nox -s tests`` and ``bench`` leave gymnax out), e.g.:

    python3.11 -m venv /tmp/race && /tmp/race/bin/pip install -c constraints.txt torch==2.13.0 && \\
      /tmp/race/bin/pip install -c constraints.txt packages/vecrl-core packages/vecrl-brax \\
      packages/vecrl-gymnax packages/vecrl-policy packages/vecrl-evotorch evosax==0.3.2
    /tmp/race/bin/python bench/evosax_race.py [--generations 12] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

POPSIZE = 64
HIDDEN = 16
ENVS = ("CartPole-v1", "Pendulum-v1")


def evosax_side(env_name: str, seed: int):  # type: ignore[no-untyped-def]
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
    strategy = PGPE(POPSIZE, template, optimizer=clipup(learning_rate=0.1, max_velocity=0.2))
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
        return POPSIZE * problem.episode_length

    def evaluation(step: int) -> None:
        fitness, _, _ = problem.eval(jax.random.fold_in(key, step), box["population"], box["problem_state"])
        jax.block_until_ready(fitness)

    return generation, evaluation


def vecrl_side(env_name: str, seed: int):  # type: ignore[no-untyped-def]
    """vecrl's generation (EvoTorch's PGPE on VecrlNE); returns its env-steps."""
    import torch
    from evotorch.algorithms import PGPE

    from vecrl_evotorch import VecrlNE
    from vecrl_policy import evaluate

    problem = VecrlNE(
        f"gymnax::{env_name}",
        f"Linear(obs_length, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, act_length)",
        num_envs=POPSIZE,
        seed=seed,
    )
    searcher = PGPE(
        problem,
        popsize=POPSIZE,
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

    return generation, whole, evaluation, problem._policy.parameter_length


def program_alone(env_name: str, seed: int, parameter_length: int):  # type: ignore[no-untyped-def]
    """evaluate's compiled program for the population vecrl evaluated last, called directly: one segment
    from the start to the end (what the fused loop costs without evaluate's checks and conversions)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch

    from vecrl.arrays import convert_from_torch
    from vecrl_policy import fused
    from vecrl_policy.randomness import row_seeds

    programs = next(reversed(fused.PROGRAMS.values()))
    population = convert_from_torch(0.1 * torch.randn(POPSIZE, parameter_length), "jax")
    seeds = jnp.asarray(np.asarray(row_seeds(seed, POPSIZE), dtype=np.uint32))
    rows = jnp.asarray([POPSIZE], jnp.int32)

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


def race(env_name: str, generations: int, seed: int) -> None:
    (
        (evosax_generation, evosax_evaluation),
        (vecrl_generation, problem_evaluation, vecrl_evaluation, length),
    ) = (
        evosax_side(env_name, seed),
        vecrl_side(env_name, seed),
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
    spread = {name: (min(t[1:]), max(t[1:])) for name, t in times.items()}
    for name in sides:
        low, high = spread[name]
        print(
            f"{env_name:<13}{name:<8}first {times[name][0]:7.2f} s   steady {1e3 * steady[name]:8.2f} ms"
            f" ({1e3 * low:.2f}-{1e3 * high:.2f})   env-steps/generation {statistics.mean(steps[name][1:]):9.0f}",
            flush=True,
        )
    print(
        f"{env_name:<13}vecrl / evosax: steady generation {steady['vecrl'] / steady['evosax']:.2f}x,"
        f" first generation {times['vecrl'][0] / times['evosax'][0]:.2f}x,"
        f" per env-step {steady['vecrl'] / statistics.mean(steps['vecrl'][1:]) / (steady['evosax'] / statistics.mean(steps['evosax'][1:])):.2f}x",
        flush=True,
    )
    evaluations = {
        "evosax eval": evosax_evaluation,
        "VecrlNE.evaluate": problem_evaluation,
        "vecrl evaluate": vecrl_evaluation,
        "vecrl program": program_alone(env_name, seed, length),
    }
    alone: dict[str, list[float]] = {name: [] for name in evaluations}
    for step in range(5 * generations):
        for name, evaluation in evaluations.items():
            start = time.perf_counter()
            evaluation(step)
            alone[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t[1:]) for name, t in alone.items()}
    print(
        f"{env_name:<13}evaluation alone (median of {5 * generations - 1}): evosax eval"
        f" {1e3 * median['evosax eval']:.2f} ms, VecrlNE.evaluate {1e3 * median['VecrlNE.evaluate']:.2f} ms"
        f" ({median['VecrlNE.evaluate'] / median['evosax eval']:.2f}x),"
        f" vecrl_policy.evaluate {1e3 * median['vecrl evaluate']:.2f} ms"
        f" ({median['vecrl evaluate'] / median['evosax eval']:.2f}x), its compiled program"
        f" {1e3 * median['vecrl program']:.2f} ms ({median['vecrl program'] / median['evosax eval']:.2f}x)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--generations", type=int, default=12, help="generations per side (the first compiles)"
    )
    parser.add_argument("--quick", action="store_true", help="3 generations of CartPole-v1 (smoke run)")
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
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; P={POPSIZE}; load average {os.getloadavg()[0]:.2f}"
    )
    for env_name in ENVS[:1] if args.quick else ENVS:
        race(env_name, 3 if args.quick else args.generations, args.seed)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    sys.exit(main())
