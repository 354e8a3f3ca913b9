"""ObsNorm: running observation statistics shared by a whole population, and the normalization they define.

The statistics are a count, a sum and a sum of squares per observation entry, in float64, as EvoTorch's
``RunningStat`` keeps them: partial statistics from worker processes or Ray actors merge by addition, so a
call split across processes gives the statistics of the same call in one process (up to the order of
float64 additions).

When they change: ``evaluate(..., obs_norm=stats)`` normalizes every observation of the call with the
statistics as they stood when the call began, and adds what the call saw once it is done. EvoJAX does the
same per rollout (its ``ObsNormalizer`` keeps the parameters fixed for a rollout and updates them after
it); EvoTorch's ``VecGymNE`` and brax's training update as they go instead. We follow EvoJAX: every row of
one call is normalized alike, so a row's score does not depend on which rows ran before it, on how the
population was split, or on the order in which workers finish.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import torch
from torch import nn

from vecrl.arrays import array_namespace
from vecrl_policy.statistics import Moments

#: The rows of partial statistics as ``evaluate``'s parts return them: count, sum, sum of squares.
Partial = tuple[torch.Tensor, torch.Tensor, torch.Tensor]


class ObsNorm:
    """Running mean and variance of flat observations; ``normalize(x)`` is ``(x - mean) / std``, clipped.

    ``std`` is ``sqrt(max(variance, min_variance))`` (the epsilon: an entry that never varies is not
    blown up) and the result is clipped to ``[-clip, clip]`` (``clip=None``: not clipped). Until it has
    seen an observation, ``normalize`` returns its input unchanged. The size (the flat observation length)
    is taken from the first update when not given.

    Keep one across generations and hand it to ``evaluate(..., obs_norm=stats)``; save it with
    ``torch.save(stats)`` or ``stats.state_dict()``; set ``policy.obs_norm = stats.copy()`` to make a
    policy that normalizes on its own (a saved champion runs without the training loop).

    Examples:
        >>> stats = ObsNorm()
        >>> stats.update(torch.tensor([[0.0, 10.0], [2.0, 30.0]]))
        >>> stats.count, stats.mean.tolist(), stats.std.tolist()
        (2, [1.0, 20.0], [1.0, 10.0])
        >>> stats.normalize(torch.tensor([[1.0, 40.0]])).tolist()
        [[0.0, 2.0]]
    """

    def __init__(
        self, size: int | None = None, *, clip: float | None = 5.0, min_variance: float = 1e-2
    ) -> None:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise ValueError(
                f"ObsNorm size must be a positive int (the flat observation length), got {size!r}."
            )
        if clip is not None and not _is_finite_positive(clip):
            raise ValueError(f"ObsNorm clip must be a positive number or None (no clipping), got {clip!r}.")
        if not _is_finite_positive(min_variance):
            raise ValueError(f"ObsNorm min_variance must be a positive number, got {min_variance!r}.")
        self.clip = None if clip is None else float(clip)
        self.min_variance = float(min_variance)
        self._count = 0
        self._sum: torch.Tensor | None = None
        self._sum_of_squares: torch.Tensor | None = None
        if size is not None:
            self._sum = torch.zeros(size, dtype=torch.float64)
            self._sum_of_squares = torch.zeros(size, dtype=torch.float64)

    def __repr__(self) -> str:
        return f"ObsNorm(size={self.size}, count={self._count}, clip={self.clip}, min_variance={self.min_variance})"

    @property
    def size(self) -> int | None:
        """The flat observation length, or None before the first update of an ObsNorm made without one."""
        return None if self._sum is None else len(self._sum)

    @property
    def count(self) -> int:
        """How many observations the statistics hold."""
        return self._count

    @property
    def mean(self) -> torch.Tensor:
        """The mean observation (float64; zeros while empty)."""
        return mean_and_std(self._count, *self._stored("mean"), self.min_variance)[0]

    @property
    def std(self) -> torch.Tensor:
        """The standard deviation used to normalize: ``sqrt(max(variance, min_variance))`` (float64)."""
        return mean_and_std(self._count, *self._stored("std"), self.min_variance)[1]

    @property
    def stdev(self) -> torch.Tensor:
        """``std``, by the name EvoTorch's ``RunningNorm`` gives it."""
        return self.std

    @property
    def sum(self) -> torch.Tensor:
        """The sum of the observations seen (float64), as EvoTorch's ``RunningNorm`` names it."""
        return self._stored("sum")[0]

    @property
    def sum_of_squares(self) -> torch.Tensor:
        """The sum of their squares (float64), as EvoTorch's ``RunningNorm`` names it."""
        return self._stored("sum of squares")[1]

    def to(self, device: torch.device | str) -> ObsNorm:
        """These statistics for networks on ``device`` (EvoTorch's ``RunningNorm.to``): the statistics stay
        float64 on the CPU and follow each input to its device, so this is the object itself, once
        ``device`` is checked."""
        torch.empty(0, device=device)  # (a device this torch cannot use is its error here)
        return self

    def to_layer(self) -> Normalize:
        """The normalization as it stands now, as a float32 module (EvoTorch's ``RunningNorm.to_layer``):
        put it in front of a network that should normalize on its own.

        Examples:
            >>> stats = ObsNorm()
            >>> stats.update(torch.tensor([[0.0], [2.0]]))
            >>> stats.to_layer()(torch.tensor([[3.0]])).tolist()
            [[2.0]]
        """
        return self.normalizer(torch.float32, "cpu")

    def _stored(self, what: str) -> tuple[torch.Tensor, torch.Tensor]:
        if self._sum is None or self._sum_of_squares is None:
            raise ValueError(
                f"This ObsNorm has no {what} yet: it has seen no observation and was made without a size."
            )
        return self._sum, self._sum_of_squares

    # -- updating ---------------------------------------------------------------------------------

    def update(self, x: torch.Tensor | ObsNorm, mask: torch.Tensor | None = None) -> None:
        """Add a batch of flat observations (one per row; ``mask`` picks the rows to count), or the
        statistics of another ObsNorm of the same size."""
        if isinstance(x, ObsNorm):
            if x.count:
                self.add_partial(torch.tensor(x.count), *x._stored("statistics"))
            return
        if not isinstance(x, torch.Tensor) or x.ndim != 2 or not x.is_floating_point():
            shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__qualname__
            raise ValueError(
                f"ObsNorm.update expects a 2-D float tensor (batch, size) or an ObsNorm, got {shape}."
            )
        values = x.detach().to(device="cpu", dtype=torch.float64)
        counted = torch.ones(len(values), dtype=torch.bool) if mask is None else torch.as_tensor(mask).cpu()
        self.add_partial(*Moments.zero().added(values, counted, axis=0).unshifted(None))

    def add_partial(self, count: Any, total: Any, squares: Any) -> None:
        """Add partial statistics: a count, and the sum and sum of squares of that many observations
        (what ``evaluate``'s parts return). All-or-nothing: a ValueError for statistics no observations
        could have (a count that is no int >= 0, sums of other lengths, non-finite values, negative
        squares, sums without observations) changes nothing."""
        count, total, squares = _checked_statistics(count, total, squares)
        if self._sum is not None and len(total) != len(self._sum):
            raise ValueError(
                f"This ObsNorm holds statistics of observations of length {len(self._sum)}, but was given"
                f" observations of length {len(total)}: use one ObsNorm per env (or a new one)."
            )
        if self._sum is None or self._sum_of_squares is None:
            self._sum, self._sum_of_squares = total.clone(), squares.clone()
        else:
            self._sum += total
            self._sum_of_squares += squares
        self._count += count

    # -- normalizing ------------------------------------------------------------------------------

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (flat observations, the last dimension of length ``size``) normalized, in its dtype."""
        if not self._count:
            return x
        return self.normalizer(x.dtype, x.device)(x)

    def normalizer(self, dtype: torch.dtype, device: torch.device | str) -> Normalize:
        """The normalization as the statistics stand now, as a module on ``device`` in ``dtype``: later
        updates do not change it (``evaluate`` normalizes a whole call with one)."""
        if not self._count:  # (the identity, with the clip it will have: a compiled program keys on it)
            return Normalize(None, None, self.clip)
        return Normalize(
            self.mean.to(device=device, dtype=dtype), self.std.to(device=device, dtype=dtype), self.clip
        )

    # -- saving -----------------------------------------------------------------------------------

    def copy(self) -> ObsNorm:
        """An independent copy (a policy that carries it is not changed by later updates of this one)."""
        twin = ObsNorm(clip=self.clip, min_variance=self.min_variance)
        twin.load_state_dict(self.state_dict())
        return twin

    def state_dict(self) -> dict[str, Any]:
        """The statistics and settings as plain values and tensors (for ``torch.save``).

        Examples:
            >>> stats = ObsNorm(2)
            >>> ObsNorm.from_state_dict(stats.state_dict()).size
            2
        """
        return {
            "count": self._count,
            "sum": None if self._sum is None else self._sum.clone(),
            "sum_of_squares": None if self._sum_of_squares is None else self._sum_of_squares.clone(),
            "clip": self.clip,
            "min_variance": self.min_variance,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Take the statistics and settings of ``state_dict()`` (checked whole before anything changes)."""
        expected = {"count", "sum", "sum_of_squares", "clip", "min_variance"}
        if not isinstance(state, Mapping) or set(state) != expected:
            got = sorted(state) if isinstance(state, Mapping) else type(state).__qualname__
            raise ValueError(f"ObsNorm.load_state_dict expects the keys {sorted(expected)}, got {got}.")
        checked = ObsNorm(clip=state["clip"], min_variance=state["min_variance"])
        if state["sum"] is not None or state["sum_of_squares"] is not None:
            checked.add_partial(state["count"], state["sum"], state["sum_of_squares"])
        elif not (isinstance(state["count"], int) and state["count"] == 0):
            raise ValueError(
                f"ObsNorm.load_state_dict got count={state['count']!r} with no sums: a count of observations"
                " needs their sum and sum of squares (a state that saw nothing has count 0)."
            )
        self.clip, self.min_variance = checked.clip, checked.min_variance
        self._count, self._sum, self._sum_of_squares = checked._count, checked._sum, checked._sum_of_squares

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> ObsNorm:
        """A new ObsNorm holding ``state``."""
        stats = cls()
        stats.load_state_dict(state)
        return stats


# A saved ObsNorm (torch.save(stats)) loads with torch.load's default weights_only=True: its state is
# numbers and tensors alone.
torch.serialization.add_safe_globals([ObsNorm])


class Normalize(nn.Module):
    """``(x - mean) / std`` clipped to ``[-clip, clip]``, with fixed ``mean`` and ``std`` (None: identity).

    Examples:
        >>> Normalize(torch.tensor([1.0]), torch.tensor([2.0]), clip=1.0)(torch.tensor([[2.0], [9.0]])).tolist()
        [[0.5], [1.0]]
    """

    mean: torch.Tensor | None
    std: torch.Tensor | None

    def __init__(self, mean: torch.Tensor | None, std: torch.Tensor | None, clip: float | None) -> None:
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.clip = clip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.mean is None or self.std is None:
            return x
        return normalized(x, self.mean, self.std, self.clip)


class NormalizedNet(nn.Module):
    """A network behind a fixed normalization of its input: ``net(normalize(x), *args)`` (recurrent
    networks keep their ``forward(x, h)``). What ``Policy.to_torch_module`` gives for a policy with
    ``obs_norm``."""

    def __init__(self, normalize: Normalize, net: nn.Module) -> None:
        super().__init__()
        self.normalize = normalize
        self.net = net

    def forward(self, x: torch.Tensor, *args: Any) -> Any:
        return self.net(self.normalize(x), *args)


def _checked_statistics(count: Any, total: Any, squares: Any) -> tuple[int, torch.Tensor, torch.Tensor]:
    """``(count, sum, sum of squares)`` as an int and two float64 vectors on the CPU, if they can be the
    statistics of ``count`` observations; a ValueError saying what is wrong otherwise."""
    value = count.reshape(-1) if isinstance(count, torch.Tensor) and count.numel() == 1 else count
    if isinstance(value, torch.Tensor) and not value.is_floating_point() and value.dtype != torch.bool:
        value = int(value[0])
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise ValueError(f"ObsNorm statistics need a count that is an int >= 0, got {count!r}.")
    vectors = []
    for name, vector in (("sum", total), ("sum of squares", squares)):
        try:
            vector = torch.as_tensor(vector).detach().to(device="cpu", dtype=torch.float64).reshape(-1)
        except (TypeError, ValueError, RuntimeError) as error:
            raise ValueError(
                f"ObsNorm statistics need the {name} as a vector of numbers, got {vector!r} ({error})."
            ) from None
        if not torch.isfinite(vector).all():
            raise ValueError(f"ObsNorm statistics hold a non-finite {name} (NaN or inf): {vector.tolist()}.")
        vectors.append(vector)
    total, squares = vectors
    if len(total) != len(squares):
        raise ValueError(
            f"ObsNorm statistics need a sum and a sum of squares of one length, got {len(total)} and"
            f" {len(squares)}."
        )
    if (squares < 0).any():
        raise ValueError(f"ObsNorm statistics hold a negative sum of squares: {squares.tolist()}.")
    if value == 0 and (total.any() or squares.any()):
        raise ValueError(
            "ObsNorm statistics of count 0 hold sums that are not zero: no observation gave them."
        )
    return int(value), total, squares


def checked_obs_norm(obs_norm: Any, size: int) -> ObsNorm | None:
    """``obs_norm`` if it is None or an ObsNorm for observations of length ``size``; else a clear error."""
    if obs_norm is None:
        return None
    if not isinstance(obs_norm, ObsNorm):
        raise TypeError(
            f"obs_norm must be a vecrl_policy.ObsNorm (kept across calls; it holds the running statistics),"
            f" got {type(obs_norm).__qualname__}."
        )
    if obs_norm.size is not None and obs_norm.size != size:
        raise ValueError(
            f"obs_norm holds statistics of observations of length {obs_norm.size}, but this env's flat"
            f" observations have length {size}: use one ObsNorm per env (or a new one)."
        )
    return obs_norm


def _is_finite_positive(value: Any) -> bool:
    return (
        isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value) and float(value) > 0
    )


def normalized(x: Any, mean: Any, std: Any, clip: float | None) -> Any:
    """``(x - mean) / std``, clipped to ``[-clip, clip]`` unless ``clip`` is None.

    Examples:
        >>> import torch
        >>> normalized(torch.tensor([2.0, 9.0]), 1.0, 2.0, clip=1.0).tolist()
        [0.5, 1.0]
    """
    y = (x - mean) / std
    return y if clip is None else array_namespace(y).clip(y, -clip, clip)


def mean_and_std(count: Any, total: Any, squares: Any, min_variance: float) -> tuple[Any, Any]:
    """The mean and the normalizing standard deviation (``sqrt(max(variance, min_variance))``) of ``count``
    observations with the sum ``total`` and the sum of squares ``squares``, over an array namespace: ObsNorm's
    (float64 torch) and ``vecrl_evaluate.rollout_function``'s statistics (jax) follow it. Zeros and
    ``sqrt(min_variance)`` while ``count`` is 0.

    Examples:
        >>> [t.tolist() for t in mean_and_std(2, torch.tensor([2.0]), torch.tensor([10.0]), 0.01)]
        [[1.0], [2.0]]
    """
    n = count + (count == 0)
    mean = total / n
    variance = squares / n - mean * mean
    return mean, array_namespace(total).sqrt(array_namespace(total).clip(variance, min_variance, None))
