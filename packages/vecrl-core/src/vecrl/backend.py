"""Backend: what a plugin registers for one ``prefix::`` of ``make_vector_env``, and which of vecrl's
keywords its ``make`` takes."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from vecrl.checks import check_refused_keywords

_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_IMPORT_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")

#: The keywords every backend takes: ``make_vector_env`` passes ``num_envs`` to the backend's ``make`` and
#: applies the others (``TorchWrapper``'s options) to what it returns.
COMMON_KEYWORDS = ("num_envs", "force_classic_api", "discrete_to_continuous_act", "clip_actions", "dtype")
OPTIONAL_KEYWORDS = (
    "autoreset_mode",
    "batch_size",
    "device",
    "empty_info",
    "episode_length",
    "num_episodes",
    "num_workers",
    "observation_mode",
    "render_mode",
    "seed_rule",
    "wrappers",
)
"""vecrl's keywords that a backend takes or not (``Backend.keywords`` says which); each means the same on
every backend that takes it."""


@dataclass(frozen=True)
class Backend:
    """A backend: the ``prefix`` it serves in ``"prefix::name"``, and ``make``, which builds the env: the
    function, or where to import it from as ``"package.module:function"`` (imported on the first env made,
    so that a plugin module that names it imports nothing heavy when vecrl lists the backends).

    ``make(env_name, *, num_envs=None, **kwargs)`` returns a ``gymnasium.vector.VectorEnv`` of ``num_envs``
    sub-envs (a ``gymnasium.Env`` for ``num_envs=None``) whose results are numpy, torch or jax arrays;
    ``make_vector_env`` makes it speak torch (a ``TorchWrapper``) and applies ``force_classic_api``,
    ``discrete_to_continuous_act``, ``clip_actions``, ``vector_wrappers`` and ``array_type``, the same way
    for every backend. (A ``make`` written to the contract before, which takes those three options and
    returns a ``TorchWrapper``, keeps working.) ``keywords`` names which of vecrl's ``OPTIONAL_KEYWORDS`` it
    takes (``autoreset_mode``, ``num_episodes``, ``device``, ...): ``make_vector_env`` refuses the others
    with an ``UnknownKeywordError`` naming the backend, with the reason ``refusals`` gives for it, before
    ``make`` is called. Without ``keywords`` every keyword reaches ``make``. ``check_name(name)`` (the
    function or its import path), where given, raises the error ``make`` would raise for a name the backend
    does not serve, at once: the ``vecrl`` command calls it before importing torch or making anything.
    ``whole_population``: its envs step every sub-env in one compiled program, so a population runs on one
    sub-env per row where no ``num_envs`` is given (the jax engines); a host backend's default is capped
    (``vecrl_evaluate.options.default_num_envs``).

    Examples:
        >>> toy = Backend("toy", make=lambda name, **kw: None, keywords={"num_episodes"},
        ...               refusals={"device": "toy envs compute on the CPU"})
        >>> toy.check_keywords("make_vector_env('toy::x')", {"device": "cuda"})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        vecrl.errors.UnknownKeywordError: make_vector_env('toy::x') got device='cuda', which the toy backend does not take: toy envs compute on the CPU. Of vecrl's keywords it takes num_episodes (...).
    """

    prefix: str
    make: Callable[..., Any] | str
    description: str = ""
    keywords: Collection[str] | None = None
    refusals: Mapping[str, str] = field(default_factory=dict, compare=False)
    check_name: Callable[[str], object] | str | None = None
    whole_population: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, str) or not _PREFIX.match(self.prefix):
            raise ValueError(
                f"Backend prefix {self.prefix!r} is not valid: expected a name made of letters, digits, '_' or"
                " '-', starting with a letter (for example 'gym' or 'my_sim'), and without '::'."
            )
        for what, value in (("make", self.make), ("check_name", self.check_name)):
            if isinstance(value, str):
                if not _IMPORT_PATH.match(value):
                    raise ValueError(
                        f"Backend {self.prefix!r}: {what}={value!r} is no import path; write it as"
                        " 'package.module:function' (e.g. 'vecrl_gym.make:make_gym_vector_env')."
                    )
            elif not callable(value) and (what == "make" or value is not None):
                raise TypeError(
                    f"Backend {self.prefix!r}: {what} must be callable or its import path"
                    f" 'package.module:function', got {value!r}."
                )
        if self.keywords is not None:
            if isinstance(self.keywords, str):
                raise TypeError(
                    f"Backend {self.prefix!r}: keywords must be a collection of keyword names, got the str"
                    f" {self.keywords!r}; write ({self.keywords!r},)."
                )
            object.__setattr__(self, "keywords", frozenset(self.keywords))
        for what, names in (("keywords", self.keywords or ()), ("refusals", self.refusals)):
            unknown = sorted(set(names) - set(OPTIONAL_KEYWORDS))
            if unknown:
                raise ValueError(
                    f"Backend {self.prefix!r}: {what} names {unknown}, which are not vecrl's optional keywords;"
                    f" those are {', '.join(OPTIONAL_KEYWORDS)} (any other keyword reaches make as it is)."
                )

    def make_function(self) -> Callable[..., Any]:
        """``make`` as a function, imported where it was given as ``"package.module:function"``; an
        ImportError naming the backend where that import fails.

        Examples:
            >>> Backend("toy", make="os.path:join").make_function()("a", "b")
            'a/b'
        """
        return self._imported("make", self.make)

    def check_env_name(self, name: str) -> None:
        """Raise the error ``make`` would raise for ``name`` where the backend can tell at once (its
        ``check_name``); nothing otherwise.

        Examples:
            >>> Backend("toy", make="os.path:join", check_name="os.path:basename").check_env_name("x")
        """
        if self.check_name is not None:
            self._imported("check_name", self.check_name)(name)

    def _imported(self, what: str, value: Callable[..., Any] | str) -> Callable[..., Any]:
        if not isinstance(value, str):
            return value
        module, _, name = value.partition(":")
        try:
            function = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as error:
            raise ImportError(
                f"The {self.prefix} backend's {what}, {value!r}, could not be imported: {error}. Reinstall the"
                f" package that provides the backend, or fix its plugin's Backend({what}=...)."
            ) from error
        if not callable(function):
            raise TypeError(f"The {self.prefix} backend's {what}, {value!r}, is {function!r}: not callable.")
        return function

    def check_keywords(self, call: str, given: Mapping[str, Any]) -> None:
        """An ``UnknownKeywordError`` if ``given``, the keywords of ``call`` (``"make_vector_env('toy::x')"``),
        holds one of vecrl's optional keywords that this backend does not take (none is refused when the
        backend declares no ``keywords``)."""
        if self.keywords is None:
            return
        refused = {key: self.refusals.get(key, "") for key in OPTIONAL_KEYWORDS if key not in self.keywords}
        takes = ", ".join(k for k in OPTIONAL_KEYWORDS if k in self.keywords) or "none"
        common = ", ".join(COMMON_KEYWORDS)
        then = f" Of vecrl's keywords it takes {takes} (and those of every backend: {common})."
        check_refused_keywords(call, given, refused, taker=f"the {self.prefix} backend", then=then)
