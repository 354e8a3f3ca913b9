"""The options ``vecrl evaluate`` and ``vecrl evolve`` share: their flags (``SHARED_OPTIONS``), how a parser
gets them, and the ``EvaluateOptions`` keywords they give. Torch-free: the commands answer ``--help`` and usage
mistakes with it before anything heavy is imported."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from vecrl.command import (
    CommandError,
    add_randomize_argument,
    finite_float,
    finite_positive_float,
    first_line,
    positive_int,
    seed_int,
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
    """The keywords of ``vecrl_evaluate.EvaluateOptions`` that the shared options in ``settings`` (parsed
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


def ray_executor(address: str | None, num_actors: int | None) -> Any:
    """The executor registered as ``ray`` (vecrl-ray's ``RayExecutor``) on the cluster at ``address`` (None:
    Ray started here), or a CommandError saying what went wrong."""
    from vecrl_evaluate.executor import executor_named

    try:
        make = executor_named("ray")
    except LookupError as error:
        raise CommandError(f"--ray: {first_line(error)}") from error
    where = f"joining the Ray cluster at {address}" if address else "starting Ray on this machine"
    print(f"{where} and starting its actors (a few seconds) ...", flush=True)
    try:  # (without an address, a Ray of its own, as --help says: not whatever cluster runs here)
        return make(num_actors, address=address or "local")
    except (ValueError, ConnectionError, TimeoutError) as error:
        raise CommandError(f"--ray: {str(error).splitlines()[0]}") from error
