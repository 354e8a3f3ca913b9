"""The GPU machine's quick checks, printed (bench/gpu_check.sh runs it): what is there; torch-cuda and
jax-cuda arrays handed over through DLPack both ways without a copy (the same device memory), also through
vecrl's conversions; evaluate's fused program split over the devices (``devices=``, here one) against the
call without it; and the fused path against the stepped one on brax's inverted_pendulum (rows' steps equal).

    python bench/gpu_check.py
"""

from __future__ import annotations

import os
import time

import jax
import jax.numpy as jnp
import torch

import vecrl
from vecrl.arrays import convert_from_torch, convert_to_torch
from vecrl_evaluate import evaluate
from vecrl_policy import Policy


def pointer(array: jax.Array) -> int:
    return array.addressable_data(0).unsafe_buffer_pointer()


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"  # (cpu: a dry run of the script on any machine)
    print(
        f"jax {jax.__version__} devices {jax.devices()}; torch {torch.__version__} cuda {torch.cuda.is_available()}"
    )
    print(f"load average {os.getloadavg()}")
    # DLPack both ways: the same memory, no copy
    tensor = torch.arange(1 << 20, dtype=torch.float32, device=device)
    as_jax = convert_from_torch(tensor, "jax")
    back = convert_to_torch(as_jax)
    print(
        f"DLPack torch->jax same memory: {pointer(as_jax) == tensor.data_ptr()}, on {as_jax.devices()};"
        f" jax->torch same memory: {back.data_ptr() == tensor.data_ptr()}, on {back.device}"
    )
    made_by_jax = jnp.ones((1 << 20,), jnp.float32)
    print(
        f"DLPack jax->torch of a jax-made array same memory: {convert_to_torch(made_by_jax).data_ptr() == pointer(made_by_jax)}"
    )

    env = vecrl.make_vector_env("brax::inverted_pendulum", num_envs=256, num_episodes=1, episode_length=200)
    policy = Policy("Linear(4, 64) >> Tanh() >> Linear(64, 1)")
    population = 0.3 * torch.randn(
        1024, policy.parameter_length, generator=torch.Generator().manual_seed(0)
    ).to(device)
    start = time.perf_counter()
    default = evaluate(policy, env, population, seed=0)
    first = time.perf_counter() - start
    start = time.perf_counter()
    again = evaluate(policy, env, population, seed=0)
    second = time.perf_counter() - start
    split = evaluate(policy, env, population, seed=0, devices=jax.devices())
    print(
        f"fused inverted_pendulum P=1024 on {population.device}: first call {first:.1f} s, next {second:.2f} s;"
        f" devices=jax.devices() equal: {torch.equal(split.total_return, default.total_return)},"
        f" repeat equal: {torch.equal(again.total_return, default.total_return)}"
    )
    stepped = evaluate(policy, env, population[:256], seed=0, fused=False)
    gap = (stepped.total_return - default.total_return[:256]).abs().max().item()
    print(
        f"stepped vs fused, 256 rows: steps equal {torch.equal(stepped.steps, default.steps[:256])},"
        f" max |return gap| {gap:.2e}"
    )
    rollout_in_scan(policy, env, population, default)
    env.close()


def rollout_in_scan(policy: Policy, env: object, population: torch.Tensor, default: object) -> None:
    """vecrl_evaluate.rollout_function inside a searcher's compiled loop on the GPU: 8 generations in one
    lax.scan (one compile, no host round trip), its first generation's returns evaluate's for the same seeds,
    and a generation's time against evaluate's."""
    from vecrl_evaluate.randomness import row_seeds
    from vecrl_evaluate.rollout_function import rollout_function

    rollout = rollout_function(env, policy)
    rows = convert_from_torch(population.contiguous(), "jax")
    seeds = jnp.asarray(row_seeds(0, len(population)))
    result, _ = jax.jit(rollout)(rows, seeds)
    same = bool(jnp.array_equal(result.total_return, convert_from_torch(default.total_return.float(), "jax")))

    def generation(carry: jax.Array, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        noisy = rows + 0.01 * jax.random.normal(key, rows.shape)
        outcome, _ = rollout(noisy, key)
        return carry + outcome.mean_return.mean(), outcome.steps.sum()

    scan = jax.jit(lambda keys: jax.lax.scan(generation, jnp.float32(0), keys))
    keys = jax.random.split(jax.random.key(0), 8)
    start = time.perf_counter()
    jax.block_until_ready(scan(keys))
    first = time.perf_counter() - start
    start = time.perf_counter()
    _, steps = jax.block_until_ready(scan(keys))
    per_generation = (time.perf_counter() - start) / 8
    print(
        f"rollout in a scan of 8 generations, P={len(population)}: first call (compile) {first:.1f} s, then"
        f" {1e3 * per_generation:.1f} ms a generation ({int(steps.sum()) / 8 / per_generation:,.0f} env-steps/s);"
        f" equal to evaluate's: {same}"
    )


if __name__ == "__main__":
    main()
