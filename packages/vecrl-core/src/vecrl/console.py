"""The ``vecrl`` console script: ``vecrl.cli.main``, with Ctrl-C answered at any moment.

Importing the commands (torch, gymnasium, the plugins) takes about a second; Ctrl-C in that second ends
the command with one line and status 130, as it does later, instead of a traceback of the imports.

Example::

    $ vecrl --version
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run ``vecrl.cli.main`` on the command line's arguments; returns the exit status."""
    try:
        from vecrl.cli import main as run

        return run()
    except KeyboardInterrupt:
        print("vecrl: interrupted", file=sys.stderr)
        return 130
