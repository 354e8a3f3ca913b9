"""A generation of PGPE on gymnax envs, vecrl against evosax as evosax's users write it, in one run (CPU).

Every side runs PGPE (ClipUp, learning rate 0.1, max speed 0.2, initial std 0.1) on a population of P MLPs (obs
-> 16 tanh -> act; the argmax of the scores on CartPole-v1, the raw output on Pendulum-v1), one episode per
solution, no observation normalization, on Pendulum-v1 (no early end) at P = 64 and 1,024 and CartPole-v1 at
P = 64, each race with three seeds (the median of the three is the figure). The baseline is evosax's
generation as its RL example writes it:

  evosax jit      ask -> GymnaxProblem.eval -> tell inside one ``jax.jit`` (a ``lax.scan`` of the episode's
                  full length per solution, vmapped over the population), a generation a call
  evosax scan32   the same generation, 32 of them in one ``lax.scan`` per call (the notebook's form), per gen.
  evosax python   ask, eval and tell called one by one from Python (how this bench wrote evosax before)

a floor measured in the same run:

  floor in jit    ask -> vecrl's jax env stepped for the episode's full length with the forward and the reward
                  sum alone (no masks, counters or early exit: the least a rollout on vecrl's engine costs)
                  -> tell, in one ``jax.jit``
  floor python    the same three parts called one by one from Python, each jitted: the least a generation
                  that calls its rollout from Python between a jitted ask and tell costs
  floor torch     floor python with the population handed over as a torch tensor and the fitness taken back
                  as one (float64, as evaluate returns it, then float32 into jax): the least a generation
                  costs that calls a rollout speaking torch from Python (evaluate's side), the host waiting
                  for the population and the fitness where jax alone would chain its three programs

and the three vecrl sides:

  rollout in jit  ask -> ``vecrl_evaluate.rollout_function``'s ``f`` -> tell inside one ``jax.jit``: vecrl's
                  rollout (a ``lax.while_loop`` that stops when every row's episode has ended) in evosax's
                  own compiled generation
  evaluate        evosax's jitted ask and tell, ``vecrl_evaluate.evaluate`` between them from Python
  VecrlNE         EvoTorch's ``PGPE`` over ``vecrl_evotorch.VecrlNE("gymnax::ENV")`` with default settings
                  (every row at once on a jax engine); EvoTorch's own searcher time printed beside it

Each line gives a steady generation's milliseconds (the median over the generations after two that compile)
and its ratio to ``evosax jit`` (lower is better for vecrl). A line per population size gives the time of its
rows' seeds (``vecrl_evaluate.randomness.row_seeds``, every evaluate call's) beside numpy's own
``SeedSequence.generate_state``, whose words they are (why vecrl computes them itself), and a line what a
call from Python costs right after a generation-sized program (what evaluate's host work pays between ask's
program and its own, and its program's dispatch with the poll that hears Ctrl-C: jax's ``io_callback``
against vecrl's FFI poll, ``vecrl_evaluate.host_poll``, why vecrl writes its own). The sides take
turns, a generation each. Targets (issue 76): rollout in jit at most 1.0x on Pendulum at 64 and 1,024 and
0.8x on CartPole at 64; evaluate at most 1.15x at 1,024; VecrlNE at most 1.3x at 1,024.

gymnax pins gymnasium<1.4, so this runs in a venv of its own with vecrl-gymnax, vecrl-evotorch and evosax 0.3
(``nox -s tests`` and ``bench`` leave gymnax out), e.g.:

    python3.11 -m venv /tmp/race && /tmp/race/bin/pip install -c constraints.txt torch==2.13.0 && \\
      /tmp/race/bin/pip install -c constraints.txt packages/vecrl-core packages/vecrl-jax packages/vecrl-brax \\
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
from collections.abc import Callable
from typing import Any

HIDDEN = 16
RACES = (("Pendulum-v1", 64), ("Pendulum-v1", 1024), ("CartPole-v1", 64))
SEEDS = (0, 1, 2)
SCAN = 32
#: gymnax's time limits (the floor steps every row this long)
EPISODE_LENGTHS = {"Pendulum-v1": 200, "CartPole-v1": 500}
LEARNING_RATE, MAX_SPEED, STD_INIT = 0.1, 0.2, 0.1


def evosax_strategy(popsize: int, solution):  # type: ignore[no-untyped-def]
    from evosax.algorithms import PGPE
    from evosax.core.optimizer import clipup

    strategy = PGPE(popsize, solution, optimizer=clipup(learning_rate=LEARNING_RATE, max_velocity=MAX_SPEED))
    return strategy, strategy.default_params.replace(std_init=STD_INIT)


def evosax_sides(env_name: str, seed: int, popsize: int) -> dict[str, Callable[[int], None]]:
    """evosax's generation as its users write it: jitted whole, 32 in a scan, and called piece by piece."""
    import jax
    import jax.numpy as jnp
    from evosax.problems import GymnaxProblem
    from evosax.problems.networks import MLP

    discrete = env_name == "CartPole-v1"
    output = (lambda x, key: jnp.argmax(x, axis=-1)) if discrete else (lambda x, key: x)
    policy = MLP(layer_sizes=(HIDDEN, 2 if discrete else 1), output_fn=output)
    problem = GymnaxProblem(env_name, policy, use_normalize_obs=False)
    key = jax.random.key(seed)
    template = policy.init(key, jnp.zeros(problem.observation_shape), key)
    strategy, params = evosax_strategy(popsize, template)
    start = (strategy.init(key, jax.tree.map(jnp.zeros_like, template), params), problem.init(key))

    def generation(carry, key):  # type: ignore[no-untyped-def]
        state, problem_state = carry
        key_ask, key_eval, key_tell = jax.random.split(key, 3)
        population, state = strategy.ask(key_ask, state, params)
        fitness, problem_state, _ = problem.eval(key_eval, population, problem_state)
        state, _ = strategy.tell(key_tell, population, -fitness, state, params)
        return (state, problem_state), fitness.mean()

    one = jax.jit(generation)
    scanned = jax.jit(lambda carry, keys: jax.lax.scan(generation, carry, keys))
    ask, evaluate, tell = jax.jit(strategy.ask), jax.jit(problem.eval), jax.jit(strategy.tell)
    boxes = {name: [start] for name in ("jit", "scan", "python")}

    def jitted(step: int) -> None:
        boxes["jit"][0], mean = one(boxes["jit"][0], jax.random.fold_in(key, step))
        mean.block_until_ready()

    def scan32(step: int) -> None:
        keys = jax.random.split(jax.random.fold_in(key, step), SCAN)
        boxes["scan"][0], means = scanned(boxes["scan"][0], keys)
        means.block_until_ready()

    def python(step: int) -> None:
        (state, problem_state) = boxes["python"][0]
        key_ask, key_eval, key_tell = jax.random.split(jax.random.fold_in(key, step), 3)
        population, state = ask(key_ask, state, params)
        fitness, problem_state, _ = evaluate(key_eval, population, problem_state)
        state, _ = tell(key_tell, population, -fitness, state, params)
        jax.block_until_ready(state.mean)
        boxes["python"][0] = (state, problem_state)

    return {"evosax jit": jitted, "evosax scan32": scan32, "evosax python": python}


def vecrl_sides(
    env_name: str, seed: int, popsize: int, searcher_ms: list[float]
) -> dict[str, Callable[[int], None]]:
    """vecrl's three sides: its rollout inside evosax's jitted generation, evosax with evaluate between its
    jitted ask and tell, and EvoTorch's PGPE over VecrlNE (its searcher's own time into ``searcher_ms``)."""
    import jax
    import jax.numpy as jnp
    import torch
    from evotorch.algorithms import PGPE

    import vecrl
    from vecrl.arrays import convert_from_torch, convert_to_torch
    from vecrl_evaluate import evaluate
    from vecrl_evaluate.rollout_function import rollout_function
    from vecrl_evotorch import VecrlNE
    from vecrl_policy import Policy

    network = f"Linear(obs_length, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, act_length)"
    env = vecrl.make_vector_env(f"gymnax::{env_name}", num_envs=popsize)
    policy = Policy.for_env(network, env)
    key = jax.random.key(seed)
    strategy, params = evosax_strategy(popsize, jnp.zeros(policy.parameter_length))
    start = strategy.init(key, jnp.zeros(policy.parameter_length), params)
    rollout = rollout_function(env, policy)

    def generation(state, key):  # type: ignore[no-untyped-def]
        key_ask, key_eval, key_tell = jax.random.split(key, 3)
        population, state = strategy.ask(key_ask, state, params)
        result, _ = rollout(population, key_eval)
        state, _ = strategy.tell(key_tell, population, -result.mean_return, state, params)
        return state, result.mean_return.mean()

    one = jax.jit(generation)
    ask, tell = jax.jit(strategy.ask), jax.jit(strategy.tell)
    boxes = {"jit": start, "evaluate": start, "floor": start, "floor python": start, "floor torch": start}
    episodes, specs, length = env.unwrapped.jax_env, policy.layer_specs, EPISODE_LENGTHS[env_name]

    def floor_rollout(population, key):  # type: ignore[no-untyped-def]
        """The env's step, the forward and the reward sum, for the episode's full length: no masks, counters
        or early exit (what no rollout of vecrl's engine can undercut)."""
        from vecrl_policy import jax_layers

        parameters = jax_layers.unpack(specs, population)
        state = episodes.reset(jax.random.split(key, popsize))

        def step(carry, _):  # type: ignore[no-untyped-def]
            state, hidden, total = carry
            x = episodes.outcome(state).observation.reshape(popsize, -1).astype(jnp.float32)
            action, hidden = jax_layers.forward(specs, parameters, x, hidden)
            if env_name == "CartPole-v1":
                action = jnp.argmax(action, axis=-1).astype(jnp.int32)
            state = episodes.step(state, action)
            return (state, hidden, total + episodes.outcome(state).reward), None

        carry = (state, jax_layers.initial_states(specs, parameters), jnp.zeros(popsize))
        return jax.lax.scan(step, carry, length=length)[0][2]

    def floor_generation(state, key):  # type: ignore[no-untyped-def]
        key_ask, key_eval, key_tell = jax.random.split(key, 3)
        population, state = strategy.ask(key_ask, state, params)
        fitness = floor_rollout(population, key_eval)
        state, _ = strategy.tell(key_tell, population, -fitness, state, params)
        return state, fitness.mean()

    floor_one = jax.jit(floor_generation)
    floor_alone = jax.jit(floor_rollout)

    def floor(step: int) -> None:
        boxes["floor"], mean = floor_one(boxes["floor"], jax.random.fold_in(key, step))
        mean.block_until_ready()

    def floor_python(step: int) -> None:
        key_ask, key_eval, key_tell = jax.random.split(jax.random.fold_in(key, step), 3)
        population, state = ask(key_ask, boxes["floor python"], params)
        fitness = floor_alone(population, key_eval)
        boxes["floor python"], _ = tell(key_tell, population, -fitness, state, params)
        jax.block_until_ready(boxes["floor python"].mean)

    def floor_torch(step: int) -> None:
        key_ask, key_eval, key_tell = jax.random.split(jax.random.fold_in(key, step), 3)
        population, state = ask(key_ask, boxes["floor torch"], params)
        rows = convert_to_torch(population)  # (evaluate's input: the host waits for ask here)
        fitness = convert_to_torch(floor_alone(rows.numpy(), key_eval)).double()  # (and for the rollout here)
        fitness = convert_from_torch(fitness.float(), "jax")
        boxes["floor torch"], _ = tell(key_tell, population, -fitness, state, params)
        jax.block_until_ready(boxes["floor torch"].mean)

    def in_jit(step: int) -> None:
        boxes["jit"], mean = one(boxes["jit"], jax.random.fold_in(key, step))
        mean.block_until_ready()

    def with_evaluate(step: int) -> None:
        key_ask, key_tell = jax.random.split(jax.random.fold_in(key, step), 2)
        population, state = ask(key_ask, boxes["evaluate"], params)
        result = evaluate(policy, env, convert_to_torch(population), seed=seed + step)
        fitness = convert_from_torch(result.mean_return.float(), "jax")
        boxes["evaluate"], _ = tell(key_tell, population, -fitness, state, params)
        jax.block_until_ready(boxes["evaluate"].mean)

    problem = VecrlNE(f"gymnax::{env_name}", network, seed=seed)
    searcher = PGPE(
        problem,
        popsize=popsize,
        center_learning_rate=LEARNING_RATE,
        stdev_learning_rate=LEARNING_RATE,
        stdev_init=STD_INIT,
        optimizer="clipup",
        optimizer_config={"max_speed": MAX_SPEED},
        ranking_method="centered",
    )
    evaluating: list[float] = []
    original = problem._evaluate_batch

    def timed(batch):  # type: ignore[no-untyped-def]
        began = time.perf_counter()
        try:
            return original(batch)
        finally:
            evaluating.append(time.perf_counter() - began)

    problem._evaluate_batch = timed  # type: ignore[method-assign]

    def vecrl_ne(step: int) -> None:
        began = time.perf_counter()
        searcher.step()
        searcher_ms.append(1e3 * (time.perf_counter() - began - evaluating[-1]))

    torch.set_num_threads(1)
    return {
        "floor in jit": floor,
        "floor python": floor_python,
        "floor torch": floor_torch,
        "rollout in jit": in_jit,
        "evaluate": with_evaluate,
        "VecrlNE": vecrl_ne,
    }


def race(env_name: str, popsize: int, generations: int, seed: int) -> dict[str, float]:
    """One race, a line: each side's steady generation (ms) and its ratio to evosax's jitted generation."""
    searcher_ms: list[float] = []
    sides = {**evosax_sides(env_name, seed, popsize), **vecrl_sides(env_name, seed, popsize, searcher_ms)}
    for step in range(
        10**6, 10**6 + 2
    ):  # the compiles (jax compiles a generation again for the state it returns)
        for generation in sides.values():
            generation(step)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for step in range(generations):
        for name, generation in sides.items():  # a generation each in turn
            began = time.perf_counter()
            generation(step)
            times[name].append(time.perf_counter() - began)
    steady = {name: 1e3 * statistics.median(t) for name, t in times.items()}
    steady["evosax scan32"] /= SCAN
    baseline = steady["evosax jit"]
    figures = {f"{name} ms": value for name, value in steady.items()}
    figures.update({f"{name} x": value / baseline for name, value in steady.items() if name != "evosax jit"})
    figures["EvoTorch searcher ms"] = statistics.median(searcher_ms[2:])
    print(
        f"{env_name:<12} P={popsize:<5} seed {seed}: "
        + ", ".join(f"{name} {value:.2f}" for name, value in figures.items()),
        flush=True,
    )
    return figures


def seeds_line(sizes: list[int]) -> None:
    """The rows' seeds of one evaluate call, vecrl's against numpy's loop over the same words (microseconds)."""
    import functools
    import timeit

    import numpy as np

    from vecrl_evaluate.randomness import row_seeds

    def per_call(function: Callable[[], object]) -> float:
        return 1e6 * min(timeit.repeat(function, number=200, repeat=5)) / 200

    for rows in sizes:
        ours = per_call(functools.partial(row_seeds, 3, rows))
        numpys = per_call(functools.partial(np.random.SeedSequence(3).generate_state, rows, np.uint32))
        print(
            f"row seeds of {rows} rows: vecrl {ours:.1f} us, numpy's SeedSequence.generate_state {numpys:.1f} us"
            f" ({numpys / ours:.1f}x)"
        )


def host_line() -> None:
    """What a call from Python pays on this machine after a generation-sized program has run (a scan of
    matmuls, about 15 ms), beside the same call made again at once: a small jitted program's dispatch without
    a poll, with a poll that is jax's ``io_callback`` (jax dispatches a program holding one from Python) and
    with evaluate's own (``host_poll``'s FFI call on a CPU; neither poll fires), and one torch call. Medians of
    40, microseconds."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch
    from jax.experimental import io_callback

    from vecrl_evaluate.host_poll import host_poll

    def body(carry, _):  # type: ignore[no-untyped-def]
        return jnp.tanh(carry @ jnp.full((64, 64), 0.01, jnp.float32)), None

    generation = jax.jit(lambda x: jax.lax.scan(body, x, length=400)[0])
    rows, never = np.ones((1024, 64), np.float32), np.int32(0)

    def answer(rows_done, checks_done):  # type: ignore[no-untyped-def]
        return np.bool_(False), np.int32(1)

    def jax_polled(x, n):  # type: ignore[no-untyped-def]
        kinds = (jax.ShapeDtypeStruct((), jnp.bool_), jax.ShapeDtypeStruct((), jnp.int32))

        def poll():  # type: ignore[no-untyped-def]
            return io_callback(answer, kinds, n, n, ordered=False)

        return x + 1, jax.lax.cond(n > 0, poll, lambda: (n > 0, n))

    def vecrl_polled(x, n):  # type: ignore[no-untyped-def]
        return x + 1, jax.lax.cond(n > 0, lambda: host_poll(answer, n, n, "cpu"), lambda: (n > 0, n))

    calls = {
        "jitted call": jax.jit(lambda x, n: (x + 1, (n > 0, n))).lower(rows, never).compile(),
        "with io_callback's poll": jax.jit(jax_polled).lower(rows, never).compile(),
        "with vecrl's poll": jax.jit(vecrl_polled).lower(rows, never).compile(),
    }

    def dispatched(call: Any) -> Callable[[], object]:
        return lambda: jax.block_until_ready(call(rows, never))

    sides = {name: dispatched(call) for name, call in calls.items()}
    tensor = torch.ones(1024, 64)
    sides["torch call"] = lambda: tensor.sum()
    after: dict[str, list[float]] = {name: [] for name in sides}
    again: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(40):
        for name, side in sides.items():
            jax.block_until_ready(generation(rows))
            for times in (after, again):
                began = time.perf_counter()
                side()
                times[name].append(time.perf_counter() - began)
    print(
        "host calls after a generation's program (again at once): "
        + ", ".join(
            f"{name} {1e6 * statistics.median(after[name]):.0f} us ({1e6 * statistics.median(again[name]):.0f})"
            for name in sides
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--generations", type=int, default=12, help="generations per side (the first compiles)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="3 generations of one race, one seed (smoke run)"
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
        return 0
    import jax

    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; load average {os.getloadavg()}")
    seeds_line(sorted({popsize for _, popsize in RACES}))
    host_line()
    for env_name, popsize in RACES[:1] if args.quick else RACES:
        seeds = (args.seed,) if args.quick else tuple(args.seed + seed for seed in SEEDS)
        runs = [race(env_name, popsize, 3 if args.quick else args.generations, seed) for seed in seeds]
        medians = {name: statistics.median(run[name] for run in runs) for name in runs[0]}
        print(
            f"{env_name:<12} P={popsize:<5} median of {len(runs)} seed(s): "
            + ", ".join(f"{name} {value:.2f}" for name, value in medians.items()),
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
