"""MAP-Elites in plain jax with vecrl's rollout inside its compiled generation: two measures per policy (where
the cart ended, how hard the policy pushed), a grid archive of the best policy per cell, and each generation
(select elites, mutate, evaluate, insert) one ``jax.jit``, generations in a ``lax.scan``. QDax's
``scoring_fn`` has the same shape: ``rollout_function``'s ``f`` returns the fitness and the measures together.

    python3.11 -m pip install -c constraints.txt packages/vecrl-core packages/vecrl-jax packages/vecrl-brax \\
        packages/vecrl-policy packages/vecrl-evaluate
    python3.11 examples/map_elites_jax.py --generations 40

It prints the archive's coverage and QD score (the sum of its elites' returns) every few generations.
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

import vecrl
from vecrl_evaluate import Measure
from vecrl_evaluate.rollout_function import rollout_function
from vecrl_policy import Policy

#: The measures' ranges and the grid's bins along each.
LOW, HIGH, BINS = jnp.array([-1.0, 0.0]), jnp.array([1.0, 3.0]), (8, 8)


class Archive(NamedTuple):
    fitness: Any  # (cells,): the elite's return, -inf where the cell is empty
    genomes: Any  # (cells, parameter_length)


def cells_of(measures: Any) -> Any:
    """The grid cell of each row's measures (clipped into the grid)."""
    bins = jnp.array(BINS)
    index = jnp.clip(((measures - LOW) / (HIGH - LOW) * bins).astype(jnp.int32), 0, bins - 1)
    return index[:, 0] * BINS[1] + index[:, 1]


def inserted(archive: Archive, genomes: Any, fitness: Any, measures: Any) -> Archive:
    """The archive with each candidate that beats its cell's elite in its place (the best of those that share a
    cell)."""
    cells = cells_of(measures)
    size = archive.fitness.shape[0]
    best = jax.ops.segment_max(fitness, cells, num_segments=size)
    wins = (fitness >= best[cells]) & (fitness > archive.fitness[cells])
    target = jnp.where(wins, cells, size)  # (losers go to a cell past the end: dropped)
    return Archive(
        archive.fitness.at[target].set(fitness, mode="drop"),
        archive.genomes.at[target].set(genomes, mode="drop"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="brax::inverted_pendulum")
    parser.add_argument("--batch", type=int, default=64, help="policies evaluated per generation")
    parser.add_argument("--generations", type=int, default=40)
    parser.add_argument("--every", type=int, default=10, help="generations per jitted scan (a line each)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = vecrl.make_vector_env(args.env, num_envs=args.batch)
    policy = Policy.for_env("Linear(obs_length, 8) >> Tanh() >> Linear(8, act_length)", env)
    measures = {
        "x": Measure(
            lambda observation, action, reward: observation[:, 0], "last"
        ),  # the cart, where it ended
        "effort": Measure(lambda observation, action, reward: abs(action).sum(-1), "mean"),  # (torch or jax)
    }
    rollout = rollout_function(env, policy, measures=measures)

    def evaluated(genomes: Any, key: Any) -> tuple[Any, Any]:
        result, _ = rollout(genomes, key)
        return result.mean_return, jnp.stack([result.measures["x"], result.measures["effort"]], axis=1)

    size = BINS[0] * BINS[1]
    key = jax.random.key(args.seed)
    key, init_key, eval_key = jax.random.split(key, 3)
    first = 0.5 * jax.random.normal(init_key, (args.batch, policy.parameter_length))
    empty = Archive(jnp.full(size, -jnp.inf), jnp.zeros((size, policy.parameter_length)))
    archive = jax.jit(lambda g, k: inserted(empty, g, *evaluated(g, k)))(first, eval_key)

    def generation(archive: Archive, key: Any) -> tuple[Archive, None]:
        key_select, key_mutate, key_eval = jax.random.split(key, 3)
        filled = jnp.isfinite(archive.fitness)
        parents = jax.random.choice(key_select, size, (args.batch,), p=filled / filled.sum())
        genomes = archive.genomes[parents] + 0.1 * jax.random.normal(
            key_mutate, (args.batch, policy.parameter_length)
        )
        return inserted(archive, genomes, *evaluated(genomes, key_eval)), None

    @jax.jit
    def generations(archive: Archive, key: Any) -> Archive:
        return jax.lax.scan(generation, archive, jax.random.split(key, args.every))[0]

    done = 0
    while done < args.generations:
        key, scan_key = jax.random.split(key)
        archive = generations(archive, scan_key)
        done += args.every
        filled = jnp.isfinite(archive.fitness)
        qd_score = float(jnp.where(filled, archive.fitness, 0.0).sum())
        print(f"gen {done:4d}  coverage {float(filled.mean()):6.1%}  qd-score {qd_score:10.1f}", flush=True)


if __name__ == "__main__":
    main()
