"""One population evaluation: 256 MLP policies, one episode each, three ways, in one run, on CartPole-v1
(Discrete actions) and Hopper-v5 (MuJoCo: float64 observations, Box actions).

  vecrl      vecrl_evaluate.evaluate(Policy, make_vector_env("gym::ENV", num_envs=256, num_episodes=1))
  (a) loop   what a user writes by hand: gymnasium's SyncVectorEnv and one nn.Module per row
  (b) evotorch  EvoTorch 0.6.1's make_vector_env + Policy, stepped until every row has ended once
  (c) env loop  the floor: a plain loop over gymnasium envs that only steps each env for as many steps as
                vecrl's evaluate took on its row (no policy, no batching): what stepping alone costs;
                printed again with the 256 seeded resets timed too, which vecrl's evaluate times (it
                starts with env.reset(seed=...)) and which the floor does before its clock starts, and
                again with the policy's forward on the clock too, once per round of steps on as many
                rows as are still stepping: the most any evaluate with this network could reach, were
                every other cost of its loop (observations and actions batched, episode ends, rewards
                summed) zero
  (d) least glue  (c) + resets + policy with the least any loop must add to them: the rows taken into
                the policy, each round the stepping rows' observations stacked into one array for it
                (torch.from_numpy), its actions back to each env, each reward added to its row; no
                checks, no seeds, no refills: the most a Python loop with this network reaches, the
                bound of evaluate's stepped loop on this machine

Every way evaluates the same parameter rows, timed from its first step to its last (making and closing
envs and policies left out); episode lengths differ a little between ways (the envs
are seeded differently), so the figure compared is env-steps per second, printed with the ratio
vecrl / other (higher is better for vecrl). Targets: >= 3x (a), >= 1.3x (b), >= 0.7x (c).

Each way makes its envs and policy once and runs every repeat on them, as the generations of a search
do: the first repeat pays what a fresh env pays once (gymnasium's PassiveEnvChecker checks the first
reset and the first step of each env: about 13 ms of 256 CartPole envs), the later ones do not, and
the best repeat is kept.

With --beside-a-cpu-hog every way is measured again while one CPU-bound process runs beside it, and the
fraction of its quiet rate each way keeps is printed: evaluate runs its policy on one torch thread, so
that it keeps at least the fraction the plain loop (c) keeps (torch's intra-op threads stall when a core
is taken).

    python bench/evaluate.py [--quick] [--repeats 3] [--env CartPole-v1 --env Hopper-v5] [--beside-a-cpu-hog]
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import vecrl
from vecrl_evaluate import evaluate
from vecrl_policy import Policy

POPSIZE = 256
HIDDEN = 64
ENV_IDS = ("CartPole-v1", "Hopper-v5")


@dataclass(frozen=True)
class Task:
    env_id: str
    obs_length: int
    act_length: int
    discrete: bool

    @classmethod
    def of(cls, env_id: str) -> Task:
        env = gym.make(env_id)
        discrete = isinstance(env.action_space, gym.spaces.Discrete)
        act_length = gym.spaces.flatdim(env.action_space)
        return cls(env_id, gym.spaces.flatdim(env.observation_space), act_length, discrete)

    def network(self) -> nn.Module:
        return nn.Sequential(
            nn.Linear(self.obs_length, HIDDEN),
            nn.Tanh(),
            nn.Linear(HIDDEN, HIDDEN),
            nn.Tanh(),
            nn.Linear(HIDDEN, self.act_length),
        )


class Clock:
    """Times the rollout only: each way starts it after making its envs and policies, and stops it
    before closing them."""

    started = 0.0

    @classmethod
    def start(cls) -> None:
        cls.started = time.perf_counter()

    @classmethod
    def stop(cls) -> float:
        return time.perf_counter() - cls.started


#: The episode length of every row in vecrl's last evaluation, for the env loop (c) to step as long.
LAST_STEPS: list[int] = []


#: What each way made for the task being measured, by way: reused by every repeat, closed by ``measure``.
MADE: dict[str, Any] = {}


def made(way: str, make: Callable[[], Any]) -> Any:
    """What ``way`` made for this task (``make()`` the first time)."""
    if way not in MADE:
        MADE[way] = make()
    return MADE[way]


def close_made() -> None:
    for thing in MADE.values():
        for part in thing if isinstance(thing, tuple | list) else (thing,):
            if hasattr(part, "close"):
                part.close()
    MADE.clear()


def run_vecrl(task: Task, rows: torch.Tensor, seed: int) -> tuple[float, int]:
    policy, env = made(
        "vecrl",
        lambda: (
            Policy(task.network()),
            vecrl.make_vector_env(f"gym::{task.env_id}", num_envs=len(rows), num_episodes=1, empty_info=True),
        ),
    )
    Clock.start()
    result = evaluate(policy, env, rows, seed=seed)
    elapsed = Clock.stop()
    LAST_STEPS[:] = result.steps.tolist()
    return elapsed, int(result.steps.sum())


def run_env_loop(
    task: Task, rows: torch.Tensor, seed: int, resets_on_clock: bool = False, policy_on_clock: bool = False
) -> tuple[float, int]:
    """gymnasium envs stepped in a plain loop, each for the steps vecrl's evaluate took on its row; with
    ``resets_on_clock``, their seeded resets are timed too (vecrl's evaluate times its own); with
    ``policy_on_clock``, each round of steps also runs the batched policy once on as many rows as are still
    stepping (a zero observation each, the rows of finished episodes dropped): what an evaluate with no
    cost but stepping, resetting and its network would take."""
    envs = made("env loop", lambda: [gym.make(task.env_id) for _ in rows])
    action = envs[0].action_space.sample()
    left = list(LAST_STEPS)
    if policy_on_clock:  # how many rows step in each round, and the policy holding them all, before the clock
        stepping = [sum(steps > round_ for steps in LAST_STEPS) for round_ in range(max(LAST_STEPS))]
        policy = made("policy alone", lambda: Policy(task.network()))
        policy.set_parameters(rows)
        observations = torch.zeros(len(rows), task.obs_length)
        held = len(rows)
    if not resets_on_clock:
        for index, env in enumerate(envs):
            env.reset(seed=seed + index)
    Clock.start()
    if resets_on_clock:
        for index, env in enumerate(envs):
            env.reset(seed=seed + index)
    round_ = 0
    with torch.no_grad():
        while any(left):
            if policy_on_clock:
                if stepping[round_] < held:
                    held = stepping[round_]
                    policy.keep_rows(torch.arange(held))
                policy(observations[:held])
                round_ += 1
            for index, env in enumerate(envs):
                if left[index]:
                    left[index] -= 1
                    _, _, terminated, truncated, _ = env.step(action)
                    if terminated or truncated:
                        env.reset()
    elapsed = Clock.stop()
    return elapsed, sum(LAST_STEPS)


def run_least_glue(task: Task, rows: torch.Tensor, seed: int) -> tuple[float, int]:
    """(d): each row's env stepped for the steps vecrl's evaluate took on it, by a policy reading the real
    observations, with nothing but the glue every loop needs (see the module's docstring)."""
    envs = made("least glue", lambda: [gym.make(task.env_id) for _ in rows])
    policy = made("policy alone", lambda: Policy(task.network()))
    left = list(LAST_STEPS)
    totals = [0.0] * len(rows)
    Clock.start()
    policy.set_parameters(rows)  # (on the clock: every evaluate takes its rows into its policy)
    observations = [env.reset(seed=seed + index)[0] for index, env in enumerate(envs)]
    stepping = list(range(len(rows)))
    with torch.no_grad():
        while stepping:
            output = policy(torch.from_numpy(np.stack(observations).astype(np.float32)))
            # (a list: each env's action read without making a numpy scalar of it)
            actions = output.argmax(dim=-1).tolist() if task.discrete else output.numpy()
            kept, observations = [], []
            for slot, index in enumerate(stepping):
                observation, reward, _, _, _ = envs[index].step(actions[slot])
                totals[index] += reward
                left[index] -= 1
                if left[index]:
                    kept.append(slot)
                    observations.append(observation)
            if len(kept) < len(stepping):
                policy.keep_rows(torch.tensor(kept, dtype=torch.int64))
                stepping = [stepping[slot] for slot in kept]
    elapsed = Clock.stop()
    return elapsed, sum(LAST_STEPS)


def run_user_loop(task: Task, rows: torch.Tensor, seed: int) -> tuple[float, int]:
    """gymnasium's SyncVectorEnv, one nn.Module per row, until each row has finished one episode."""
    template = Policy(task.network())
    modules = [template.to_torch_module(row) for row in rows]
    envs = made("user loop", lambda: gym.vector.SyncVectorEnv([lambda: gym.make(task.env_id)] * len(rows)))
    obs, _ = envs.reset(seed=seed)
    Clock.start()
    done = np.zeros(len(rows), dtype=bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            x = torch.as_tensor(obs, dtype=torch.float32)
            outputs = [module(x[i]) for i, module in enumerate(modules)]
            actions = np.array([int(y.argmax()) if task.discrete else y.numpy() for y in outputs])
            obs, _, terminated, truncated, _ = envs.step(actions)
            env_steps += int((~done).sum())
            done |= terminated | truncated
    elapsed = Clock.stop()
    return elapsed, env_steps


def run_evotorch(task: Task, rows: torch.Tensor, seed: int) -> tuple[float, int]:
    from evotorch.neuroevolution.net.vecrl import Policy as EvoPolicy
    from evotorch.neuroevolution.net.vecrl import make_vector_env as evo_make_vector_env

    env = made(
        "evotorch",
        lambda: evo_make_vector_env(
            f"gym::{task.env_id}", num_envs=len(rows), num_episodes=1, empty_info=True
        ),
    )
    policy = EvoPolicy(task.network())
    policy.set_parameters(rows)
    obs, _ = env.reset(seed=seed)
    Clock.start()
    done = torch.zeros(len(rows), dtype=torch.bool)
    env_steps = 0
    with torch.no_grad():
        while not done.all():
            outputs = policy(obs.float().nan_to_num())
            actions = outputs.argmax(dim=-1) if task.discrete else outputs
            obs, _, terminated, truncated, _ = env.step(actions)
            ended = (terminated | truncated) & ~done
            env_steps += int((~done).sum())
            done |= ended
            if ended.any():
                policy.reset(ended)
    elapsed = Clock.stop()
    return elapsed, env_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, for a smoke run")
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per way (best kept)")
    parser.add_argument("--env", action="append", help=f"gymnasium id (repeatable; default {ENV_IDS})")
    parser.add_argument("--beside-a-cpu-hog", action="store_true", help="measure again beside a busy process")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    torch.set_num_threads(1)  # the per-row loops (a) and (b) too: as evaluate runs its policy
    for env_id in args.env or ENV_IDS:
        quiet = measure(Task.of(env_id), repeats)
        if args.beside_a_cpu_hog:
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                print("  again, beside one CPU-bound process:")
                busy = measure(Task.of(env_id), repeats)
            finally:
                hog.kill()
                hog.wait()
            for name, rate in busy.items():
                print(f"  {name:20s} keeps {rate / quiet[name]:5.2f} of its quiet rate beside the hog")


def measure(task: Task, repeats: int) -> dict[str, float]:
    """Every way on the same rows, interleaved, best rate of ``repeats`` kept; ratios printed, rates
    returned."""
    length = Policy(task.network()).parameter_length
    rows = torch.randn(POPSIZE, length, generator=torch.Generator().manual_seed(0)) * 0.3
    ways = {
        "vecrl": run_vecrl,
        "(c) env loop (floor)": run_env_loop,  # right after vecrl: it steps as long as vecrl's rows took
        "(c) + seeded resets": functools.partial(run_env_loop, resets_on_clock=True),
        "(c) + resets + policy": functools.partial(run_env_loop, resets_on_clock=True, policy_on_clock=True),
        "(d) least glue": run_least_glue,
        "(a) user loop": run_user_loop,
        "(b) evotorch 0.6.1": run_evotorch,
    }
    try:
        import evotorch  # noqa: F401
    except ImportError:
        ways.pop("(b) evotorch 0.6.1")
    best: dict[str, float] = {}
    try:
        for repeat in range(repeats):
            for name, run in ways.items():
                elapsed, env_steps = run(task, rows, seed=repeat)
                best[name] = max(best.get(name, 0.0), env_steps / elapsed)
    finally:
        close_made()

    shape = f"{task.obs_length}-{HIDDEN}-{HIDDEN}-{task.act_length}"
    print(f"load average {os.getloadavg()}")
    print(f"evaluate {POPSIZE} MLP policies ({shape}, tanh) x 1 {task.env_id} episode, best of {repeats}")
    for name, rate in best.items():
        ratio = best["vecrl"] / rate
        print(f"  {name:20s} {rate:12,.0f} env-steps/s   vecrl is {ratio:5.2f}x this")
    if "(b) evotorch 0.6.1" not in best:
        print("  (b) evotorch 0.6.1   n/a (evotorch not installed)")
    return best


if __name__ == "__main__":
    main()
