"""The options ``vecrl evaluate`` and ``vecrl evolve`` share: their flags (``shared_options()``: those of
``EvaluateOptions``' fields, then the env's and the runners'), how a parser gets them, and the
``EvaluateOptions`` keywords they give. Torch-free: the commands answer ``--help`` and usage
mistakes with it before anything heavy is imported."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any, NamedTuple

from vecrl.command import CommandError, add_randomize_argument, first_line, positive_int
from vecrl_evaluate.options import THE_FIELDS, flagged_options, setting_name

THIS_MACHINE = ""  # --ray without an address


class SharedOption(NamedTuple):
    """A flag both commands take: ``flag`` with argparse's ``keywords`` (its help among them) and ``default``."""

    flag: str
    keywords: dict[str, Any]
    default: Any

    @property
    def setting(self) -> str:
        """What a run's settings call it."""
        return setting_name(self.flag)


#: The shared flags that choose the env and where the rows run rather than an ``EvaluateOptions`` field:
#: the commands make the env and the executor of them.
ENV_AND_RUNNERS: tuple[SharedOption, ...] = (
    SharedOption(
        "--num-envs",
        {"type": positive_int, "help": "sub-envs (default: the popsize; on host engines at most 256)"},
        None,
    ),
    SharedOption(
        "--workers",
        {
            "type": positive_int,
            "help": "processes evaluating parts of the population, this one included (gym envs); with --ray,"
            " Ray actors (default: one per CPU of the cluster)",
        },
        None,
    ),
    SharedOption(
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
)


def shared_options() -> list[SharedOption]:
    """The options ``vecrl evaluate`` and ``vecrl evolve`` share, each ``(flag, argparse keywords, default)``:
    those of ``EvaluateOptions``' fields with a ``Flag`` (the field's default, or the flag's own), then
    ``ENV_AND_RUNNERS``. A run's settings name each as its flag without the dashes.

    Examples:
        >>> [flag for flag, _, _ in shared_options()][:3]
        ['--episodes', '--seed', '--decrease-rewards-by']
    """
    fields = [
        SharedOption(
            flag.name,
            {**flag.keywords, "help": flag.help},
            option_field.default if flag.default is THE_FIELDS else flag.default,
        )
        for option_field, flag in flagged_options()
    ]
    return [*fields, *ENV_AND_RUNNERS]


def add_evaluate_options(parser: argparse.ArgumentParser, *, defaults: bool = True) -> None:
    """Add ``shared_options()`` and ``--randomize`` to ``parser``; with ``defaults=False`` an option not
    given is None (``vecrl evolve``: a resumed run fills in its saved settings), its help naming the default
    all the same."""
    for flag, keywords, default in shared_options():
        help_text = keywords["help"]
        if default not in (None, False) and "default" not in help_text:
            help_text = f"{help_text} (default: {default})"
        parser.add_argument(flag, **{**keywords, "help": help_text}, default=default if defaults else None)
    add_randomize_argument(parser)


def evaluate_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``vecrl_evaluate.EvaluateOptions`` that the shared options in ``settings`` (parsed
    arguments as a mapping, or a run's settings) give: one for each field with a ``Flag``; ``randomize``,
    ``workers`` and ``ray`` need the env or start processes, and the commands make them.

    Examples:
        >>> evaluate_options({"episodes": 2, "seed": 0, "action_noise": 0.1, "decrease_rewards_by": None,
        ...                   "alive_bonus_schedule": None, "common_random_numbers": False})["action_noise_stdev"]
        0.1
    """
    keywords = {}
    for option_field, flag in flagged_options():
        value = settings[flag.setting]
        keywords[option_field.name] = value if flag.from_setting is None else flag.from_setting(value)
    return keywords


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
