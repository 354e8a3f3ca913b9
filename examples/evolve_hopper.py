"""Evolve a Hopper-v5 (MuJoCo) policy with EvoTorch's PGPE on vecrl's VecrlNE, and watch the result.

PGPE (ClipUp, centered ranking, symmetric sampling) searches the parameters of a small MLP; each
generation's population is scored in one `vecrl_policy.evaluate` call, in this process, in worker
processes (`--workers 2`) or on Ray actors (`--ray`: Ray started on this machine; `--ray ADDRESS`: the
cluster at that address; needs vecrl-ray). Observations are normalized with statistics shared by the
whole population, and Hopper's alive bonus is removed (it rewards standing still), as EvoTorch's
VecGymNE examples do. `--env envpool::Hopper-v5` runs envpool's C++ envs instead (needs vecrl-envpool).

The run's state (the searcher, with the observation statistics, the generation, the best solution and
the history) is saved to `--state` after every generation: Ctrl-C or a crash loses at most one, and
`--resume` goes on from it. At the end it saves a plot of the population's mean and best return per
generation, and a video of the final center policy (`--video DIR`, MuJoCo rendering through EGL).
From the root of the repository (add packages/vecrl-ray for `--ray`, moviepy for `--video`):

    python3.11 -m pip install -c constraints.txt packages/vecrl-core "packages/vecrl-gym[mujoco]" packages/vecrl-policy packages/vecrl-evotorch matplotlib
    python examples/evolve_hopper.py --generations 2 --popsize 16  # a first look in seconds; 50 generations by default

    python examples/evolve_hopper.py [--generations 50] [--popsize 64] [--workers 2 | --ray [ADDRESS]]
                                     [--state evolve_hopper.state] [--resume] [--video videos]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Any

import checkpoint
from evolve_cartpole import can_plot, save_plot

from vecrl.cli import HelpFormatter
from vecrl.command import positive_int, seed_int

NETWORK = "Linear(obs_length, 32) >> Tanh() >> Linear(32, act_length)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=HelpFormatter)
    parser.add_argument("--env", default="gym::Hopper-v5", help="a Hopper for make_vector_env")
    parser.add_argument("--popsize", type=positive_int, default=64, help="policies per generation")
    parser.add_argument("--generations", type=positive_int, default=50, help="generations in all")
    parser.add_argument("--workers", type=positive_int, default=None, help="evaluation processes (gym)")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help="Ray actors")
    parser.add_argument("--actors", type=positive_int, default=None, help="Ray actors (default: one per CPU)")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the searcher and the envs")
    parser.add_argument(
        "--state", default="evolve_hopper.state", help="the run's state, saved each generation"
    )
    parser.add_argument("--resume", action="store_true", help="go on from --state")
    parser.add_argument("--out", default="evolve_hopper.png", help="where to save the plot (PNG)")
    parser.add_argument("--video", default=None, metavar="DIR", help="record the final center policy here")
    args = parser.parse_args()
    if args.ray is not None and args.workers is not None:
        parser.error("give --workers or --ray, not both")
    plotting = can_plot()

    with contextlib.ExitStack() as stack:
        executor = None if args.ray is None else stack.enter_context(ray_executor(args.ray, args.actors))
        state = checkpoint.load(args.state) if args.resume else new_run(args, executor)
        searcher = state["searcher"]
        if args.resume:
            if executor is not None:  # an executor does not pickle: the resumed problem takes this one
                searcher.problem.with_executor(executor)
            print(f"resumed from {args.state} after generation {state['generation']}", flush=True)
        stack.callback(searcher.problem.close)
        run(searcher, state, args)
    center = searcher.status["center"]
    history = state["history"]
    if plotting:
        save_plot(history["best"], history["mean"], None, args.out, f"PGPE on {args.env} with vecrl", None)
        print(f"plot saved to {args.out}")
    if args.video is not None:
        record_video(searcher.problem, center, args.video)


def new_run(args: argparse.Namespace, executor: Any) -> dict[str, Any]:
    import torch
    from evotorch.algorithms import PGPE

    from vecrl_evotorch import VecrlNE

    torch.manual_seed(args.seed)
    problem = VecrlNE(
        args.env,
        NETWORK,
        observation_normalization=True,
        decrease_rewards_by=1.0,  # Hopper's alive bonus
        num_workers=args.workers,
        executor=executor,
        seed=args.seed,
    )
    searcher = PGPE(
        problem,
        popsize=args.popsize,
        center_learning_rate=0.075,
        stdev_learning_rate=0.1,
        stdev_init=0.1,
        optimizer="clipup",
        optimizer_config={"max_speed": 0.15},
        ranking_method="centered",
    )
    return {"searcher": searcher, "generation": 0, "best": None, "history": {"mean": [], "best": []}}


def run(searcher: Any, state: dict[str, Any], args: argparse.Namespace) -> None:
    """Generations until ``args.generations``, the state saved after each; Ctrl-C ends the script."""
    start = time.perf_counter()
    generation = saved = state["generation"]  # saved: what Ctrl-C keeps (a printed generation is saved)
    try:
        while generation < args.generations:
            generation += 1
            searcher.step()
            status = searcher.status
            state["history"]["mean"].append(float(status["mean_eval"]))
            state["history"]["best"].append(float(status["pop_best_eval"]))
            best = status["best"]
            state["best"] = (best.values.clone(), float(best.evals[0]))
            state["generation"] = generation
            checkpoint.save(state, args.state)
            saved = generation
            print(
                f"gen {generation:3d}  mean {status['mean_eval']:7.1f}  best {status['pop_best_eval']:7.1f}"
                f"  {status['total_interaction_count']:9,d} env-steps  ({time.perf_counter() - start:6.1f} s)",
                flush=True,
            )
    except KeyboardInterrupt:
        checkpoint.interrupted(args.state, saved)


def ray_executor(address: str, num_actors: int | None) -> Any:
    try:
        from vecrl_ray import RayExecutor
    except ImportError:
        sys.exit("--ray needs the vecrl-ray package: pip install -c constraints.txt packages/vecrl-ray")
    start = time.perf_counter()
    executor = RayExecutor(num_actors, address=address or None)
    print(f"{executor!r} started in {time.perf_counter() - start:.1f} s", flush=True)
    return executor


def record_video(problem: Any, center: Any, folder: str) -> None:
    """One episode of ``center`` on Hopper-v5, recorded by gymnasium's RecordVideo (MuJoCo renders through
    EGL unless MUJOCO_GL says otherwise); one line saying what is missing where it cannot render."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import gymnasium
    import torch

    try:
        env = gymnasium.make("Hopper-v5", render_mode="rgb_array")
        env = gymnasium.wrappers.RecordVideo(env, folder, name_prefix="hopper-center", disable_logger=True)
        observation, _ = env.reset(seed=0)
    except Exception as error:  # no GL library, no display, no moviepy: say which, in one line
        print(
            f"no video: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''} (rendering MuJoCo"
            " needs EGL or OSMesa: apt-get install libegl1 (MUJOCO_GL=egl) or libosmesa6 (MUJOCO_GL=osmesa),"
            " and pip install moviepy)",
            file=sys.stderr,
        )
        return
    policy = problem.to_policy(center)
    done = False
    with torch.no_grad():
        while not done:
            action = policy(torch.as_tensor(observation, dtype=torch.float32)).numpy()
            observation, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    env.close()
    print(f"video of the center policy saved in {folder}/")


if __name__ == "__main__":
    main()
