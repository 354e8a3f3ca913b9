"""``vecrl evolve`` and ``vecrl record``: a whole run from the command line, and a video of its result.

This module holds their arguments and is all the ``vecrl`` command imports to answer ``--help`` or a usage
mistake; the work (torch, EvoTorch, the env) is ``vecrl_evotorch.evolve``'s and ``vecrl_evotorch.record``'s,
imported when a command runs."""

from __future__ import annotations

import argparse
import math
import re
from typing import Any

import vecrl
from vecrl.command import (
    Command,
    CommandError,
    add_device_argument,
    add_overwrite_argument,
    check_overwrite,
    env_name,
    finite_float,
    finite_positive_float,
    positive_int,
    seed_int,
    writable_file,
)
from vecrl_evaluate.command_options import add_evaluate_options
from vecrl_evaluate.reductions import REDUCTIONS
from vecrl_evotorch.evotorch_import import import_evotorch_without_jax
from vecrl_evotorch.run_log import LOGGERS, missing_logger_modules
from vecrl_evotorch.run_settings import OPPONENT_KINDS, SEARCHER_KNOBS

ALGORITHMS = ("pgpe", "snes", "cem", "cmaes", "map-elites")
_MEASURE_NAME = re.compile(r"(obs\[\d+\]|[A-Za-z_][\w.]*)(@\w+)?")


def measure_spec(text: str) -> list[Any]:
    """A ``--measure NAME:LOW:HIGH:BINS`` as ``[name, low, high, bins]``; an argparse error saying what is
    expected otherwise.

    Examples:
        >>> measure_spec("x_velocity:-1:3:8")
        ['x_velocity', -1.0, 3.0, 8]
    """
    usage = (
        f"expected NAME:LOW:HIGH:BINS, NAME an info key (x_velocity) or obs[I] with @{'/@'.join(REDUCTIONS)} after"
        f" it where an episode's values are not to be averaged, LOW < HIGH numbers and BINS >= 2; got {text!r}"
    )
    parts = text.rsplit(":", 3)
    if len(parts) != 4 or not _MEASURE_NAME.fullmatch(parts[0]):
        raise argparse.ArgumentTypeError(usage)
    name, low, high, bins = parts
    reduction = name.partition("@")[2]
    if reduction and reduction not in REDUCTIONS:
        raise argparse.ArgumentTypeError(f"@{reduction}: {usage}")
    try:
        bounds, count = (float(low), float(high)), int(bins)
    except ValueError:
        raise argparse.ArgumentTypeError(usage) from None
    if not all(map(math.isfinite, bounds)) or bounds[0] >= bounds[1] or count < 2:
        raise argparse.ArgumentTypeError(usage)
    return [name, *bounds, count]


def _evolve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "env", nargs="?", type=env_name, help="environment name, e.g. gym::CartPole-v1 or brax::ant"
    )
    parser.add_argument(
        "--out", metavar="DIR", help="the run's folder: state, results.csv, plot.png, champion"
    )
    parser.add_argument("--resume", metavar="DIR", help="go on with the run saved in DIR")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="settings from a TOML or JSON file (keys as in a run's settings.json); flags given override it",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace the run already in --out")
    parser.add_argument("--algorithm", choices=ALGORITHMS, help="EvoTorch's searcher (default: pgpe, ClipUp)")
    parser.add_argument(
        "--measure",
        dest="measures",
        action="append",
        type=measure_spec,
        metavar="NAME:LOW:HIGH:BINS",
        help="map-elites: a measure and its bins (an info key such as x_velocity, or obs[I]; @last, @max, ... after"
        " it reduces an episode otherwise than by its mean); once per measure",
    )
    parser.add_argument(
        "--policy", help="network string (default: one Tanh layer of 16 units, 32 for continuous actions)"
    )
    parser.add_argument("--popsize", type=positive_int, help="solutions per generation (default: 64)")
    parser.add_argument("--generations", type=positive_int, help="stop after this many generations")
    parser.add_argument(
        "--until", type=finite_float, metavar="RETURN", help="stop once the center scores RETURN"
    )
    parser.add_argument("--obs-norm", action="store_true", default=None, help="normalize observations")
    add_evaluate_options(parser, defaults=False)
    parser.add_argument(
        "--stdev-init",
        type=finite_positive_float,
        help="the search's first stdev (map-elites: its mutation's) (default: 0.1)",
    )
    parser.add_argument(
        "--opponents",
        choices=OPPONENT_KINDS,
        help="on a multi-agent env (pettingzoo::), who a solution plays: the population (self), past centers"
        " (hall-of-fame) or itself in every seat (team); the center column is then its return against the"
        " first generation's center (self, hall-of-fame)",
    )
    parser.add_argument(
        "--matches",
        type=positive_int,
        help="with --opponents: matches a solution plays in each seat (default: 1)",
    )
    for knob, (_, words, keywords) in SEARCHER_KNOBS.items():
        parser.add_argument(f"--{knob.replace('_', '-')}", help=words, **keywords)
    add_device_argument(parser)
    parser.add_argument(
        "--log",
        action="append",
        choices=tuple(LOGGERS),
        help="also log each generation, the settings and the files to tensorboard (the run's tensorboard/),"
        " mlflow or wandb (where their settings say), or csv (log.csv, with EvoTorch's status); once per backend",
    )
    parser.add_argument("--video", action="store_true", default=None, help="record the champion at the end")
    parser.add_argument("--video-every", type=positive_int, metavar="N", help="and every N generations")


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "env", type=env_name, help="environment name, e.g. gym::Hopper-v5 or brax::inverted_pendulum"
    )
    parser.add_argument("--policy", required=True, metavar="FILE", help="a champion.pickle of vecrl evolve")
    parser.add_argument(
        "--out", required=True, type=writable_file, metavar="VIDEO", help="the video to write (.mp4 or .gif)"
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the episode")
    parser.add_argument("--max-steps", type=positive_int, default=1000, help="most steps recorded")
    add_overwrite_argument(parser)


def check_evolve_arguments(args: argparse.Namespace) -> None:
    """The mistakes ``vecrl evolve`` finds in its arguments alone (``run_settings`` then checks the folder
    they name), before importing anything heavy."""
    missing = missing_logger_modules(args.log or [])
    if missing:
        raise CommandError(missing[0])
    if args.resume is not None:
        if args.out is not None or args.overwrite:
            raise CommandError("--resume DIR goes on in DIR: give it without --out and --overwrite")
        return
    if args.env is None:
        raise CommandError(
            "give the env to evolve on (vecrl evolve gym::CartPole-v1 --out DIR), or --resume DIR"
        )
    if args.out is None:
        example = args.env.split("::")[-1].lower()
        raise CommandError(
            f"give --out DIR, the folder the run's state, results and plot go to (e.g. --out runs/{example})"
        )
    if args.generations is None and args.until is None:
        raise CommandError("give --generations N, --until RETURN or both: when the run stops")
    if args.algorithm == "map-elites":
        if not args.measures:
            raise CommandError(
                "--algorithm map-elites fills an archive over measures: give one or more --measure NAME:LOW:HIGH:BINS"
                " (e.g. --measure x_velocity:-1:3:10)"
            )
        if args.popsize is not None:
            raise CommandError(
                "--algorithm map-elites keeps one elite per cell of the --measure grid, its population: leave"
                " --popsize out"
            )
        names = [name for name, *_ in args.measures]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise CommandError(
                f"--measure {twice[0]} is given twice; give each measure once (its one LOW:HIGH:BINS)"
            )
        from vecrl_evotorch.archive import ARCHIVE_COLUMNS

        taken = [name for name in names if name in ARCHIVE_COLUMNS or name.endswith("_bin")]
        if taken:
            raise CommandError(
                f"--measure {taken[0]}: archive.csv has a column of its own by that name"
                f" ({', '.join(ARCHIVE_COLUMNS)} and NAME_bin); a measure of an info key so named can be"
                " given with its reduction spelled out (e.g. fitness@mean)"
            )
    elif args.measures:
        raise CommandError("--measure is for --algorithm map-elites: give that too, or leave --measure out")
    algorithm = args.algorithm or "pgpe"
    for knob, (takers, _, _) in SEARCHER_KNOBS.items():
        if getattr(args, knob, None) is not None and algorithm not in takers:
            raise CommandError(
                f"--{knob.replace('_', '-')} is a setting of {' and '.join(takers)}, not of {algorithm}: give"
                f" --algorithm {takers[0]}, or leave it out"
            )
    if args.parenthood_ratio is not None and args.parenthood_ratio >= 1:
        raise CommandError(f"--parenthood-ratio {args.parenthood_ratio:g}: a share, above 0 and below 1")


def _evolve(args: argparse.Namespace) -> int:
    if args.config is not None:
        from vecrl_evotorch.config import apply_config

        parser = argparse.ArgumentParser()
        _evolve_arguments(parser)
        apply_config(parser, args, args.config)
    check_evolve_arguments(args)
    from vecrl_evotorch.run_settings import new_settings, resumed_settings

    folder, settings = resumed_settings(args) if args.resume is not None else (None, new_settings(args))
    import_evotorch_without_jax()
    from vecrl_evotorch.evolve import run_command

    return run_command(args, settings, folder)


def _record(args: argparse.Namespace) -> int:
    check_overwrite(args.out, args.overwrite)
    import_evotorch_without_jax()  # (a saved champion may unpickle EvoTorch's objects)
    from vecrl_evotorch.record import record_command

    return record_command(args)


@vecrl.hookimpl
def vecrl_commands() -> list[Command]:
    return [
        Command(
            "evolve", "Evolve a policy with EvoTorch: saved, resumable, plotted.", _evolve_arguments, _evolve
        ),
        Command("record", "Record a video of a saved policy on an env.", _record_arguments, _record),
    ]
