"""``vecrl evaluate``: score random policies from the command line (added to the ``vecrl`` command).

This module holds its arguments and is all the ``vecrl`` command imports to answer ``--help`` or a usage
mistake; the evaluation (torch, the env) is ``vecrl_policy.evaluate_command``'s, imported when it runs."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import vecrl
from vecrl.command import (
    Command,
    CommandError,
    add_overwrite_argument,
    add_randomize_argument,
    check_overwrite,
    env_name,
    finite_float,
    finite_positive_float,
    positive_int,
    seed_int,
    writable_file,
)

THIS_MACHINE = ""  # --ray without an address


def alive_bonus_schedule(text: str) -> list[float]:
    """argparse type: an alive-bonus schedule, ``T,B`` or ``T0,T1,B`` (steps, then the bonus)."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or any(value < 0 for value in values[:-1]):
        raise argparse.ArgumentTypeError(
            f"expected T,B or T0,T1,B (steps >= 0, then the bonus), got {text!r}"
        )
    return [int(value) for value in values[:-1]] + [values[-1]]


SHARED_OPTIONS: tuple[tuple[str, dict[str, Any], Any], ...] = (
    ("--episodes", {"type": positive_int, "help": "episodes per row"}, 1),
    ("--num-envs", {"type": positive_int, "help": "sub-envs (default: the popsize, at most 256)"}, None),
    ("--seed", {"type": seed_int, "help": "seed of the population, the search and the envs"}, 0),
    (
        "--workers",
        {
            "type": positive_int,
            "help": "processes evaluating parts of the population, this one included (gym envs); with --ray,"
            " Ray actors (default: one per CPU of the cluster)",
        },
        None,
    ),
    (
        "--ray",
        {
            "nargs": "?",
            "const": THIS_MACHINE,
            "metavar": "ADDRESS",
            "help": "evaluate on Ray actors (needs vecrl-ray): Ray started on this machine, or the cluster at"
            " ADDRESS",
        },
        None,
    ),
    (
        "--decrease-rewards-by",
        {"type": finite_float, "metavar": "X", "help": "subtract X from each reward"},
        None,
    ),
    (
        "--action-noise",
        {"type": finite_positive_float, "metavar": "STD", "help": "Gaussian action noise"},
        None,
    ),
    (
        "--alive-bonus-schedule",
        {
            "type": alive_bonus_schedule,
            "metavar": "T,B or T0,T1,B",
            "help": "add bonus B to each reward from step T on (ramped in from T0 to T1), as VecGymNE's",
        },
        None,
    ),
    (
        "--common-random-numbers",
        {"action": "store_true", "help": "score every row from the same starts and noise, as evosax does"},
        False,
    ),
)
"""The options ``vecrl evaluate`` and ``vecrl evolve`` share, each ``(flags, argparse keywords, default)``:
what they mean for ``evaluate`` is ``evaluate_options``'s (the names are those of a saved run's settings)."""


def add_evaluate_options(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """Add ``SHARED_OPTIONS`` and ``--randomize`` to ``parser``; with ``defaults=False`` an option not
    given is None (``vecrl evolve``: a resumed run fills in its saved settings), its help naming the default
    all the same."""
    for flag, keywords, default in SHARED_OPTIONS:
        help_text = keywords["help"]
        if default not in (None, False) and "default" not in help_text:
            help_text = f"{help_text} (default: {default})"
        parser.add_argument(flag, **{**keywords, "help": help_text}, default=default if defaults else None)
    add_randomize_argument(parser)


def evaluate_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``vecrl_policy.EvaluateOptions`` that the shared options in ``settings`` (parsed
    arguments as a mapping, or a run's settings) give, but for ``randomize``, ``workers`` and ``ray``, which
    need the env or start processes.

    Examples:
        >>> evaluate_options({"episodes": 2, "seed": 0, "action_noise": 0.1, "decrease_rewards_by": None,
        ...                   "alive_bonus_schedule": None, "common_random_numbers": False})["action_noise_stdev"]
        0.1
    """
    schedule = settings["alive_bonus_schedule"]
    return {
        "num_episodes": settings["episodes"],
        "seed": settings["seed"],
        "decrease_rewards_by": settings["decrease_rewards_by"],
        "action_noise_stdev": settings["action_noise"],
        "alive_bonus_schedule": None if schedule is None else tuple(schedule),
        "common_random_numbers": bool(settings["common_random_numbers"]),
    }


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", type=env_name, help="environment name, e.g. gym::CartPole-v1 or brax::ant")
    parser.add_argument(
        "--policy",
        default="Linear(obs_length, 32) >> Tanh() >> Linear(32, act_length)",
        help="network string; obs_length (or obs) and act_length (or act) are filled in from the env",
    )
    parser.add_argument("--popsize", type=positive_int, default=64, help="random parameter rows")
    parser.add_argument(
        "--sigma", type=finite_positive_float, default=0.5, help="std of the random parameters"
    )
    add_evaluate_options(parser)
    parser.add_argument(
        "--obs-norm",
        type=writable_file,
        default=None,
        metavar="PATH",
        help="normalize observations with the statistics saved at PATH (none yet: a new file), and save them"
        " there updated with what this call saw",
    )
    parser.add_argument(
        "--out",
        type=_results_path,
        default=None,
        metavar="PATH",
        help="write each row's results to PATH (.csv or .json)",
    )
    add_overwrite_argument(parser)


def _results_path(text: str) -> Path:
    path = Path(text)
    if path.suffix.lower() not in (".csv", ".json"):
        raise argparse.ArgumentTypeError(f"{text!r} must end in .csv or .json (the format of the results)")
    return writable_file(text)


def _run(args: argparse.Namespace) -> int:
    if args.out is not None and args.obs_norm is not None and args.out.resolve() == args.obs_norm.resolve():
        raise CommandError(
            f"--out and --obs-norm both name {str(args.out)!r}: the results would be written over the statistics"
            " it reads and saves; give them different paths"
        )
    check_overwrite(args.out, args.overwrite)
    from vecrl_policy.evaluate_command import run

    return run(args)


@vecrl.hookimpl
def vecrl_commands() -> list[Command]:
    return [Command("evaluate", "Evaluate random policies on a vectorized env.", _add_arguments, _run)]
