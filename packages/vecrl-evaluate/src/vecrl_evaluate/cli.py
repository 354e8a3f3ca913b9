"""``vecrl evaluate``: score random policies from the command line (added to the ``vecrl`` command).

This module holds its arguments and is all the ``vecrl`` command imports to answer ``--help`` or a usage
mistake; the evaluation (torch, the env) is ``vecrl_evaluate.evaluate_command``'s, imported when it runs."""

from __future__ import annotations

import argparse
from pathlib import Path

import vecrl
from vecrl.command import (
    Command,
    CommandError,
    add_device_argument,
    add_overwrite_argument,
    check_overwrite,
    env_name,
    finite_positive_float,
    positive_int,
    writable_file,
)
from vecrl_evaluate.command_options import add_evaluate_options


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
    add_device_argument(parser)
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
    from vecrl_evaluate.evaluate_command import run

    return run(args)


@vecrl.hookimpl
def vecrl_commands() -> list[Command]:
    return [Command("evaluate", "Evaluate random policies on a vectorized env.", _add_arguments, _run)]
