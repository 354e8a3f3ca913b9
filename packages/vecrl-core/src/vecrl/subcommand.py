"""``Command``: what a ``vecrl_commands`` hookimpl returns, one ``vecrl`` subcommand. It stands apart from
``vecrl.command`` (the commands' shared helpers, which check env names through the registry) so that the
hook specifications can name it without importing the registry back."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A ``vecrl`` subcommand: ``add_arguments`` fills its parser, ``run`` does the work (returns the exit code).

    Examples:
        >>> Command("hello", "Say hello.", lambda parser: None, lambda args: print("hello") or 0).name
        'hello'
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
