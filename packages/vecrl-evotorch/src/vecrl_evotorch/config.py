"""``vecrl evolve --config FILE``: a run's settings from a TOML or JSON file, the command line's own options
overriding it. The keys are the command's options as a run's ``settings.json`` names them (``popsize``,
``center_learning_rate``, ``measures``, ...; dashes work too), so a run's ``settings.json`` is a config.

Examples:
    >>> import argparse, tempfile
    >>> parser = argparse.ArgumentParser(); _ = parser.add_argument("--popsize", type=int)
    >>> path = tempfile.mktemp(suffix=".toml"); _ = open(path, "w").write("popsize = 32")
    >>> args = parser.parse_args([]); apply_config(parser, args, path); args.popsize
    32
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from vecrl.checks import did_you_mean
from vecrl.command import CommandError

#: Options a config does not hold: where the run's files go and how it starts are the command line's.
COMMAND_LINE_ONLY = frozenset({"help", "config", "resume", "overwrite"})


def apply_config(parser: argparse.ArgumentParser, args: argparse.Namespace, path: str) -> None:
    """Give every option of ``args`` that the command line left out (None) the value the config file ``path``
    sets, checked as the option's own flag checks it; a CommandError naming the file and the key otherwise
    (an unknown key with the closest option)."""
    options = {action.dest: action for action in parser._actions if action.dest not in COMMAND_LINE_ONLY}
    for key, value in _read(path).items():
        name = key.replace("-", "_")
        action = options.get(name)
        if action is None:
            raise CommandError(
                f"--config {path}: {key!r} is no setting of the command (its settings are its options, named as"
                f" in a run's settings.json).{did_you_mean(name, options)}"
            )
        if (
            value is None or getattr(args, name, None) is not None
        ):  # (None: the default; given: the flag wins)
            continue
        try:
            setattr(args, name, _checked(action, value))
        except (argparse.ArgumentTypeError, TypeError, ValueError, IndexError) as error:
            raise CommandError(f"--config {path}: {key} = {value!r}: {error}") from None


def _read(path: str) -> dict[str, Any]:
    """The table of the TOML (``.toml``) or JSON file ``path``."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise CommandError(f"--config {path}: {error.strerror or error}") from None
    try:
        data = json.loads(text) if path.endswith(".json") else _toml().loads(text)
    except ValueError as error:  # (json's and tomllib's decode errors are ValueErrors)
        raise CommandError(
            f"--config {path}: not valid {'JSON' if path.endswith('.json') else 'TOML'}: {error}"
        ) from None
    if not isinstance(data, dict):
        raise CommandError(f"--config {path}: expected a table of settings, got {type(data).__name__}")
    return data


def _toml() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # (tomllib's package before Python 3.11)

    return tomli


def _checked(action: argparse.Action, value: Any) -> Any:
    """``value`` from a config as the option ``action`` takes it, checked by the option's own type."""
    if action.nargs == 0:  # (a switch: --obs-norm, --video)
        if not isinstance(value, bool):
            raise TypeError("expected true or false")
        return value
    if isinstance(action, argparse._AppendAction) or action.dest in ("measures", "randomize"):
        if not isinstance(value, list):
            raise TypeError("expected a list, one item a flag")
        return [_one(action, _as_word(action.dest, item)) for item in value]
    return _one(action, value if isinstance(value, str) else json.dumps(value))


def _one(action: argparse.Action, word: str) -> Any:
    """One word as the option's flag would take it (its type, then its choices)."""
    converted = action.type(word) if callable(action.type) else word
    if action.choices is not None and converted not in action.choices:
        raise ValueError(f"expected one of {', '.join(map(str, action.choices))}")
    return converted


def _as_word(dest: str, item: Any) -> str:
    """An item of a repeatable option as its flag's word: settings.json keeps a measure as ``[name, low, high,
    bins]`` and a range as ``[name, [low, high]]``."""
    if isinstance(item, str):
        return item
    if dest == "randomize":
        name, (low, high) = item
        return f"{name}={low}:{high}"
    return ":".join(map(str, item))
