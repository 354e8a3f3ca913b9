"""Checks every backend makes of what it is given, and the errors of an env that cannot step.

One home for each rule: an option that must be a bool, a number of sub-envs, keywords a backend sets
itself, a device that must exist, a batch that must fit in memory, the "did you mean" hint of an unknown
name, and the errors of a closed env and of a sub-env that raised.

Examples:
    >>> checked_flag(True, "empty_info")
    True
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral
from typing import TYPE_CHECKING, Any

import numpy as np

from vecrl.errors import UnknownEnvError, UnknownKeywordError, VecrlError

if TYPE_CHECKING:
    import torch


class SubEnvError(VecrlError, RuntimeError):
    """A sub-environment raised while the vector env was stepping or resetting it.

    ``index`` names the sub-env and ``during`` what it was doing; the original exception is chained as
    ``__cause__``. The other sub-envs may have stepped already, so the env refuses ``step()`` until
    ``reset()``. In ``vecrl_evaluate.evaluate``, ``row`` names the population row the sub-env ran (the
    sub-env may be one of a worker's env).

    Examples:
        >>> error = SubEnvError(3, "step()", ValueError("bad action"))
        >>> error.index, str(error).split(":")[0]
        (3, 'Sub-env 3 raised ValueError in step()')
        >>> str(SubEnvError(1, "step()", ValueError("bad"), row=9)).split(":")[0]
        'Population row 9 (on sub-env 1 of the env running it) raised ValueError in step()'
    """

    def __init__(self, index: int, during: str, error: BaseException, *, row: int | None = None) -> None:
        self.index, self.during, self.row = index, during, row
        who = (
            f"Sub-env {index}"
            if row is None
            else f"Population row {row} (on sub-env {index} of the env running it)"
        )
        super().__init__(
            f"{who} raised {type(error).__qualname__} in {during}: {error}. The other sub-envs may"
            " have moved on already, so the batch is out of step: this env refuses step() until reset()."
        )

    def with_row(self, row: int) -> SubEnvError:
        """This error naming the population row ``row``, its cause kept."""
        cause = self.__cause__ if isinstance(self.__cause__, BaseException) else RuntimeError(str(self))
        error = SubEnvError(self.index, self.during, cause, row=row)
        error.__cause__ = cause
        return error

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its message (an exception from another process, a Ray actor's, comes this way)."""
        return _sub_env_error, (self.index, self.during, self.args[0], self.row)


def _sub_env_error(index: int, during: str, message: str, row: int | None = None) -> SubEnvError:
    error = SubEnvError.__new__(SubEnvError)
    RuntimeError.__init__(error, message)
    error.index, error.during, error.row = index, during, row
    return error


def failed_env_error(reason: str) -> RuntimeError:
    """The error of ``step()`` on an env that an earlier error left half-applied.

    Examples:
        >>> str(failed_env_error("sub-env 2 raised")).split(";")[0]
        'step() refused: sub-env 2 raised'
    """
    return RuntimeError(
        f"step() refused: {reason}; the sub-envs are out of step. Call reset() (without a reset_mask) to"
        " start every sub-env again."
    )


def closed_env_error(method: str, env: object) -> RuntimeError:
    """The error of ``step()`` or ``reset()`` on a closed env.

    Examples:
        >>> str(closed_env_error("step", "env")).split(".")[0]
        "step() was called on 'env', which is closed"
    """
    return RuntimeError(
        f"{method}() was called on {env!r}, which is closed. A closed env has released its sub-envs;"
        " make a new one (vecrl.make_vector_env(...))."
    )


def checked_flag(value: Any, name: str) -> bool:
    """``value`` if it is a bool (numpy's too); a TypeError otherwise, so that ``"no"`` is never True.

    Examples:
        >>> checked_flag("no", "empty_info")
        Traceback (most recent call last):
        ...
        TypeError: empty_info must be True or False, but got 'no' (a str).
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, but got {value!r} (a {type(value).__qualname__}).")


def checked_num_envs(num_envs: Any) -> int:
    """``num_envs`` as an int if it is a positive int; a ValueError otherwise.

    Examples:
        >>> checked_num_envs(0)
        Traceback (most recent call last):
        ...
        ValueError: num_envs must be a positive int (the number of sub-envs), but got 0.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, Integral) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive int (the number of sub-envs), but got {num_envs!r}.")
    return int(num_envs)


def checked_batch_size(batch_size: Any, num_envs: int) -> int:
    """``batch_size``, the sub-envs an env with async batches hands out at a time (``recv()``), if it is an int
    that divides ``num_envs`` (a step of every sub-env, ``step()``, is then whole batches); else a ValueError
    saying which would.

    Examples:
        >>> checked_batch_size(4, 8)
        4
    """
    size = int(batch_size) if isinstance(batch_size, Integral) and not isinstance(batch_size, bool) else 0
    if not 1 <= size <= num_envs or num_envs % size:
        fitting = [k for k in range(1, num_envs + 1) if num_envs % k == 0]
        raise ValueError(
            f"batch_size must be an int that divides num_envs={num_envs} (recv() returns the sub-envs in"
            f" batches of batch_size, and step() steps them all), but got {batch_size!r}. Sizes that fit:"
            f" {', '.join(map(str, fitting))}."
        )
    return size


def checked_seed(seed: Any) -> int | None:
    """``seed`` as an int if it is None or an int >= 0; a ValueError otherwise (a bool or a string is not a
    seed).

    Examples:
        >>> checked_seed("3")
        Traceback (most recent call last):
        ...
        ValueError: seed must be None or an int >= 0, got '3'.
    """
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}.")
    return int(seed)


def check_refused_keywords(
    call: str, given: Mapping[str, Any], refusals: Mapping[str, str], taker: str = "it", then: str = ""
) -> None:
    """The one way vecrl refuses a keyword: an ``UnknownKeywordError`` (a TypeError, as Python's own for an
    unexpected keyword) for the first keyword of ``given``, the keywords of ``call``, that ``refusals`` maps
    to why (and what to give instead; "" for no reason), before anything is built. ``taker`` names who
    refuses it, ``then`` ends the message. A backend's refusals (``Backend.check_keywords``) and an env
    class's (``reserved_kwargs``, for keywords it sets itself) both go through here.

    Examples:
        >>> check_refused_keywords("Env(...)", {"batch_size": 4}, {"batch_size": "give num_envs= instead"})
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownKeywordError: Env(...) got batch_size=4, which it does not take: give num_envs= instead.
    """
    for key, value in given.items():
        if key in refusals:
            reason = refusals[key]
            raise UnknownKeywordError(
                f"{call} got {key}={value!r}, which {taker} does not take{': ' + reason if reason else ''}.{then}"
            )


def listed(items: Sequence[Any], limit: int = 8) -> str:
    """``items`` for an error message: the first ``limit`` of them, and how many there are when more.

    Examples:
        >>> listed([3, 5]), listed(range(10), limit=2)
        ('3, 5', '0, 1, ... (10 in all)')
    """
    items = list(items)
    shown = ", ".join(map(str, items[:limit]))
    return shown if len(items) <= limit else f"{shown}, ... ({len(items)} in all)"


def did_you_mean(name: str, known: Iterable[str], prefix: str = "") -> str:
    """``" Did you mean 'CLOSEST'?"`` for the name in ``known`` closest to ``name`` (written after ``prefix``),
    or ``""`` when none is close: the hint an error about an unknown name ends its sentence with. A name
    that differs only in case is the closest (``Relu`` is ``ReLU``), then names close as written, then
    names close in lower case.

    Examples:
        >>> did_you_mean("Cartpole-v1", ["CartPole-v1", "Pendulum-v1"])
        " Did you mean 'CartPole-v1'?"
        >>> did_you_mean("Relu", ["ReLU", "Tanh"]), did_you_mean("halfcheeta", ["HalfCheetah-v5"])
        (" Did you mean 'ReLU'?", " Did you mean 'HalfCheetah-v5'?")
    """
    known = list(known)
    lower: dict[str, str] = {}
    for candidate in known:
        lower.setdefault(candidate.lower(), candidate)
    close = (
        [lower[name.lower()]]
        if name.lower() in lower
        else difflib.get_close_matches(name, known, n=1)
        or [lower[match] for match in difflib.get_close_matches(name.lower(), list(lower), n=1)]
    )
    return f" Did you mean {prefix + close[0]!r}?" if close else ""


def checked_env_name(env_name: str, known: Sequence[str], library: str) -> str:
    """``env_name`` if it is one of ``known``, the envs ``library`` registers; else an UnknownEnvError with a
    close match and the list.

    Examples:
        >>> checked_env_name("CartPole-v2", ["CartPole-v1", "Pendulum-v1"], "gymnax")
        Traceback (most recent call last):
        vecrl.errors.UnknownEnvError: gymnax has no environment 'CartPole-v2'. Did you mean 'CartPole-v1'? Its environments: CartPole-v1, Pendulum-v1.
    """
    if env_name in known:
        return env_name
    raise UnknownEnvError(
        f"{library} has no environment {env_name!r}.{did_you_mean(env_name, known)} Its environments:"
        f" {', '.join(known)}."
    )


def names_in_source(location: str, variable: str) -> list[str] | None:
    """The string keys (or items) of the dict (or list, tuple) literal assigned to ``variable`` in the module
    file ``location`` (``"package/sub/module.py"``), read without importing the package: what a library
    registers, known at once; None where the file or the literal is not there (a version that registers
    otherwise: the library's own check then answers).

    Examples:
        >>> names_in_source("json/__init__.py", "__all__")
        ['dump', 'dumps', 'load', 'loads', 'JSONDecoder', 'JSONDecodeError', 'JSONEncoder']
    """
    import ast
    import importlib.util
    from pathlib import Path

    top, _, rest = location.partition("/")
    spec = importlib.util.find_spec(top)  # (a top-level package is found, not imported)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / rest
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(target, ast.Name) and target.id == variable for target in targets):
            continue
        items = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", None)
        if items and all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
            return [i.value for i in items]  # type: ignore[union-attr]
    return None


def checked_callables(values: Sequence[Any], name: str, hint: str) -> tuple[Any, ...]:
    """``values`` as a tuple once every item is callable; else a TypeError naming the first that is not,
    with ``hint`` (what to give instead) after it. Checked before any is called, so none is half-applied.

    Examples:
        >>> checked_callables([len, 3], "wrappers", "Give functions.")
        Traceback (most recent call last):
        TypeError: wrappers[1] is 3, which is not callable. Give functions.
    """
    for index, value in enumerate(values):
        if not callable(value):
            raise TypeError(f"{name}[{index}] is {value!r}, which is not callable. {hint}")
    return tuple(values)


def checked_device(device: Any) -> torch.device:
    """``device`` as a ``torch.device`` that this torch can allocate on; a ValueError otherwise.

    Examples:
        >>> checked_device("cpu")
        device(type='cpu')
    """
    import torch  # (here: the `vecrl` command imports this module, and answers without torch)

    try:
        result = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(
            f"device={device!r} is not a torch device: {error}. Use e.g. 'cpu' or 'cuda:0'."
        ) from None
    try:
        torch.empty(0, device=result)
    except (RuntimeError, AssertionError) as error:
        cuda = "available" if torch.cuda.is_available() else "not available"
        raise ValueError(
            f"device={device!r} cannot be used by this torch {torch.__version__} (CUDA {cuda}):"
            f" {str(error).rstrip('.')}. Use device='cpu', or install a torch build for that device."
        ) from None
    return result


def check_fits_in_memory(what: str, num_envs: int, bytes_per_env: int) -> None:
    """Raise a MemoryError naming the size needed when ``num_envs * bytes_per_env`` exceeds the memory
    this machine has available, before anything that large is allocated.

    Examples:
        >>> check_fits_in_memory("CartPole-v1", 8, 1_000)
    """
    available = available_memory()
    needed = num_envs * bytes_per_env
    if available is not None and needed > available:
        raise MemoryError(
            f"{what} with num_envs={num_envs:,} would need about {_size(needed)} ({_size(bytes_per_env)} per"
            f" sub-env), but this machine has {_size(available)} available. Use fewer sub-envs, e.g."
            f" num_envs={max(1, available // max(bytes_per_env, 1) // 2):,}, and evaluate a large population in"
            " chunks (vecrl_evaluate.evaluate does this)."
        )


def available_memory() -> int | None:
    """Bytes of memory available to allocate now (Linux's MemAvailable; else the physical memory), or
    None where neither can be read."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _size(num_bytes: int) -> str:
    value, unit = float(num_bytes), "B"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, larger
    return f"{value:,.1f} {unit}"
