"""``num_workers="auto"``: worker processes only where they win, measured on one sub-env."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium

#: Below this much stepping per batch step (all sub-envs, one process), worker processes lose to the sync
#: env: handing a step to a worker and back costs ~0.1-0.2 ms (bench/gym_workers.py: CartPole-v1 at 16
#: envs, ~0.4 ms of stepping, gains only ~1.1x on 2 cores; at 256 envs, ~6 ms, ~1.8x).
MIN_BATCH_STEP_S = 1e-3
_PROBE_STEPS = 50


def auto_num_workers(make_env: Callable[[], gymnasium.Env], num_envs: int, cores: int | None = None) -> int:
    """How many processes should step ``num_envs`` sub-envs made by ``make_env``: 1 (the sync env) unless the
    machine has several cores and one batch step takes at least ``MIN_BATCH_STEP_S`` in one process (timed
    on one sub-env made for the purpose); else one per core (at most one per sub-env).

    Examples:
        >>> auto_num_workers(lambda: gymnasium.make("CartPole-v1"), 4)  # 4 CartPoles step in ~0.1 ms
        1
    """
    cores = os.cpu_count() or 1 if cores is None else cores
    if cores < 2 or num_envs < 2:
        return 1
    if step_seconds(make_env) * num_envs < MIN_BATCH_STEP_S:
        return 1
    return min(cores, num_envs)


def step_seconds(make_env: Callable[[], gymnasium.Env]) -> float:
    """The mean time of one ``step()`` (resets included when episodes end) of an env ``make_env`` makes,
    with random actions."""
    env = make_env()
    try:
        env.action_space.seed(0)
        env.reset(seed=0)
        actions: list[Any] = [env.action_space.sample() for _ in range(_PROBE_STEPS)]
        start = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        return (time.perf_counter() - start) / _PROBE_STEPS
    finally:
        env.close()
