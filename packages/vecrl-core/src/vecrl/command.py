"""What a ``vecrl`` subcommand is made of: ``Command``, ``CommandError`` and the argument types and
helpers that the built-in and the plugins' commands share.

A package adds a subcommand with a ``vecrl_commands`` hookimpl returning ``Command`` objects, in a module
published under the ``vecrl.commands`` entry-point group (vecrl-evaluate adds ``vecrl evaluate`` so).

Examples:
    >>> seed_int("7"), finite_positive_float("0.5")
    (7, 0.5)
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vecrl.errors import VecrlError
from vecrl.interrupts import sigint_handled_by
from vecrl.subcommand import Command as Command  # where plugins have found it: vecrl.command.Command

if TYPE_CHECKING:
    from vecrl.torch_wrapper import TorchWrapper


class CommandError(VecrlError):
    """A user-facing error: ``vecrl`` prints its message on one line and exits with status 2."""


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _whole_number(text, 1, None, "a positive whole number")


def seed_int(text: str) -> int:
    """argparse type: a seed, a whole number in [0, 2**32)."""
    return _whole_number(text, 0, 2**32, "a seed in [0, 2**32)")


def _whole_number(text: str, low: int, stop: int | None, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < low or (stop is not None and value >= stop):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def scale_range(text: str) -> list[Any]:
    """A ``--randomize`` word, ``name=low:high``, as ``[name, [low, high]]`` (as a run's settings.json keeps
    it), an item of ``vecrl.randomize.scale``'s ranges.

    Examples:
        >>> scale_range("body_mass=0.8:1.2")
        ['body_mass', [0.8, 1.2]]
    """
    name, equals, bounds = text.partition("=")
    low, colon, high = bounds.partition(":")
    try:
        if not (name and equals and colon):
            raise ValueError
        values = [float(low), float(high)]
        if not all(math.isfinite(value) for value in values) or values[0] > values[1]:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"takes name=low:high (each element of the parameter's default times a factor drawn uniformly from"
            f" [low, high], low <= high, e.g. body_mass=0.8:1.2), got {text!r}"
        ) from None
    return [name, values]


class _EachNameOnce(argparse.Action):
    """``action="append"`` for ``[name, value]`` items, refusing a name given twice (the later would win)."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None
    ) -> None:
        items = list(getattr(namespace, self.dest) or [])
        if any(name == values[0] for name, _ in items):
            parser.error(f"{option} {values[0]} is given twice: give each parameter once")
        setattr(namespace, self.dest, [*items, values])


def add_randomize_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--randomize NAME=LOW:HIGH`` option (repeatable; ``scale_range``'s words), of the commands that
    evaluate populations."""
    parser.add_argument(
        "--randomize",
        type=scale_range,
        action=_EachNameOnce,
        metavar="NAME=LOW:HIGH",
        help="domain randomization: each episode scales the env parameter NAME (body_mass, gravity, ...: the"
        " env's params) by factors drawn from [LOW, HIGH]; repeat for more parameters",
    )


def env_name(text: str) -> str:
    """argparse type: an env name that a backend serves, checked before anything heavy is imported
    (``vecrl.env_names.check_env_name``): a mistyped prefix or gymnasium id is a usage error at once.

    Examples:
        >>> env_name("gym::CartPole-v1")
        'gym::CartPole-v1'
    """
    from vecrl.env_names import check_env_name

    try:
        return check_env_name(text)
    except (ValueError, LookupError, ImportError, TypeError) as error:
        raise argparse.ArgumentTypeError(first_line(error)) from error


def finite_float(text: str) -> float:
    """argparse type: a finite number (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def finite_positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (``nan`` and ``inf`` are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite positive number, got {text!r}")
    return value


@contextlib.contextmanager
def ctrl_c_exits_at_once(message: str) -> Iterator[None]:
    """Within the block, Ctrl-C prints ``message`` on stderr and exits with status 130 at once, raising nothing.

    For imports and the making of envs, where a ``KeyboardInterrupt`` can surface inside C++ code that
    cannot pass it on: interrupted while it imports ``torch.distributed``, a process aborts with
    ``terminate called after throwing an instance of 'python_error'`` (status -6) or fails with a
    ``TypeError``. Nothing that must be closed may start in the block (a worker process of the env may:
    it exits when its caller's end of the pipe closes). Outside the main thread it changes nothing
    (``vecrl.interrupts.sigint_handled_by``).

    Examples:
        >>> with ctrl_c_exits_at_once("vecrl: interrupted"):
        ...     import json
    """

    def exit_now(signum: int, frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a flush interrupted mid-write may not be re-entered
                stream.flush()
        os.write(2, f"{message}\n".encode())
        os._exit(130)

    with sigint_handled_by(exit_now):
        yield


def make_env_or_fail(make: Callable[..., TorchWrapper], env_name: str, **kwargs: Any) -> TorchWrapper:
    """Build an env, turning the errors a mistyped name, a wrong size or a missing download causes into a
    one-line CommandError. Says on stderr that it is making the env, and how long that took (hundreds of
    MuJoCo sub-envs take a minute, which should not pass in silence). Ctrl-C meanwhile exits at once
    (``ctrl_c_exits_at_once``)."""
    print(
        f"{env_name}: making {kwargs.get('num_envs', 1)} sub-env(s) ...", end=" ", file=sys.stderr, flush=True
    )
    start = time.perf_counter()
    try:
        with ctrl_c_exits_at_once(f"\nvecrl: interrupted while making {env_name}"):
            env = make(env_name, **kwargs)
    except BaseException as error:
        print(file=sys.stderr, flush=True)  # what follows starts a line of its own
        if isinstance(
            error, (ValueError, TypeError, ImportError, LookupError, MemoryError, ConnectionError)
        ) or (
            isinstance(error, Exception) and type(error).__module__.startswith(("gymnasium", "gym"))
        ):  # gymnasium raises its own error types for unknown ids
            raise CommandError(f"cannot make {env_name!r}: {first_line(error)}") from error
        raise
    print(f"made in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return env


def warm_up(env: TorchWrapper, env_name: str, seed: int) -> None:
    """Reset ``env`` and step it once with random actions, so that a rate measured afterwards leaves out
    the first call's compile; says so first on stderr when the env is jit-compiled.

    Examples:
        >>> import vecrl
        >>> warm_up(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2), "gym::CartPole-v1", seed=0)
    """
    from vecrl.actions import random_action_sampler

    compiled = getattr(env.unwrapped, "jit_compiled", False)
    if compiled:
        print(f"{env_name}: compiling the first reset and step (once per configuration) ...", file=sys.stderr)
    start = time.perf_counter()
    env.reset(seed=seed)
    env.step(random_action_sampler(env.single_action_space, env.num_envs, seed=seed)())
    if compiled:
        print(f"{env_name}: compiled in {time.perf_counter() - start:.1f} s", file=sys.stderr)


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, or its type's name when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def writable_file(text: str) -> Path:
    """An argparse type: the path of a file this command writes after its work, checked before it: not a
    folder, in a folder that exists (a typo there is caught) and that this process can write to (tried by
    making and removing a file there).

    Examples:
        >>> writable_file("/proc/rows.csv")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: cannot write in /proc (No such file or directory): give a path you can write to
    """
    import tempfile

    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder: give a file's path (e.g. {path / 'out'})")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"the folder of {text!r} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".check"):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(
            f"cannot write in {path.parent} ({error.strerror or error}): give a path you can write to"
        ) from error
    return path


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--device`` option of a command that runs policies (``checked_device_option`` reads it)."""
    parser.add_argument(
        "--device", metavar="DEVICE", help="the torch device the policies run on, e.g. cuda:0 (default: cpu)"
    )


def checked_device_option(device: str | None) -> Any:
    """``--device`` as a ``torch.device`` (None where not given); a CommandError where this torch cannot use
    it (checked when the command runs: answering ``--help`` imports no torch).

    Examples:
        >>> checked_device_option("cpu"), checked_device_option(None)
        (device(type='cpu'), None)
    """
    if device is None:
        return None
    from vecrl.checks import checked_device

    try:
        return checked_device(device)
    except ValueError as error:
        raise CommandError(f"--device {device}: {first_line(error)}") from None


def add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--overwrite`` option of a command that writes a file at ``--out`` (``check_overwrite``'s)."""
    parser.add_argument("--overwrite", action="store_true", help="replace the file already at --out")


def check_overwrite(path: Path | None, overwrite: bool) -> None:
    """A CommandError if the file ``path`` (``--out``) exists and ``overwrite`` was not given: the commands
    replace nothing of a user's unasked, as ``vecrl evolve`` replaces no run without ``--overwrite``.

    Examples:
        >>> check_overwrite(Path("/etc/hostname"), overwrite=False)
        Traceback (most recent call last):
        ...
        vecrl.command.CommandError: '/etc/hostname' exists: give another --out, or pass --overwrite to replace it.
    """
    if path is not None and not overwrite and path.exists():
        raise CommandError(f"{str(path)!r} exists: give another --out, or pass --overwrite to replace it.")
