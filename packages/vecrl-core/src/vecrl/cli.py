"""The ``vecrl`` command: ``vecrl backends``, ``vecrl bench``, and subcommands that plugins add.

A package adds a subcommand with a ``vecrl_commands`` hookimpl in a module published under the
``vecrl.commands`` entry-point group (vecrl-policy adds ``vecrl evaluate`` this way).

Example::

    $ vecrl backends
    $ vecrl bench gym::CartPole-v1 --num-envs 16 --steps 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from vecrl.registry import WELL_KNOWN_BACKENDS, backend_distribution, list_backends, load_command_plugins

if TYPE_CHECKING:
    from vecrl.torch_wrapper import TorchWrapper

COMMANDS_ENTRY_POINT_GROUP = "vecrl.commands"


class CommandError(Exception):
    """A user-facing error: ``vecrl`` prints its message on one line and exits with status 2."""


@dataclass(frozen=True)
class Command:
    """A ``vecrl`` subcommand: ``add_arguments`` fills its parser, ``run`` does the work (returns the exit code).

    Example:
        >>> Command("hello", "Say hello.", lambda parser: None, lambda args: print("hello") or 0).name
        'hello'
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value}")
    return value


class ProgressBar:
    """A one-line progress bar on a terminal; silent when the stream is not a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 30) -> None:
        self.total, self.width = total, width
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
        self._last_drawn = -1

    def update(self, done: int) -> None:
        """Redraw when the filled width changes (so the bar costs nothing per step)."""
        if not self.enabled:
            return
        filled = self.width * done // self.total
        if filled != self._last_drawn:
            self._last_drawn = filled
            bar = "#" * filled + "-" * (self.width - filled)
            self.stream.write(f"\r[{bar}] {100 * done // self.total:3d}%")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * (self.width + 8) + "\r")
            self.stream.flush()


def _add_backends_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options


def _run_backends(args: argparse.Namespace) -> int:
    backends = list_backends()
    rows = []
    for backend in backends:
        dist = backend_distribution(backend.prefix)
        provider = f"{dist[0]} {dist[1]}" if dist else "(registered in-process)"
        rows.append((backend.prefix, provider, backend.description))
    for prefix, package in WELL_KNOWN_BACKENDS.items():
        if all(backend.prefix != prefix for backend in backends):
            rows.append((prefix, "not installed", f"pip install {package}"))
    width = max(len(r[0]) for r in rows) if rows else 0
    provider_width = max(len(r[1]) for r in rows) if rows else 0
    for prefix, provider, description in rows:
        print(f"{prefix:<{width}}  {provider:<{provider_width}}  {description}".rstrip())
    return 0


def _add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("env", help="environment name, e.g. gym::CartPole-v1 or brax::ant")
    parser.add_argument("--num-envs", type=positive_int, default=16, help="sub-environments (default 16)")
    parser.add_argument(
        "--steps", type=positive_int, default=1000, help="vector steps to take (default 1000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for reset and the random actions")


def _run_bench(args: argparse.Namespace) -> int:
    from vecrl.actions import random_action_sampler
    from vecrl.make import make_vector_env

    env = make_env_or_fail(make_vector_env, args.env, num_envs=args.num_envs)
    try:
        sample = random_action_sampler(env.single_action_space, env.num_envs, seed=args.seed)
        env.reset(seed=args.seed)
        env.step(sample())  # the first step may compile (jax) or warm caches: not timed
        bar = ProgressBar(args.steps)
        start = time.perf_counter()
        for step in range(args.steps):
            env.step(sample())
            bar.update(step + 1)
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


def make_env_or_fail(make: Callable[..., TorchWrapper], env_name: str, **kwargs: Any) -> TorchWrapper:
    """Build an env, turning the errors a mistyped name causes into a one-line CommandError."""
    try:
        return make(env_name, **kwargs)
    except (ValueError, TypeError, ImportError, LookupError) as error:
        raise CommandError(f"cannot make {env_name!r}: {_first_line(error)}") from error
    except Exception as error:  # gymnasium raises its own error types for unknown ids
        if type(error).__module__.startswith(("gymnasium", "gym")):
            raise CommandError(f"cannot make {env_name!r}: {_first_line(error)}") from error
        raise


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


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


def build_parser() -> argparse.ArgumentParser:
    """The ``vecrl`` parser with the built-in subcommands and those that plugins provide."""
    parser = argparse.ArgumentParser(
        prog="vecrl", description="Batched RL environments and policies, in torch."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in (*BUILTIN_COMMANDS, *load_command_plugins(COMMANDS_ENTRY_POINT_GROUP)):
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``vecrl`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except CommandError as error:
        print(f"vecrl {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"vecrl {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
