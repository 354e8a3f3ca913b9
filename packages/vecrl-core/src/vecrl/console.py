"""The ``vecrl`` console script: ``vecrl.cli.main``, with Ctrl-C answered at any moment.

Importing the commands (torch, gymnasium, the plugins) takes about a second; Ctrl-C in that second ends
the command with one line and status 130, as it does later, instead of a traceback of the imports or an
abort from inside torch's (``vecrl.command.ctrl_c_exits_at_once``). Once the command has returned, Ctrl-C
is ignored while the interpreter exits. An interrupted command exits at once, without the interpreter's
teardown of torch, jax and brax (1 to 3 s), where it left no process running: it has said what was done
and cleaned up after itself, and a user who pressed Ctrl-C waits for nothing more.

Example::

    $ vecrl --version
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os.write(2, b"vecrl: interrupted\n")
    os._exit(130)


def main() -> int:
    """Run ``vecrl.cli.main`` on the command line's arguments; returns the exit status."""
    # before any import of vecrl's (a KeyboardInterrupt in one is a traceback), until the block that says so
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    from vecrl.command import ctrl_c_exits_at_once

    signal.signal(signal.SIGINT, signal.default_int_handler)

    try:
        with ctrl_c_exits_at_once("vecrl: interrupted"):
            from vecrl.cli import main as run
        status = run()
    except KeyboardInterrupt:
        print("vecrl: interrupted", file=sys.stderr)
        status = 130
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: Ctrl-C in torch's exit hooks would print a traceback
    if status == 130 and not multiprocessing.active_children():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status
