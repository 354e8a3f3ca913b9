"""Env-steps per second of vecrl's gym backend against a plain Python loop over the same envs.

Measured for CartPole-v1 and Pendulum-v1 at 1, 16 and 256 sub-envs:

  (a) floor      a plain loop over gym.make envs: step, reset on done, write into preallocated arrays
  (b) vecrl      vecrl.make_vector_env("gym::...", num_envs=N), stepped with torch actions
  (c) vecrl-ei   the same with empty_info=True
  (d) gymnasium  gymnasium.vector.SyncVectorEnv + its NumpyToTorch wrapper (gymnasium >= 1.0)
  (e) evotorch   EvoTorch 0.6.1's make_vector_env (only when evotorch is installed)

and the cost of per-sub-env parameters (``vecrl.params``): resets of every sub-env per second, each reset
giving every sub-env new parameters (``reset(options={"params": ...})``: classic-control constants, MuJoCo
model fields), every one or the two a typical randomization varies, against the same resets without them,
and the floor of any such write (a bare loop setting the two on each sub-env before a plain reset), for
CartPole-v1 and Hopper (MuJoCo).

Each figure is printed with its fraction of (a)'s throughput, measured in the same run. Time is the
CPU time of this process (everything here is single-threaded), and modes are interleaved and each is
measured several times (best kept), so that other load on a shared machine disturbs the ratios less.

    python bench/gym_sync.py            # full run (about a minute)
    python bench/gym_sync.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

import vecrl

ENV_IDS = ("CartPole-v1", "Pendulum-v1")
NUM_ENVS = (1, 16, 256)
NUM_ACTION_BATCHES = 32


def random_actions(env_id: str, num_envs: int) -> list[torch.Tensor]:
    """A fixed cycle of random action batches (made before timing, so that no mode pays for them)."""
    generator = torch.Generator().manual_seed(0)
    if env_id == "CartPole-v1":
        return [torch.randint(0, 2, (num_envs,), generator=generator) for _ in range(NUM_ACTION_BATCHES)]
    return [torch.rand(num_envs, 1, generator=generator) * 4 - 2 for _ in range(NUM_ACTION_BATCHES)]


def floor_stepper(env_id: str, num_envs: int) -> Callable[[list[torch.Tensor], int], None]:
    envs = [gym.make(env_id) for _ in range(num_envs)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
    space = envs[0].observation_space
    observations = np.zeros((num_envs, *(space.shape or ())), dtype=space.dtype)
    rewards = np.zeros(num_envs)
    terminated = np.zeros(num_envs, dtype=bool)
    truncated = np.zeros(num_envs, dtype=bool)

    def run(actions: list[torch.Tensor], steps: int) -> None:
        numpy_actions = [a.numpy() for a in actions]
        for t in range(steps):
            batch = numpy_actions[t % NUM_ACTION_BATCHES]
            for i, env in enumerate(envs):
                obs, reward, term, trunc, _ = env.step(batch[i])
                if term or trunc:
                    obs, _ = env.reset()
                observations[i] = obs
                rewards[i] = reward
                terminated[i] = term
                truncated[i] = trunc

    return run


def torch_env_stepper(env: object) -> Callable[[list[torch.Tensor], int], None]:
    env.reset(seed=0)  # type: ignore[attr-defined]
    step = env.step  # type: ignore[attr-defined]

    def run(actions: list[torch.Tensor], steps: int) -> None:
        for t in range(steps):
            step(actions[t % NUM_ACTION_BATCHES])

    return run


def make_steppers(env_id: str, num_envs: int) -> dict[str, Callable[[list[torch.Tensor], int], None] | None]:
    steppers: dict[str, Callable[[list[torch.Tensor], int], None] | None] = {
        "(a) floor": floor_stepper(env_id, num_envs),
        "(b) vecrl": torch_env_stepper(vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs)),
        "(c) vecrl empty_info": torch_env_stepper(
            vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs, empty_info=True)
        ),
        "(d) gymnasium+NumpyToTorch": None,
        "(e) evotorch 0.6.1": None,
    }
    try:  # gymnasium >= 1.0, with its array-api extra (array_api_compat)
        from gymnasium.wrappers.vector import NumpyToTorch
    except ImportError:
        pass
    else:
        gym_env = gym.vector.SyncVectorEnv([lambda: gym.make(env_id)] * num_envs)
        steppers["(d) gymnasium+NumpyToTorch"] = torch_env_stepper(NumpyToTorch(gym_env))
    try:
        from evotorch.neuroevolution.net.vecrl import make_vector_env as evotorch_make_vector_env
    except ImportError:
        pass
    else:
        steppers["(e) evotorch 0.6.1"] = torch_env_stepper(
            evotorch_make_vector_env(f"gym::{env_id}", num_envs=num_envs)
        )
    return steppers


def measure(env_id: str, num_envs: int, env_steps: int, repeats: int) -> dict[str, float | None]:
    """Best env-steps/s of each mode over ``repeats`` interleaved runs of about ``env_steps`` env-steps."""
    steppers = make_steppers(env_id, num_envs)
    actions = random_actions(env_id, num_envs)
    steps = max(env_steps // num_envs, 4)
    best: dict[str, float | None] = {name: None for name in steppers}
    for run in steppers.values():  # warm-up (first-step env checks, lazy imports)
        if run is not None:
            run(actions, 2)
    for _ in range(repeats):
        for name, run in steppers.items():
            if run is None:
                continue
            start = time.process_time()
            run(actions, steps)
            rate = steps * num_envs / (time.process_time() - start)
            best[name] = max(rate, best[name] or 0.0)
    return best


#: What a typical randomization varies, per env (the others stay at their defaults).
SOME_PARAMS = {"CartPole-v1": ("masspole", "length"), "Hopper": ("body_mass", "geom_friction")}


def measure_resets(env_id: str, num_envs: int, resets: int, repeats: int) -> dict[str, float]:
    """Best resets/s over ``repeats`` interleaved runs: plain resets; resets giving every sub-env new values
    of every parameter; of the two a typical randomization varies (each value within 10% of its default,
    drawn before timing); and the floor of the latter: plain resets after a bare loop writing those values
    into the sub-envs (an attribute or a model array each, nothing checked), what any per-sub-env
    parameters cost at least."""
    env = vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs)
    # (an env of its own for the two: one that was given every param puts each back to its default later)
    env_of_two = vecrl.make_vector_env(f"gym::{env_id}", num_envs=num_envs)
    defaults = env.unwrapped.default_params
    some = SOME_PARAMS[env_id.split("-")[0] if env_id.startswith("Hopper") else env_id]
    generator = np.random.default_rng(0)
    sub_envs = [sub.unwrapped for sub in env.unwrapped.envs]

    def drawn(names: tuple[str, ...]) -> list[dict]:
        return [
            {
                name: defaults[name] * generator.uniform(0.9, 1.1, (num_envs, *defaults[name].shape))
                for name in names
            }
            for _ in range(8)
        ]

    def bare_writes(params: dict) -> None:
        for name, values in params.items():
            for sub, value in zip(sub_envs, values, strict=True):
                model = getattr(sub, "model", None)
                if model is None:
                    setattr(sub, name, float(value))
                else:
                    getattr(model, name)[...] = value

    every, two = drawn(tuple(defaults)), drawn(some)
    modes: dict[str, Callable[[int], object]] = {
        "plain": lambda k: env.reset(seed=k),
        "every param": lambda k: env.reset(seed=k, options={"params": every[k % 8]}),
        "two params": lambda k: env_of_two.reset(seed=k, options={"params": two[k % 8]}),
        "floor": lambda k: (bare_writes(two[k % 8]), env.reset(seed=k)),
    }
    best = dict.fromkeys(modes, 0.0)
    for _ in range(repeats):
        for name, reset in modes.items():
            start = time.process_time()
            for k in range(resets):
                reset(k)
            best[name] = max(best[name], resets / (time.process_time() - start))
    env.close()
    env_of_two.close()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    args = parser.parse_args()
    env_steps, repeats = (2_000, 1) if args.quick else (10_000, 7)

    print(f"gymnasium {gym.__version__}, torch {torch.__version__}, numpy {np.__version__}")
    print(f"{'env':<13} {'N':>4}  {'mode':<28} {'env-steps/s':>12}  {'of (a)':>7}")
    for env_id in ENV_IDS:
        for num_envs in NUM_ENVS:
            rates = measure(env_id, num_envs, env_steps, repeats)
            floor = rates["(a) floor"]
            assert floor is not None
            for name, rate in rates.items():
                if rate is None:
                    reason = (
                        "evotorch not installed"
                        if "evotorch" in name
                        else "needs gymnasium>=1 + array_api_compat"
                    )
                    print(f"{env_id:<13} {num_envs:>4}  {name:<28} {'n/a (' + reason + ')':>12}")
                else:
                    print(f"{env_id:<13} {num_envs:>4}  {name:<28} {rate:>12,.0f}  {rate / floor:>7.2f}")
    print(f"\n{'env':<13} {'N':>4}  {'resets/s':>10}  {'every param':>18}  {'two params':>18}  {'floor':>18}")
    hopper = "Hopper-v5" if gym.__version__ >= "1" else "Hopper-v4"
    for env_id in ("CartPole-v1", hopper):
        for num_envs in (16, 256):
            rates = measure_resets(env_id, num_envs, 20 if args.quick else 200, repeats)
            plain = rates.pop("plain")
            print(
                f"{env_id:<13} {num_envs:>4}  {plain:>10,.0f}"
                + "".join(f"  {rate:>10,.0f} ({rate / plain:.2f})" for rate in rates.values())
            )


if __name__ == "__main__":
    main()
