"""Measures: named quantities of each row's rollouts besides its return (``evaluate(measures=...)``), the
behaviour descriptors of quality-diversity search and the extra scores of multi-objective search.

A measure reads one value per sub-env at every step a row counts (the steps its return counts) and reduces
them over each episode (``sum``, ``mean``, ``last``, ``max``, ``min``), then over the row's episodes (their
mean). Its value at a step is

- a key of the step's info (``"x_velocity"``: gymnasium MuJoCo, envpool) or of a jax env's outcome info
  (brax's and Playground's ``metrics``, a gymnax ``info`` key): the value that step reported, or
- a function ``f(observation, action, reward)`` of the step's batch: the flat observation the policy acted
  on (before ``obs_norm``), the action the env was given and the env's own reward, one row per sub-env,
  returning one number per row. Written with array operators and methods only (``observation[:, 0]``,
  ``(action ** 2).sum(-1)``), it runs on torch in the stepped loop and on jax inside the fused program,
  as ``vecrl_evaluate.shaping.Shaping.shaped`` does; one that calls torch itself runs stepped (the fused
  path says why it cannot).

The rules are written once over an array namespace (``accumulated``, ``ended``), so both drivers of the
rollout (``vecrl_evaluate.row_loop`` and ``vecrl_evaluate.fused``) and so every path give the same numbers.

Examples:
    >>> import torch
    >>> measures = Measures.checked({"speed": "x_velocity", "height": Measure(lambda o, a, r: o[:, 0], "last")})
    >>> measures.names
    ('speed', 'height')
    >>> state = measures.start(torch, 2, torch.float64)
    >>> state = measures.accumulated(state, torch.tensor([[1.0, 5.0], [3.0, 6.0]]), torch.tensor([True, True]))
    >>> state = measures.accumulated(state, torch.tensor([[3.0, 7.0], [9.0, 8.0]]), torch.tensor([True, False]))
    >>> measures.episode_values(state).tolist()
    [[2.0, 7.0], [3.0, 6.0]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch

from vecrl.arrays import array_namespace
from vecrl.checks import listed
from vecrl.compat import FINAL_INFO_KEY, FINAL_INFOS_BATCHED_ONCE
from vecrl_evaluate.reductions import REDUCTIONS

_INTEGERS = (torch.bool, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


@dataclass(frozen=True)
class Measure:
    """One measure: ``source`` (an info key, or a function ``f(observation, action, reward)`` giving one
    number per row; the module says which values each reads) and ``per_episode``, how an episode's values
    become one (``"sum"``, ``"mean"``, ``"last"``, ``"max"`` or ``"min"``). A row's measure is the mean of
    its episodes'.

    Examples:
        >>> Measure("x_velocity", "max")
        Measure(source='x_velocity', per_episode='max')
        >>> Measure("x_velocity", "median")
        Traceback (most recent call last):
        ...
        ValueError: Measure('x_velocity', per_episode='median'): per_episode must be one of 'sum', 'mean', 'last', 'max', 'min'.
    """

    source: str | Callable[[Any, Any, Any], Any]
    per_episode: str = "mean"

    def __post_init__(self) -> None:
        if not (isinstance(self.source, str) and self.source) and not callable(self.source):
            raise TypeError(
                f"A measure's source is an info key (a non-empty str, such as 'x_velocity') or a function"
                f" f(observation, action, reward) giving one number per row; got {self.source!r}."
            )
        if self.per_episode not in REDUCTIONS:
            raise ValueError(
                f"Measure({self.source!r}, per_episode={self.per_episode!r}): per_episode must be one of"
                f" {', '.join(map(repr, REDUCTIONS))}."
            )

    @property
    def key(self) -> str | None:
        """The info key this measure reads, or None for a function."""
        return self.source if isinstance(self.source, str) else None


class MeasureState(NamedTuple):
    """Each slot's measures of its current episode so far (``values``, one column a measure, of the array
    type the loop runs on) and the steps they counted (``steps``)."""

    values: Any
    steps: Any


@dataclass(frozen=True)
class Measures:
    """The measures of one ``evaluate`` call, by name, checked (hashable: the fused program's cache keys on it)."""

    names: tuple[str, ...]
    items: tuple[Measure, ...]

    @classmethod
    def checked(cls, measures: Any) -> Measures | None:
        """``measures`` (name -> an info key, a function, a ``(source, per_episode)`` pair or a ``Measure``)
        checked; None for none. A TypeError or ValueError names the first that does not fit."""
        if measures is None:
            return None
        if isinstance(measures, Measures):
            return measures
        if not isinstance(measures, Mapping):
            raise TypeError(
                f"measures must be a dict of name -> measure (an info key such as 'x_velocity', a function"
                f" f(observation, action, reward), or vecrl_evaluate.Measure(source, per_episode)); got"
                f" {type(measures).__qualname__}."
            )
        names, items = [], []
        for name, given in measures.items():
            if not isinstance(name, str) or not name:
                raise TypeError(f"A measure's name must be a non-empty str, got {name!r}.")
            if isinstance(given, tuple) and len(given) == 2:
                given = Measure(*given)
            elif not isinstance(given, Measure):
                given = Measure(given)
            names.append(name)
            items.append(given)
        return cls(tuple(names), tuple(items)) if names else None

    @property
    def keys(self) -> tuple[str, ...]:
        """The info keys the measures read."""
        return tuple(item.key for item in self.items if item.key is not None)

    def check_functions(self, observation: Any, action: Any, reward: Any) -> None:
        """Call each function measure on a probe batch (``observation``, ``action``, ``reward``, a few rows of
        the shapes and types the loop gives): a ValueError naming the measure where one raises or does not
        give one number per row."""
        rows = len(observation)
        for name, item in zip(self.names, self.items, strict=True):
            if isinstance(item.source, str):
                continue
            try:
                value = item.source(observation, action, reward)
            except Exception as error:
                raise ValueError(
                    f"The measure {name!r} raised on a batch of {rows} observations {tuple(observation.shape)},"
                    f" actions {tuple(action.shape)} and rewards {tuple(reward.shape)}: {type(error).__name__}:"
                    f" {error}. A measure's function takes the step's batch and gives one number per row."
                ) from error
            shape = tuple(getattr(value, "shape", ()))
            dtype = getattr(value, "dtype", None)
            numeric = dtype is not None and _numeric(dtype)
            if shape != (rows,) or not numeric:
                got = f"shape {shape}, dtype {dtype}" if dtype is not None else type(value).__qualname__
                raise ValueError(
                    f"The measure {name!r} gave {got} for a batch of {rows} rows; it must give one number per row"
                    f" (shape ({rows},), a float or int tensor): reduce over the other axes, e.g."
                    " observation[:, 0] or (action ** 2).sum(-1)."
                )

    def values(self, observation: Any, action: Any, reward: Any, info: Mapping[str, Any], dtype: Any) -> Any:
        """The measures' values of one step, ``(sub-envs, measures)`` of ``dtype`` (of the observation's array
        type): each function called on the step's batch, each key read from ``info`` (``step_info_values``
        made it rows of the step's own values)."""
        xp = array_namespace(observation)
        columns = []
        for item in self.items:
            if isinstance(item.source, str):
                column = info[item.source]
            else:
                column = item.source(observation, action, reward)
            if xp is torch:  # (the stepped loop counts on the CPU in float64, as its returns)
                columns.append(torch.as_tensor(column).reshape(-1).to("cpu", dtype))
            else:
                columns.append(xp.reshape(column, (-1,)).astype(dtype))
        return xp.stack(columns, 1)

    def start(self, xp: Any, num_slots: int, dtype: Any) -> MeasureState:
        """No step counted yet, on ``num_slots`` slots (``xp``: the loop's array module)."""
        return MeasureState(
            xp.zeros((num_slots, len(self.names)), dtype=dtype), xp.zeros(num_slots, dtype=xp.int32)
        )

    def accumulated(self, state: MeasureState, values: Any, counting: Any) -> MeasureState:
        """``state`` with one step's ``values`` counted where ``counting`` (a bool per slot)."""
        xp = array_namespace(values)
        so_far, steps = state
        first = (steps == 0)[:, None]
        combined = so_far
        for reduction, combine in (
            ("sum", lambda a, v: a + v),
            ("mean", lambda a, v: a + v),
            ("max", xp.maximum),
            ("min", xp.minimum),
            ("last", lambda a, v: v),
        ):
            column = self._columns(xp, reduction)
            if column is not None:
                combined = xp.where(column, combine(so_far, values), combined)
        combined = xp.where(first, values, combined)
        counting = counting[:, None]
        return MeasureState(xp.where(counting, combined, so_far), steps + counting[:, 0])

    def episode_values(self, state: MeasureState) -> Any:
        """Each slot's episode value of every measure (its mean measures divided by the steps counted)."""
        xp = array_namespace(state.values)
        mean = self._columns(xp, "mean")
        if mean is None:
            return state.values
        steps = xp.where(state.steps > 0, state.steps, 1)[:, None]
        return xp.where(mean, state.values / steps, state.values)

    def ended(self, table: Any, state: MeasureState, cells: Any, ended: Any) -> tuple[Any, MeasureState]:
        """Add the episode values of the slots whose episode ``ended`` to ``table`` (a row per (row, episode)
        cell: ``cells`` is each slot's) and start those slots' next episodes from nothing."""
        from vecrl_evaluate.rollout import add_to_rows

        xp = array_namespace(state.values)
        table = add_to_rows(table, self.episode_values(state), cells, ended)
        blank = ended[:, None]
        return table, MeasureState(xp.where(blank, 0, state.values), xp.where(ended, 0, state.steps))

    def _columns(self, xp: Any, reduction: str) -> Any:
        """A bool per measure, True for those reduced by ``reduction`` (None where none is)."""
        mask = _reduction_masks(self.items).get(reduction)
        if mask is None:
            return None
        return xp.asarray(mask) if xp is not torch else torch.from_numpy(mask)


@functools.lru_cache(maxsize=64)
def _reduction_masks(items: tuple[Measure, ...]) -> dict[str, np.ndarray]:
    """For each reduction some of ``items`` use, a bool per item: whether it uses it (made once per set of
    measures: the stepped loop asks every step)."""
    reductions = {item.per_episode for item in items}
    return {r: np.array([item.per_episode == r for item in items]) for r in reductions}


def _numeric(dtype: Any) -> bool:
    """Whether ``dtype`` (torch's, numpy's or jax's) holds floats or ints."""
    if isinstance(dtype, torch.dtype):
        return dtype.is_floating_point or dtype in _INTEGERS
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:
        return False


def step_info_values(
    info: Mapping[str, Any], keys: tuple[str, ...], ended: Any, num_envs: int
) -> dict[str, Any]:
    """The values of ``keys`` each sub-env's step reported, as float64 torch tensors: ``info``'s, and for a
    sub-env whose episode ``ended`` at a same_step step (a restart replaced its row of ``info``), its final
    info's (``vecrl.final_observations``); a ValueError naming the keys the env reports where one is not there."""
    from vecrl.arrays import convert_to_numpy

    finals = info.get(FINAL_INFO_KEY)
    values = {}
    for key in keys:
        if key not in info and not (isinstance(finals, Mapping) and key in finals):
            # (evaluate's plan found the key in a first step's info: this step lacks it)
            raise ValueError(
                f"The measure reads the info key {key!r}, which this env reports on some steps only (this step's"
                f" info lacks it); a measure's key must be in every step's info. Report it on every step, or"
                " measure a function f(observation, action, reward)."
            )
        raw = convert_to_numpy(info[key]) if key in info else np.zeros(num_envs)
        try:
            value = np.array(raw, dtype=np.float64)
        except (TypeError, ValueError):
            shown = listed([repr(v) for v in np.ravel(raw)], 2)
            raise ValueError(
                f"The info key {key!r} holds {np.asarray(raw).dtype} values ({shown}), not numbers; a measure takes"
                " one number per sub-env."
            ) from None
        if value.shape != (num_envs,):
            raise not_one_number_error(key, value.shape[1:])
        if finals is not None:
            if FINAL_INFOS_BATCHED_ONCE and isinstance(finals, Mapping):
                if key in finals:
                    mask = convert_to_numpy(finals.get(f"_{key}", ended)).astype(bool)
                    value[mask] = convert_to_numpy(finals[key])[mask]
            else:  # gymnasium 0.29: an object array of the ended sub-envs' info dicts
                for index, final in enumerate(finals):
                    if isinstance(final, Mapping) and key in final:
                        value[index] = float(final[key])
        values[key] = torch.from_numpy(value)
    return values


def unknown_key_error(key: str, reported: Any) -> ValueError:
    """The error for a measure of the info key ``key`` where the env's step reports the keys ``reported``."""
    return ValueError(
        f"The measure reads the info key {key!r}, which this env's step does not report; it reports"
        f" {', '.join(map(repr, sorted(reported))) or 'no keys'}. Name one of those, or measure a function"
        " f(observation, action, reward)."
    )


def not_one_number_error(key: str, shape: Any) -> ValueError:
    """The error for a measure of the info key ``key`` whose values have ``shape`` per sub-env."""
    return ValueError(
        f"The info key {key!r} holds values of shape {tuple(shape)} per sub-env; a measure takes one number per"
        " sub-env (measure a function of it instead)."
    )
