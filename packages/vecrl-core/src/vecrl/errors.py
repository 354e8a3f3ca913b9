"""The base of vecrl's own errors (a module of its own: importing it imports nothing heavy)."""

from __future__ import annotations


class VecrlError(Exception):
    """The base of the errors vecrl raises itself (not those of the libraries it wraps), so that ``except
    vecrl.VecrlError`` catches them all. Each is also the built-in type it has always been: ``SubEnvError``,
    ``vecrl_policy.WorkerError`` and ``vecrl_ray.EvaluationError`` are RuntimeErrors,
    ``vecrl_policy.NetParsingError`` a ValueError, ``vecrl.command.CommandError`` a plain Exception.

    Examples:
        >>> from vecrl.checks import SubEnvError
        >>> issubclass(SubEnvError, VecrlError), issubclass(SubEnvError, RuntimeError)
        (True, True)
    """
