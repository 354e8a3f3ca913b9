"""The ``vecrl`` console script: ``vecrl.cli.main``, with Ctrl-C answered at any moment.

Importing the commands (torch, gymnasium, the plugins) takes about a second; Ctrl-C in that second ends
the command with one line and status 130, as it does later, instead of a traceback of the imports or an
abort from inside torch's (``vecrl.command.ctrl_c_exits_at_once``). Once the command has returned, Ctrl-C
is ignored while the interpreter exits.

Example::

    $ vecrl --version
"""

from __future__ import annotations

import signal
import sys


def main() -> int:
    """Run ``vecrl.cli.main`` on the command line's arguments; returns the exit status."""
    from vecrl.command import ctrl_c_exits_at_once

    try:
        with ctrl_c_exits_at_once("vecrl: interrupted"):
            from vecrl.cli import main as run
        status = run()
    except KeyboardInterrupt:
        print("vecrl: interrupted", file=sys.stderr)
        status = 130
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: Ctrl-C in torch's exit hooks would print a traceback
    return status
