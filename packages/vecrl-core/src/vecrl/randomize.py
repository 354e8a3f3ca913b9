"""Domain randomization: the per-sub-env parameters (``vecrl.params``) each row of a population evaluation
runs its episodes with, drawn from that row's seed and episode alone.

A sampler is a plain function ``(generator, defaults) -> params``: ``generator`` a ``numpy.random.Generator``
seeded by ``(row seed, episode)``, ``defaults`` the env's ``default_params``, and ``params`` a mapping of some
of those names to one sub-env's values (the others keep their defaults). ``scale`` makes the common one.
``params_table`` draws them for a whole population, once, before anything runs: every path (this process,
worker processes, Ray, the fused jax program) reads the same table, so a row's parameters never depend
on where it runs.

Examples:
    >>> import numpy as np
    >>> sampler = scale({"gravity": (0.5, 1.5)})
    >>> table = params_table(sampler, {"gravity": np.array(9.8)}, [7, 8], num_episodes=3, owner="Env")
    >>> table["gravity"].shape, bool((table["gravity"] >= 4.9).all() and (table["gravity"] <= 14.7).all())
    ((2, 3), True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vecrl.arrays import convert_to_numpy
from vecrl.checks import did_you_mean
from vecrl.params import checked_params, with_defaults

#: A sampler: ``(generator, defaults) -> params`` for one episode of one row.
Sampler = Callable[[np.random.Generator, Mapping[str, np.ndarray]], Mapping[str, Any]]

# Mixed into every generator's seed, so that the parameters' stream is none of a row's other streams.
_STREAM = 0x7A3D


@dataclass(frozen=True)
class scale:
    """The sampler that multiplies each named parameter's default, element by element, by factors drawn
    uniformly from ``ranges[name] = (low, high)``.

    Examples:
        >>> import numpy as np
        >>> params = scale({"body_mass": (2.0, 2.0)})(np.random.default_rng(0), {"body_mass": np.ones(2)})
        >>> params["body_mass"].tolist()
        [2.0, 2.0]
    """

    ranges: Mapping[str, tuple[float, float]]

    def __post_init__(self) -> None:
        if not isinstance(self.ranges, Mapping) or not self.ranges:
            raise TypeError(f"scale() takes a dict of name -> (low, high), got {self.ranges!r}.")
        for name, bounds in self.ranges.items():
            low, high = _bounds(name, bounds)
            if not (math.isfinite(low) and math.isfinite(high)) or low > high:
                raise ValueError(
                    f"scale()'s range for {name!r} must be finite with low <= high, got {bounds!r}."
                )
        object.__setattr__(self, "ranges", {name: _bounds(name, b) for name, b in self.ranges.items()})

    def __call__(self, generator: np.random.Generator, defaults: Mapping[str, np.ndarray]) -> dict[str, Any]:
        params = {}
        for name, (low, high) in self.ranges.items():
            if name not in defaults:
                raise ValueError(
                    f"scale() names {name!r}, which the env does not let vary; its parameters are"
                    f" {', '.join(defaults)}." + did_you_mean(name, defaults)
                )
            default = np.asarray(defaults[name])
            params[name] = default * generator.uniform(low, high, size=default.shape)
        return params


def params_table(
    randomize: Sampler | Mapping[str, Any],
    defaults: Mapping[str, np.ndarray],
    row_seeds: Sequence[int] | np.ndarray,
    num_episodes: int,
    owner: str,
) -> dict[str, np.ndarray]:
    """Every parameter for each row's every episode, ``(len(row_seeds), num_episodes, *shape)`` per name.

    ``randomize`` is a sampler, called for row ``r``'s episode ``e`` with a generator seeded by
    ``(row_seeds[r], e)`` alone; or fixed parameters per row (name -> array of shape ``(rows, *shape)``), the
    same for each of a row's episodes. The values pass ``vecrl.params.checked_params`` (``owner``: the env's
    name, for its errors) before the table is returned; an env without params is a NotImplementedError.
    """
    if not defaults:
        raise NotImplementedError(
            f"{owner} lets no parameter vary per sub-env (its default_params is empty), so there is nothing to"
            " randomize: use a backend that does (gym's MuJoCo and classic-control envs, brax, playground, gymnax)."
        )
    num_rows = len(row_seeds)
    if callable(randomize):
        drawn = [
            randomize(np.random.default_rng([_STREAM, int(seed), episode]), defaults)
            for seed in row_seeds
            for episode in range(num_episodes)
        ]
        if not all(isinstance(params, Mapping) for params in drawn):
            wrong = next(params for params in drawn if not isinstance(params, Mapping))
            raise TypeError(
                f"A randomize sampler must return a dict of parameter names to values, got {type(wrong).__qualname__}."
            )
        names = sorted({name for params in drawn for name in params})
        _refuse_unknown(names, defaults, owner)
        given = {name: np.stack([np.asarray(p.get(name, defaults[name])) for p in drawn]) for name in names}
    elif isinstance(randomize, Mapping):
        _refuse_unknown(list(randomize), defaults, owner)
        given = {}
        for name, value in randomize.items():
            array = convert_to_numpy(value)
            if array.shape != (num_rows, *defaults[name].shape):
                raise ValueError(
                    f"randomize[{name!r}] must have shape {(num_rows, *defaults[name].shape)} (the parameter for each"
                    f" of the {num_rows} rows, used for each of its episodes), got {array.shape}."
                )
            given[name] = np.repeat(array, num_episodes, axis=0)
    else:
        raise TypeError(
            "randomize must be a sampler (a function (generator, default_params) -> params, such as"
            " vecrl.randomize.scale({'body_mass': (0.8, 1.2)})) or fixed params per row (a dict of name -> array"
            f" with a row each), got {type(randomize).__qualname__}."
        )
    size = num_rows * num_episodes
    checked = with_defaults(checked_params(given, defaults, size, owner), defaults, size)
    return {name: value.reshape(num_rows, num_episodes, *value.shape[1:]) for name, value in checked.items()}


def _refuse_unknown(names: Sequence[str], defaults: Mapping[str, np.ndarray], owner: str) -> None:
    """The error of ``checked_params`` for the first of ``names`` the env does not declare, if any."""
    for name in names:
        if name not in defaults:
            checked_params({name: 0.0}, defaults, 1, owner)


def _bounds(name: str, bounds: Any) -> tuple[float, float]:
    try:
        low, high = bounds
        return float(low), float(high)
    except (TypeError, ValueError):
        raise TypeError(f"scale()'s range for {name!r} must be (low, high), got {bounds!r}.") from None
