"""The ``vecrl`` command: ``vecrl backends``, ``vecrl bench``, and subcommands that plugins add.

A package adds a subcommand with a ``vecrl_commands`` hookimpl (returning ``vecrl.command.Command``
objects) in a module published under the ``vecrl.commands`` entry-point group (vecrl-evaluate adds
``vecrl evaluate`` this way). A plugin that fails to load is reported in one line; the other commands
still work.

Example::

    $ vecrl backends
    $ vecrl bench gym::CartPole-v1 --num-envs 16 --steps 1000
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO

from vecrl.checks import did_you_mean
from vecrl.command import (
    Command,
    CommandError,
    ctrl_c_exits_at_once,
    env_name,
    make_env_or_fail,
    positive_int,
    seed_int,
    warm_up,
)
from vecrl.interrupts import ctrl_c_remembered, raise_if_ctrl_c_pressed
from vecrl.registry import (
    DISABLE_AUTOLOAD_ENV,
    WELL_KNOWN_BACKENDS,
    autoload_enabled,
    backend_distribution,
    install_hint,
    installed_backends,
    load_command_plugins,
)

COMMANDS_ENTRY_POINT_GROUP = "vecrl.commands"

#: Commands we publish in other packages: name -> the distribution that adds it.
WELL_KNOWN_COMMANDS: dict[str, str] = {
    "evaluate": "vecrl-evaluate",
    "evolve": "vecrl-evotorch",
    "record": "vecrl-evotorch",
}


class ProgressBar:
    """A one-line progress bar on a terminal, with the time left at the pace so far; silent when the stream is
    not a terminal.

    Examples:
        >>> import io
        >>> class Terminal(io.StringIO):
        ...     def isatty(self): return True
        >>> bar = ProgressBar(4, Terminal(), width=4, clock=iter([0.0, 3.0]).__next__)
        >>> bar.update(1); bar.stream.getvalue().strip()
        '[#---]  25%  ~9 s left'
    """

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        width: int = 30,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total, self.width, self.clock = total, width, clock
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self._last_drawn = -1
        self._start = clock() if self.enabled else 0.0

    def update(self, done: int) -> None:
        """Redraw when the filled width changes (so the bar costs nothing per step)."""
        if not self.enabled:
            return
        filled = self.width * done // self.total
        if filled != self._last_drawn:
            self._last_drawn = filled
            bar = "#" * filled + "-" * (self.width - filled)
            # (the rows end at their own pace: the time so far per row done, an estimate)
            left = (self.clock() - self._start) * (self.total - done) / done if done else math.nan
            said = f"  ~{left:.0f} s left" if math.isfinite(left) and done < self.total else ""
            self.stream.write(f"\r[{bar}] {100 * done // self.total:3d}%{said:<16}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (self.width + 24) + "\r")
            self.stream.flush()


def _add_backends_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options


def _run_backends(args: argparse.Namespace) -> int:
    backends, broken = installed_backends()
    rows = []
    for backend in backends:
        dist = backend_distribution(backend.prefix)
        provider = f"{dist[0]} {dist[1]}" if dist else "(registered in-process)"
        rows.append((backend.prefix, provider, backend.description))
    for prefix, error in broken.items():
        rows.append((prefix, "broken", str(error).splitlines()[0]))
    for prefix, package in WELL_KNOWN_BACKENDS.items():
        if all(backend.prefix != prefix for backend in backends) and prefix not in broken:
            rows.append((prefix, "not installed", install_hint(package)))
    width = max(len(r[0]) for r in rows) if rows else 0
    provider_width = max(len(r[1]) for r in rows) if rows else 0
    for prefix, provider, description in rows:
        print(f"{prefix:<{width}}  {provider:<{provider_width}}  {description}".rstrip())
    return 0


def _add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", type=env_name, help="environment name, e.g. gym::CartPole-v1 or brax::ant")
    parser.add_argument("--num-envs", type=positive_int, default=16, help="sub-environments")
    parser.add_argument("--steps", type=positive_int, default=1000, help="vector steps to take")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed for reset and the random actions")


def _run_bench(args: argparse.Namespace) -> int:
    from vecrl.actions import random_action_sampler
    from vecrl.make import make_vector_env

    env = make_env_or_fail(make_vector_env, args.env, num_envs=args.num_envs)
    try:
        warm_up(env, args.env, args.seed)  # the first reset and step may compile (jax): not timed
        sample = random_action_sampler(env.single_action_space, env.num_envs, seed=args.seed)
        bar = ProgressBar(args.steps)
        start = time.perf_counter()
        for step in range(args.steps):
            env.step(sample())
            bar.update(step + 1)
            raise_if_ctrl_c_pressed()
        elapsed = time.perf_counter() - start
        bar.close()
    finally:
        env.close()
    env_steps = args.steps * args.num_envs
    print(
        f"{args.env}: {env_steps:,} env-steps in {elapsed:.2f} s = {env_steps / elapsed:,.0f} env-steps/s"
        f" (num_envs={args.num_envs}, steps={args.steps})"
    )
    return 0


BUILTIN_COMMANDS = (
    Command(
        "backends",
        "List the installed backends and the ones you can install.",
        _add_backends_arguments,
        _run_backends,
    ),
    Command(
        "bench", "Measure env-steps per second with random valid actions.", _add_bench_arguments, _run_bench
    ),
)


def _not_installed(name: str, package: str) -> Command:
    """A stand-in for a well-known command whose package is missing: it says what to install."""

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("arguments", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    def run(args: argparse.Namespace) -> int:
        if not autoload_enabled():
            raise CommandError(
                f"'vecrl {name}' is added by the package {package}, whose plugin is not loaded because"
                f" {DISABLE_AUTOLOAD_ENV} is set."
            )
        raise CommandError(
            f"'vecrl {name}' is added by the package {package}, which is not installed: {install_hint(package)}"
        )

    return Command(name, f"(needs {package}, not installed)", add_arguments, run)


EXAMPLES = """examples:
  vecrl backends
  vecrl bench gym::CartPole-v1 --num-envs 64
  vecrl evaluate gym::CartPole-v1 --popsize 256 --episodes 2
  vecrl evaluate gym::Hopper-v5 --popsize 64 --workers 2 --obs-norm hopper.stats --out rows.csv
  vecrl evolve gym::CartPole-v1 --until 475 --out runs/cartpole   (then: vecrl evolve --resume runs/cartpole)
  vecrl COMMAND --help   (the options of one command)
"""


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default after its help, unless the help already says it or there is none (None,
    False); descriptions and examples keep their lines."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default is None or action.default is False:
            return text
        return super()._get_help_string(action)


def _versions() -> str:
    """``vecrl-core X`` and every other installed vecrl package with its version."""
    names = sorted(
        {
            dist.metadata["Name"]
            for dist in importlib.metadata.distributions()
            if (dist.metadata["Name"] or "").startswith("vecrl-")
        }
    )
    return ", ".join(f"{name} {importlib.metadata.version(name)}" for name in names)


class OneLineErrors(argparse.ArgumentParser):
    """argparse's parser, whose usage mistakes take one line: what is wrong, and where the options are listed
    (status 2, as argparse's own)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


#: The options ``vecrl`` takes before a command.
TOP_LEVEL_OPTIONS = ("-h", "--help", "--version")


def build_parser() -> argparse.ArgumentParser:
    """The ``vecrl`` parser with the built-in subcommands and those that plugins provide; a plugin that
    fails to load is reported on stderr in one line and left out."""
    parser = OneLineErrors(
        prog="vecrl",
        description="Batched RL environments and policies, in torch.",
        epilog=EXAMPLES,
        formatter_class=HelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--version", action="version", version=_versions(), help="the installed vecrl packages"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    plugin_commands, failures = load_command_plugins(COMMANDS_ENTRY_POINT_GROUP)
    for failure in failures:
        print(f"vecrl: warning: {failure.splitlines()[0]}", file=sys.stderr)
    commands = [*BUILTIN_COMMANDS, *plugin_commands]
    names = {command.name for command in commands}
    commands += [_not_installed(n, p) for n, p in WELL_KNOWN_COMMANDS.items() if n not in names]
    for command in commands:
        sub = subparsers.add_parser(
            command.name,
            help=command.help,
            description=command.help,
            formatter_class=HelpFormatter,
            allow_abbrev=False,  # (--popsiz is no --popsize: a typo is refused, not taken for another option)
        )
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def subparsers_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parsers of ``parser``'s commands, by name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def refuse_unknown(parser: argparse.ArgumentParser, extras: list[str]) -> NoReturn:
    """Exit with ``parser``'s one-line error for the words it does not know (``extras``), naming the option
    closest to the first unknown one.

    Examples:
        >>> sub = OneLineErrors(prog="vecrl evolve"); _ = sub.add_argument("--popsize")
        >>> refuse_unknown(sub, ["--popsise", "64"])  # doctest: +SKIP
        vecrl evolve: error: unrecognized arguments: --popsise 64. Did you mean '--popsize'? (see vecrl evolve --help)
    """
    options = [option for action in parser._actions for option in action.option_strings]
    first = next((word for word in extras if word.startswith("-")), "")
    hint = did_you_mean(first.split("=")[0], options) if first else ""
    parser.error(f"unrecognized arguments: {' '.join(extras)}{'.' + hint if hint else ''}")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vecrl`` command; returns the exit status."""
    with ctrl_c_exits_at_once("vecrl: interrupted"):  # loading the plugins imports them
        parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0].startswith("-") and words[0] not in TOP_LEVEL_OPTIONS:
        # (argparse would say only that COMMAND is missing)
        hint = did_you_mean(words[0], TOP_LEVEL_OPTIONS)
        parser.error(f"unrecognized option {words[0]!r}" + (f".{hint}" if hint else ""))
    args, extras = parser.parse_known_args(words)
    if extras:  # the command's own mistake, said by the command, with the option it likely meant
        refuse_unknown(subparsers_of(parser)[args.command], extras)
    try:
        with ctrl_c_remembered():  # the commands' loops stop on a Ctrl-C that Python dropped
            return int(args.run(args))
    except CommandError as error:
        print(f"vecrl {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:  # a command may say what was done: KeyboardInterrupt("after ...")
        detail = f" {interrupt}" if str(interrupt) else ""
        print(f"vecrl {args.command}: interrupted{detail}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
