"""pettingzoo:: against the loops a PettingZoo user writes instead, in one run, as ratios, load printed.

MPE2's simple_spread_v3 (3 agents a world, discrete actions), WORLDS worlds in one process, the same random
actions on every side (drawn before the clock starts), max_cycles 25 (worlds end and restart together).
Agent-steps per second (a world's step is one step of each of its agents), median of the repeats:

  vecrl        make_vector_env("pettingzoo::mpe2.simple_spread_v3", num_envs=3 * WORLDS): step() on every row
               (torch actions in, torch tensors out, autoreset in the step)
  vecrl 2w     the same with num_workers=2: two worker processes step half the worlds each, at once (this
               process waits for them)
  plain        the PettingZoo loop over the same worlds: for each world, parallel_env.step(dict of actions),
               reset when its agents are gone (numpy in, dicts out)
  supersuit    SuperSuit's concat_vec_envs_v1(pettingzoo_env_to_vec_env_v1(env), WORLDS), its own form (where
               SuperSuit is installed and runs)

Target: vecrl >= 1.0x plain at 16 worlds in one process; and the workers' gain at 2 (vecrl 2w against vecrl).
Its ceiling here, measured in the same run: each step, the caller hands each worker its share and waits, and
a process that waited a few milliseconds wakes late on this VM, so a step costs at least half the one-process
step plus one pipe round trip made after such a wait (an echo worker, the caller idle half a step between
round trips): ceiling = one-process step / (half of it + that round trip).

    python bench/multi_agent.py [--repeats 3] [--worlds 16]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from mpe2 import simple_spread_v3

import vecrl
from vecrl.processes import WorkerProcess, messages

AGENTS, CYCLES, STEPS = 3, 25, 500


def actions_for(worlds: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 5, (STEPS, worlds * AGENTS))


def agent_steps_per_second(step: Callable[[Any], Any], actions: Any, worlds: int) -> float:
    """Agent-steps/s of ``step`` over the rows of ``actions`` (one a step)."""
    start = time.perf_counter()
    for row in actions:
        step(row)
    return len(actions) * AGENTS * worlds / (time.perf_counter() - start)


def run_vecrl(worlds: int, num_workers: int | None = None) -> float:
    env = vecrl.make_vector_env(
        "pettingzoo::mpe2.simple_spread_v3",
        num_envs=AGENTS * worlds,
        max_cycles=CYCLES,
        num_workers=num_workers,
    )
    env.reset(seed=0)  # (the workers are up once it returns: their start is not timed)
    rate = agent_steps_per_second(env.step, torch.as_tensor(actions_for(worlds)), worlds)
    env.close()
    return rate


def run_plain(worlds: int) -> float:
    envs = [simple_spread_v3.parallel_env(max_cycles=CYCLES) for _ in range(worlds)]
    for index, env in enumerate(envs):
        env.reset(seed=index)
    agents = envs[0].possible_agents

    def step(actions: np.ndarray) -> None:
        for index, env in enumerate(envs):
            row = actions[index * AGENTS : (index + 1) * AGENTS]
            env.step({agent: int(row[i]) for i, agent in enumerate(agents)})
            if not env.agents:
                env.reset()

    rate = agent_steps_per_second(step, actions_for(worlds), worlds)
    for env in envs:
        env.close()
    return rate


def echo(connection: Any) -> None:
    """A worker that sends back what it is sent (the ceiling's round trip)."""
    for message in messages(connection):
        connection.send(message)


def round_trip_after(gap: float, repeats: int = 200) -> float:
    """The median seconds of a pipe round trip to a worker (a step's message and reply) made ``gap`` seconds
    after the last one, the caller busy in between (as it is with the engine's work, or waiting)."""
    worker = WorkerProcess(echo, (), name="echo")
    message = ("step", (np.arange(8), np.zeros(24, np.int64)))
    try:
        worker.connection.send(message)
        worker.connection.recv()
        times = []
        for _ in range(repeats):
            end = time.perf_counter() + gap
            while time.perf_counter() < end:
                pass
            start = time.perf_counter()
            worker.connection.send(message)
            worker.wait()
            worker.connection.recv()
            times.append(time.perf_counter() - start)
    finally:
        worker.end()
    return statistics.median(times)


def run_supersuit(worlds: int) -> float:
    import supersuit

    env = supersuit.concat_vec_envs_v1(
        supersuit.pettingzoo_env_to_vec_env_v1(simple_spread_v3.parallel_env(max_cycles=CYCLES)),
        worlds,
        num_cpus=0,
        base_class="gymnasium",
    )
    env.reset(seed=0)
    rate = agent_steps_per_second(env.step, actions_for(worlds), worlds)
    env.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worlds", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    sides = {
        "vecrl": run_vecrl,
        "vecrl 2w": lambda worlds: run_vecrl(worlds, num_workers=2),
        "plain": run_plain,
        "supersuit": run_supersuit,
    }
    rates: dict[str, list[float]] = {side: [] for side in sides}
    missing: dict[str, str] = {}
    for _ in range(args.repeats):  # interleaved, so that a change of load reaches every side alike
        for side, run in sides.items():
            if side in missing:
                continue
            try:
                rates[side].append(run(args.worlds))
            except Exception as error:  # (SuperSuit not installed, or not running on this gymnasium)
                missing[side] = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    median = {side: statistics.median(values) for side, values in rates.items() if values}
    ratios = [a / b for a, b in zip(rates["vecrl"], rates["plain"], strict=True)]
    print(
        f"  {args.worlds} worlds x {AGENTS} agents, agent-steps/s (median of {args.repeats}):"
        f" vecrl {median['vecrl']:,.0f} = {median['vecrl'] / median['plain']:.2f}x plain ({median['plain']:,.0f};"
        f" per repeat {min(ratios):.2f}-{max(ratios):.2f}x)"
    )
    gains = [a / b for a, b in zip(rates["vecrl 2w"], rates["vecrl"], strict=True)]
    step = AGENTS * args.worlds / median["vecrl"]  # (seconds per step of every world, one process)
    trip = round_trip_after(step / 2)
    print(
        f"  vecrl with 2 worker processes {median['vecrl 2w']:,.0f}: {median['vecrl 2w'] / median['vecrl']:.2f}x one"
        f" process (per repeat {min(gains):.2f}-{max(gains):.2f}x; ceiling {step / (step / 2 + trip):.2f}x: a"
        f" {step * 1e3:.2f} ms step, a round trip after {step / 2 * 1e3:.2f} ms {trip * 1e6:.0f} us),"
        f" {median['vecrl 2w'] / median['plain']:.2f}x plain"
    )
    if "supersuit" in median:
        print(
            f"  supersuit {median['supersuit']:,.0f}: vecrl {median['vecrl'] / median['supersuit']:.2f}x it"
        )
    else:
        print(f"  supersuit did not run: {missing['supersuit']}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
