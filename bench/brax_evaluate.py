"""evaluate on jax envs (brax, MuJoCo Playground): the fused path (one compiled program) and the stepped
path against an EvoJAX-style fused rollout written here, the floor, measured in one run (CPU).

The floor is what EvoJAX, evosax and brax's evaluator compile: a ``lax.while_loop`` over the population's
MLPs (64-64, tanh after every layer: actions in [-1, 1]; weights cut from the same flat rows), ``vmap``
of the brax env's reset and step, returns summed where a row is alive, and an early exit once every row is done. Every side starts row ``r`` from
``PRNGKey(row_seeds(seed, P)[r])``, the initial state vecrl gives row ``r``, so all three score the same
episodes: the largest gap in returns (over rows finite on both sides) and the rows whose returns are
apart (by more than 1e-3 relative, or NaN on one side only) are printed. On chaotic physics (ant) the
stepped path's rows part from the floor's: its actions come from torch's matmuls, which round otherwise
than XLA's, and contacts amplify a 1e-7 difference into another trajectory within a few dozen steps. Each side's first call (trace, compile and one
evaluation) is timed, then rounds of the three alternate and the median round of each is kept; rates
are live env-steps per second (the steps rows took before their episode ended).

    python bench/brax_evaluate.py                 # brax's inverted_pendulum and ant, playground's CartpoleBalance
    python bench/brax_evaluate.py --quick         # a short smoke run
    python bench/brax_evaluate.py --only brax::ant --popsize 4096 --rounds 3
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import brax.envs
import jax
import jax.numpy as jnp
import numpy as np
import torch

import vecrl
from vecrl.arrays import convert_from_torch
from vecrl_evaluate import evaluate
from vecrl_evaluate.randomness import row_seeds
from vecrl_policy import Policy

#: Env keywords per case: ant runs its full 1,000 steps (no early termination), as the issue measures it.
CASES = {
    "brax::inverted_pendulum": {},
    "brax::ant": {"terminate_when_unhealthy": False},
    # MuJoCo Playground's MJX: impl="jax", its default on a CPU, named for a GPU too (where "warp" is the
    # default, which needs NVIDIA's warp-lang, a wheel too large for bench/gpu_check.sh to carry)
    "playground::CartpoleBalance": {"impl": "jax"},
}
HIDDEN = 64


def single_env(name: str, episode_length: int, kwargs: dict) -> Any:
    """One env of the case ``name`` (``prefix::env``) with brax's EpisodeWrapper (its time limit), no autoreset."""
    prefix, env_name = name.split("::")
    if prefix == "brax":
        return brax.envs.create(env_name, episode_length=episode_length, auto_reset=False, **kwargs)
    from vecrl_playground.batch import make_playground_env

    return make_playground_env(env_name, {"episode_length": episode_length, **kwargs}).env


def floor_rollout(name: str, episode_length: int, kwargs: dict, sizes: list[int]) -> Callable:
    """The EvoJAX-style fused rollout: ``(population, seeds) -> (total_return, steps)``, jitted."""
    env = single_env(name, episode_length, kwargs)
    slices = []  # (weight, bias) slices of a flat row, in torch's named_parameters order
    offset = 0
    for fan_in, fan_out in itertools.pairwise(sizes):
        slices.append((offset, fan_out, fan_in))
        offset += fan_out * fan_in + fan_out

    def rollout(population: jax.Array, seeds: jax.Array) -> tuple[jax.Array, jax.Array]:
        rows = population.shape[0]
        layers = [
            (
                population[:, start : start + fan_out * fan_in].reshape(rows, fan_out, fan_in),
                population[:, start + fan_out * fan_in : start + fan_out * fan_in + fan_out],
            )
            for start, fan_out, fan_in in slices
        ]
        state = jax.vmap(env.reset)(jax.vmap(jax.random.PRNGKey)(seeds))

        def body(carry):
            state, total, steps, alive = carry
            x = state.obs
            for weight, bias in layers:
                x = jnp.tanh(jnp.einsum("ri,roi->ro", x, weight) + bias)
            state = jax.vmap(env.step)(state, x)
            total = total + jnp.where(alive, state.reward, 0.0)
            steps = steps + alive
            return state, total, steps, alive & ~state.done.astype(bool)

        carry = (state, jnp.zeros(rows), jnp.zeros(rows, jnp.int32), jnp.ones(rows, bool))
        _, total, steps, _ = jax.lax.while_loop(lambda c: c[3].any(), body, carry)
        return total, steps

    return jax.jit(rollout)


def timed(run: Callable[[], tuple[np.ndarray, int]]) -> tuple[float, np.ndarray, int]:
    start = time.perf_counter()
    returns, steps = run()
    return time.perf_counter() - start, returns, steps


def bench(
    name: str,
    popsize: int,
    episode_length: int,
    rounds: int,
    seed: int,
    stepped: bool = True,
    other_shape: bool = False,
) -> None:
    kwargs = CASES[name]
    env = vecrl.make_vector_env(
        name, num_envs=popsize, num_episodes=1, episode_length=episode_length, **kwargs
    )
    obs, act = env.single_observation_space.shape[0], env.single_action_space.shape[0]
    sizes = [obs, HIDDEN, HIDDEN, act]
    policy = Policy(
        f"Linear({obs}, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, {act}) >> Tanh()"
    )
    parameters = 0.3 * torch.randn(
        popsize, policy.parameter_length, generator=torch.Generator().manual_seed(seed)
    )
    if jax.default_backend() == "gpu":  # the fused path takes the population on jax's device
        parameters = parameters.cuda()
    floor = floor_rollout(name, episode_length, kwargs, sizes)
    seeds = jnp.asarray(np.asarray(row_seeds(seed, popsize), dtype=np.uint32))
    population = convert_from_torch(parameters, "jax")

    def run_floor() -> tuple[np.ndarray, int]:
        total, steps = floor(population, seeds)
        return np.asarray(total), int(np.asarray(steps).sum())

    def run_vecrl(fused: bool, **shape: Any) -> Callable[[], tuple[np.ndarray, int]]:
        def run() -> tuple[np.ndarray, int]:
            result = evaluate(policy, env, parameters, seed=seed, fused=fused, **shape)
            assert result.path == ("fused" if fused else "stepped")
            return result.total_return.cpu().numpy(), int(result.steps.sum())

        return run

    sides = {
        "floor (EvoJAX-style)": run_floor,
        "vecrl fused": run_vecrl(True),
        "vecrl stepped": run_vecrl(False),
    }
    if other_shape:  # the loop in the other platform's shape (vecrl_evaluate.fused._loop_shape)
        gpu = jax.default_backend() == "gpu"
        label = "fused K=1, cond" if gpu else "fused K=16, select"
        sides[label] = run_vecrl(True, steps_per_check=1 if gpu else 16, select_restarts=not gpu)
    if not stepped:
        del sides["vecrl stepped"]
    first = {label: timed(run) for label, run in sides.items()}
    reference = first["floor (EvoJAX-style)"][1]
    times: dict[str, list[float]] = {label: [] for label in sides}
    for _ in range(rounds):
        for label, run in sides.items():
            times[label].append(timed(run)[0])
    floor_steps = first["floor (EvoJAX-style)"][2]
    floor_rate = floor_steps / statistics.median(times["floor (EvoJAX-style)"])
    floor_first = first["floor (EvoJAX-style)"][0]
    print(
        f"\n{name}, P={popsize}, episode_length={episode_length} {kwargs or ''}: {floor_steps:,} live env-steps"
    )
    print(
        f"  {'side':22} {'first call':>11} {'x floor':>8} {'env-steps/s':>12} {'x floor':>8} {'max |return gap|':>17} {'rows apart':>10}"
    )
    for label in sides:
        first_s, returns, steps = first[label]
        assert steps == floor_steps, (label, steps, floor_steps)
        rate = steps / statistics.median(times[label])
        spread = f"{min(times[label]):.2f}-{max(times[label]):.2f} s"
        gap = np.abs(returns - reference)
        apart = int(
            (np.isnan(returns) != np.isnan(reference)).sum() + (gap > 1e-3 * (1 + np.abs(reference))).sum()
        )
        largest = float(np.nanmax(gap)) if not np.isnan(gap).all() else 0.0
        print(
            f"  {label:22} {first_s:>9.1f} s {first_s / floor_first:>7.2f}x {rate:>12,.0f} {rate / floor_rate:>7.2f}x"
            f" {largest:>17.2e} {apart:>10}   rounds {spread}"
        )
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES), action="append")
    parser.add_argument("--popsize", type=int, default=256)
    parser.add_argument("--episode-length", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="inverted_pendulum, P=32, 100 steps, 2 rounds")
    parser.add_argument("--skip-stepped", action="store_true", help="the floor and the fused path only")
    parser.add_argument(
        "--other-shape",
        action="store_true",
        help="also the fused loop in the other platform's shape (on a GPU 1 step a check and cond, on a CPU 16"
        " and selection)",
    )
    args = parser.parse_args()
    if args.quick:
        args.only, args.popsize, args.episode_length, args.rounds = ["brax::inverted_pendulum"], 32, 100, 2
    print(
        f"jax {jax.__version__} on {jax.default_backend()}, torch {torch.__version__}; load average {os.getloadavg()}"
    )
    for name in args.only or list(CASES):
        bench(
            name,
            args.popsize,
            args.episode_length,
            args.rounds,
            args.seed,
            not args.skip_stepped,
            args.other_shape,
        )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
