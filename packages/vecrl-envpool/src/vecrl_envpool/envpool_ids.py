"""envpool itself, imported with an install hint, and its env ids, checked with a "did you mean"."""

from __future__ import annotations

import difflib
from types import ModuleType

from vecrl.errors import UnknownEnvError

#: How to get envpool: its wheels cover Linux x86_64 and aarch64 (CPython 3.11 to 3.13 for 1.2.x).
INSTALL_HINT = "pip install envpool (wheels for Linux on x86_64 and aarch64), or reinstall vecrl-envpool"


def import_envpool() -> ModuleType:
    """The ``envpool`` module; an ImportError saying how to install it when it is missing.

    Examples:
        >>> import_envpool().__name__
        'envpool'
    """
    try:
        import envpool
    except ImportError as error:
        raise ImportError(
            f"The 'envpool::' backend needs the envpool package, which cannot be imported ({error}). Install"
            f" it: {INSTALL_HINT}."
        ) from error
    return envpool


def checked_env_id(envpool: ModuleType, env_id: str) -> str:
    """``env_id`` if envpool has it; else an UnknownEnvError with the closest ids and how to list them all.

    Examples:
        >>> checked_env_id(import_envpool(), "CartPole-v1")
        'CartPole-v1'
        >>> checked_env_id(import_envpool(), "Cartpole-v1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownEnvError: envpool has no environment 'Cartpole-v1'. Did you mean 'CartPole-v1'? ...
    """
    known = list(envpool.list_all_envs())
    if env_id in known:
        return env_id
    close = difflib.get_close_matches(env_id, known, n=6, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}? The closest ids: {', '.join(close)}." if close else ""
    raise UnknownEnvError(
        f"envpool has no environment {env_id!r}.{hint} envpool {envpool.__version__} has {len(known)}"
        " environments (classic control, MuJoCo such as Hopper-v5, Atari such as Pong-v5, and more); list"
        " them with: python -c \"import envpool; print('\\n'.join(envpool.list_all_envs()))\""
    )
