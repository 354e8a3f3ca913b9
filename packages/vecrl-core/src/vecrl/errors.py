"""The base of vecrl's own errors (a module of its own: importing it imports nothing heavy)."""

from __future__ import annotations


class VecrlError(Exception):
    """The base of the errors vecrl raises itself (not those of the libraries it wraps), so that ``except
    vecrl.VecrlError`` catches them all. Each is also the built-in type it has always been: ``SubEnvError``,
    ``vecrl_evaluate.WorkerError`` and ``vecrl_ray.EvaluationError`` are RuntimeErrors,
    ``vecrl_policy.NetParsingError`` and ``UnknownEnvError`` ValueErrors, ``UnknownKeywordError`` a
    TypeError, ``vecrl.command.CommandError`` a plain Exception.

    Examples:
        >>> from vecrl.checks import SubEnvError
        >>> issubclass(SubEnvError, VecrlError), issubclass(SubEnvError, RuntimeError)
        (True, True)
    """


class UnknownEnvError(VecrlError, ValueError):
    """An env name its backend does not know, on every backend alike (gym, brax, envpool, playground), with
    the closest names it knows. A ValueError.

    Examples:
        >>> import vecrl
        >>> vecrl.make_vector_env("gym::Cartpole-v1", num_envs=2)  # doctest: +SKIP
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownEnvError: gymnasium has no environment 'Cartpole-v1'. Did you mean 'CartPole-v1'? ...
    """


class UnknownKeywordError(VecrlError, TypeError):
    """A keyword of ``make_vector_env`` that is a near miss of one of vecrl's own (``num_env=8`` for
    ``num_envs``), or one of vecrl's own that the chosen backend does not take (``device=`` on brax),
    refused before it reaches the env's constructor. A TypeError, as Python's own for an unexpected
    keyword argument.

    Examples:
        >>> import vecrl
        >>> vecrl.make_vector_env("gym::CartPole-v1", num_env=8)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownKeywordError: make_vector_env('gym::CartPole-v1') got num_env=8, which is no option of vecrl's. Did you mean 'num_envs'? ...
    """


class BackendCheckError(VecrlError, AssertionError):
    """A backend broke the vecrl contract; the message says which check and what was seen."""
