"""What each piece of a rollout's bookkeeping costs per step, on a gymnax env inside one ``jax.jit`` (CPU).

vecrl's rollout (``vecrl_evaluate.rollout_function``) carries more than the env's step, the policy's forward
and the reward sum: each row's alive mask, its step count, the finite check of what the policy sees, and a
``lax.while_loop`` whose predicate stops the loop once every row is done. This bench starts from the floor (a
``lax.scan`` of step + forward + reward sum for the episode's full length, what EvoJAX's and evosax's rollouts
compile) and adds one piece at a time, each variant a program of its own, then times vecrl's rollout itself
on the same population; every line is microseconds per env step of the whole population and its ratio to the
floor. The variants alternate, a call each, and the median of the rounds is printed with the load average.

    python bench/rollout_bookkeeping.py [--env Pendulum-v1] [--popsize 1024] [--rounds 15]

gymnax pins gymnasium<1.4: run it in the venv of ``bench/evosax_race.py``'s docstring.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

HIDDEN = 16


def _read(result):  # type: ignore[no-untyped-def]
    """Every per-row output of a rollout's result, read (summed), as a caller reads them."""
    return result.total_return.sum() + result.steps.sum() + result.episodes.sum() + result.mean_return.sum()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Pendulum-v1")
    parser.add_argument("--popsize", type=int, default=1024)
    parser.add_argument("--length", type=int, default=200, help="the episode's full length (gymnax's limit)")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if importlib.util.find_spec("vecrl_gymnax") is None:
        print("vecrl-gymnax is not installed here: run this in the venv of bench/evosax_race.py's docstring.")
        return 0
    import jax
    import jax.numpy as jnp

    import vecrl
    from vecrl_evaluate.rollout_function import rollout_function
    from vecrl_policy import Policy, jax_layers

    popsize, length = args.popsize, args.length
    env = vecrl.make_vector_env(f"gymnax::{args.env}", num_envs=popsize)
    network = f"Linear(obs_length, {HIDDEN}) >> Tanh() >> Linear({HIDDEN}, act_length)"
    policy = Policy.for_env(network, env)
    episodes, specs = env.unwrapped.jax_env, policy.layer_specs
    discrete = args.env == "CartPole-v1"

    def variant(mask: bool, count: bool, finite: bool, early_exit: bool):  # type: ignore[no-untyped-def]
        def run(population, key):  # type: ignore[no-untyped-def]
            parameters = jax_layers.unpack(specs, population)
            state = episodes.reset(jax.random.split(key, popsize))

            def step(carry):  # type: ignore[no-untyped-def]
                state, hidden, total, alive, steps, bad, t = carry
                x = episodes.outcome(state).observation.reshape(popsize, -1).astype(jnp.float32)
                if finite:
                    bad = bad | ~jnp.isfinite(x).all(axis=1)
                action, hidden = jax_layers.forward(specs, parameters, x, hidden)
                if discrete:
                    action = jnp.argmax(action, axis=-1).astype(jnp.int32)
                state = episodes.step(state, action)
                outcome = episodes.outcome(state)
                reward = outcome.reward
                if mask:
                    reward = jnp.where(alive, reward, 0.0)
                    alive = alive & ~(outcome.terminated | outcome.truncated)
                if count:
                    steps = steps + alive
                return state, hidden, total + reward, alive, steps, bad, t + 1

            carry = (
                state,
                jax_layers.initial_states(specs, parameters),
                jnp.zeros(popsize),
                jnp.ones(popsize, bool),
                jnp.zeros(popsize, jnp.int32),
                jnp.zeros(popsize, bool),
                jnp.int32(0),
            )
            if early_exit:
                carry = jax.lax.while_loop(lambda c: (c[6] < length) & c[3].any(), step, carry)
            else:
                carry = jax.lax.scan(lambda c, _: (step(c), None), carry, length=length)[0]
            # (every output read, as a caller reads a result: XLA drops what nothing reads)
            return carry[2].sum() + carry[4].sum() + carry[5].sum()

        return jax.jit(run)

    rollout = rollout_function(env, policy)
    sides = {
        "floor: scan of step + forward + reward sum": variant(False, False, False, False),
        "+ the alive mask": variant(True, False, False, False),
        "+ step counts": variant(True, True, False, False),
        "+ the finite check": variant(True, True, True, False),
        "+ while_loop with the early exit": variant(True, True, True, True),
        "vecrl's rollout_function": jax.jit(lambda p, k: _read(rollout(p, k)[0])),
    }
    population = 0.1 * jax.random.normal(jax.random.key(0), (popsize, policy.parameter_length))
    key = jax.random.key(1)
    for run in sides.values():  # the compiles
        jax.block_until_ready(run(population, key))
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, run in sides.items():
            began = time.perf_counter()
            jax.block_until_ready(run(population, key))
            times[name].append(time.perf_counter() - began)
    print(
        f"{args.env}, P={popsize}, {length} steps a call, median of {args.rounds} rounds; load {os.getloadavg()}"
    )
    floor = statistics.median(times[next(iter(sides))])
    for name, spent in times.items():
        median = statistics.median(spent)
        print(f"  {name:<45} {1e6 * median / length:8.1f} us a step  {median / floor:5.2f}x the floor")
    print(f"load average at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
