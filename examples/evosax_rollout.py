"""evosax's PGPE with vecrl's rollout inside its compiled generation: the loop of evosax's own RL example
(ask, evaluate, tell in one ``jax.jit``, generations in a ``lax.scan``) with ``vecrl_evaluate.rollout_function``
in place of ``problem.eval``, on a brax env (or any jax engine: ``gymnax::Pendulum-v1``, a Playground env).

    python3.11 -m pip install -c constraints.txt packages/vecrl-core packages/vecrl-jax packages/vecrl-brax \\
        packages/vecrl-policy packages/vecrl-evaluate evosax==0.3.2
    python3.11 examples/evosax_rollout.py --generations 30

It prints the population's mean return every few generations (one compile first, then every generation
without leaving jax).
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
from evosax.algorithms import PGPE
from evosax.core.optimizer import clipup

import vecrl
from vecrl_evaluate.rollout_function import rollout_function
from vecrl_policy import Policy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="brax::inverted_pendulum")
    parser.add_argument("--popsize", type=int, default=64)
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--every", type=int, default=10, help="generations per jitted scan (a line each)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    env = vecrl.make_vector_env(args.env, num_envs=args.popsize)  # every row at once
    policy = Policy.for_env("Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)", env)
    rollout = rollout_function(env, policy)  # f(parameters, key, state) -> (result, state)

    strategy = PGPE(
        args.popsize, jnp.zeros(policy.parameter_length), optimizer=clipup(0.15, max_velocity=0.3)
    )
    params = strategy.default_params.replace(std_init=0.1)
    key = jax.random.key(args.seed)
    state = strategy.init(key, jnp.zeros(policy.parameter_length), params)

    def generation(state, key):  # evosax's loop: ask, evaluate, tell
        key_ask, key_eval, key_tell = jax.random.split(key, 3)
        population, state = strategy.ask(key_ask, state, params)
        result, _ = rollout(population, key_eval)
        state, _ = strategy.tell(
            key_tell, population, -result.mean_return, state, params
        )  # (evosax minimizes)
        return state, result.mean_return.mean()

    @jax.jit
    def generations(state, key):
        return jax.lax.scan(generation, state, jax.random.split(key, args.every))

    done = 0
    while done < args.generations:
        began = time.perf_counter()
        key, scan_key = jax.random.split(key)
        state, means = generations(state, scan_key)
        means.block_until_ready()
        done += args.every
        print(
            f"gen {done:4d}  mean {float(means[-1]):8.1f}  ({time.perf_counter() - began:.2f} s)", flush=True
        )


if __name__ == "__main__":
    main()
