"""Backend: what a plugin registers for one ``prefix::`` of ``make_vector_env``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vecrl.torch_wrapper import TorchWrapper

_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")


@dataclass(frozen=True)
class Backend:
    """A backend: the ``prefix`` it serves in ``"prefix::name"``, and ``make``, which builds the env.

    ``make(env_name, *, num_envs=None, force_classic_api=False, discrete_to_continuous_act=False,
    clip_actions=False, **kwargs)`` returns a ``vecrl.TorchWrapper``.

    Examples:
        >>> Backend(prefix="toy", make=lambda name, **kw: None, description="Toy envs").prefix
        'toy'
    """

    prefix: str
    make: Callable[..., TorchWrapper]
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, str) or not _PREFIX.match(self.prefix):
            raise ValueError(
                f"Backend prefix {self.prefix!r} is not valid: expected a name made of letters, digits, '_' or"
                " '-', starting with a letter (for example 'gym' or 'my_sim'), and without '::'."
            )
        if not callable(self.make):
            raise TypeError(
                f"Backend {self.prefix!r}: make must be callable (a function building the env), got {self.make!r}."
            )
