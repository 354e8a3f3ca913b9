"""The settings of a ``vecrl evolve`` run, and the folder checks that need nothing but them: what ``vecrl
evolve`` refuses before it imports torch and EvoTorch (an existing ``--out``, a ``--resume`` that contradicts
the run, a folder another process holds).

Examples:
    >>> import argparse, tempfile
    >>> out = tempfile.mkdtemp() + "/run"
    >>> settings = new_settings(argparse.Namespace(env="gym::CartPole-v1", out=out, overwrite=False, popsize=8))
    >>> settings["popsize"], settings["algorithm"]
    (8, 'pgpe')
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from vecrl.command import CommandError, finite_positive_float
from vecrl_evaluate.command_options import shared_options
from vecrl_evotorch.runs import RunError, RunFolder, contradictions

#: EvoTorch's ranking methods (``evotorch.tools.ranking``), for ``--ranking-method``.
RANKINGS = ("centered", "linear", "nes", "normalized", "raw")
#: The searcher's knobs, with EvoTorch's names: setting -> (the algorithms that take it, its --help, its flag's
#: argparse keywords). A knob left out is the algorithm's default (``vecrl_evotorch.evolve.make_searcher``'s for
#: PGPE and CEM, EvoTorch's for SNES).
SEARCHER_KNOBS: dict[str, tuple[tuple[str, ...], str, dict[str, Any]]] = {
    "center_learning_rate": (
        ("pgpe", "snes"),
        "the center's learning rate (default: pgpe 0.075, snes EvoTorch's)",
        {"type": finite_positive_float, "metavar": "RATE"},
    ),
    "stdev_learning_rate": (
        ("pgpe", "snes"),
        "the stdev's learning rate (default: pgpe 0.1, snes EvoTorch's)",
        {"type": finite_positive_float, "metavar": "RATE"},
    ),
    "max_speed": (
        ("pgpe",),
        "ClipUp's largest step of the center, pgpe (default: 0.15)",
        {"type": finite_positive_float, "metavar": "SPEED"},
    ),
    "ranking_method": (
        ("pgpe", "snes"),
        "how a population's returns are ranked before the update (default: pgpe centered, snes nes)",
        {"choices": RANKINGS},
    ),
    "parenthood_ratio": (
        ("cem",),
        "the share of the population that parents the next, cem (default: 0.5)",
        {"type": finite_positive_float, "metavar": "RATIO"},
    ),
}
#: What ``VecrlNE``'s ``opponents`` (and ``--opponents``) names, besides a tensor of opponents' parameters (here,
#: where the command reads it without importing torch).
OPPONENT_KINDS = ("self", "team", "hall-of-fame")
#: The settings of a run and their defaults (``env`` has none); ``vecrl evolve``'s options of the same names.
DEFAULTS: dict[str, Any] = {
    "algorithm": "pgpe",
    "policy": None,  # VecrlNE's default for the env's action space
    "popsize": 64,
    "generations": None,
    "until": None,
    "obs_norm": False,
    # the options vecrl evaluate takes too (vecrl_evaluate.command_options: EvaluateOptions' fields with a flag)
    **{option.setting: option.default for option in shared_options()},
    "randomize": None,  # [[name, [low, high]], ...]: vecrl.randomize.scale's ranges
    "stdev_init": 0.1,
    **dict.fromkeys(SEARCHER_KNOBS),  # (None: the algorithm's default)
    "device": None,  # the torch device the policies run on (None: the CPU)
    "video": False,
    "video_every": None,
    "measures": None,  # [[name, low, high, bins], ...]: map-elites's grid (vecrl_evotorch.archive)
    "opponents": None,  # a multi-agent env's seating: self, team or hall-of-fame (VecrlNE's opponents)
    "matches": 1,  # with opponents: matches a solution and seat
    "log": None,  # [backend, ...]: where --log sends the results too (vecrl_evotorch.run_log)
}
#: What a resumed run may change: how long it goes on, and what it records.
MAY_CHANGE = frozenset({"generations", "until", "video", "video_every", "log"})
CHAMPION = "champion.pickle"
#: What a run and its documented commands write beside ``vecrl_evotorch.runs.RUN_FILES`` (glob patterns): an
#: ``--overwrite`` removes these too, and nothing they did not write.
EVOLVE_FILES = (
    CHAMPION,
    "champion.mp4",
    "champion.gif",  # (the README's vecrl record line writes it beside the run)
    "videos/generation-*.mp4",
    "archive.csv",
    "archive.png",
    "log.csv",  # --log csv and tensorboard (vecrl_evotorch.run_log)
    "tensorboard/events.out.tfevents.*",
)


def against_first_center(settings: Mapping[str, Any]) -> bool:
    """Whether a run of ``settings`` scores its center against the first generation's center (its opponents
    improve too: ``--opponents self`` or ``hall-of-fame``)."""
    return settings.get("opponents") in ("self", "hall-of-fame")


def center_column(settings: Mapping[str, Any]) -> str:
    """The results table's column of the center's score in a run of ``settings``: MAP-Elites' best elite, the
    center against the first center, or the center on fresh episodes."""
    if settings["algorithm"] == "map-elites":
        return "elite_return"
    return "center_vs_first_return" if against_first_center(settings) else "center_return"


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings the command line gives (the options of ``DEFAULTS``' names that it sets)."""
    return {key: getattr(args, key) for key in DEFAULTS if getattr(args, key, None) is not None}


def new_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings of a new run in ``args.out``; a CommandError if the folder holds a run it may not replace."""
    try:
        RunFolder.check_new(args.out, overwrite=args.overwrite, also=EVOLVE_FILES)
    except RunError as error:
        raise CommandError(str(error)) from error
    return {"env": args.env, **DEFAULTS, **given_settings(args)}


def resumed_settings(args: argparse.Namespace) -> tuple[RunFolder, dict[str, Any]]:
    """The run in ``args.resume``, held by this process, and its settings with the changes ``args`` may make;
    a CommandError if the folder holds no run or ``args`` contradicts how it was started."""
    try:
        folder = RunFolder.open(args.resume)
        saved = folder.settings()
    except RunError as error:
        raise CommandError(f"--resume: {error}") from error
    given = given_settings(args)
    fixed = {key: value for key, value in given.items() if key not in MAY_CHANGE}
    if args.env is not None:
        fixed["env"] = args.env
    contradicting = contradictions(
        {**DEFAULTS, **saved}, fixed
    )  # (a run saved before a setting existed had its default)
    if contradicting:
        folder.release()
        raise CommandError(
            f"--resume {args.resume}: {'; '.join(contradicting)}: leave these out to go on as the run was started,"
            " or start a new run with --out"
        )
    return folder, {**DEFAULTS, **saved, **{key: given[key] for key in MAY_CHANGE if key in given}}


def fixed_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a resumed run keeps (all but ``MAY_CHANGE``)."""
    return {key: value for key, value in settings.items() if key not in MAY_CHANGE}
