"""The one accumulator of observation statistics: a count, a sum and a sum of squares of the observations
that counted rows saw, taken about a shift, written once over an array namespace. The stepped loop adds
torch batches to it, the fused program adds jax batches inside its loop (shifted by the mean the call
began with, so that float32 sums keep their precision), and ``vecrl_policy.ObsNorm`` and the merge of
the parts of a call (worker processes, Ray actors) add the results, which merge by addition.

Examples:
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0], [9.0, 9.0]])
    >>> moments = Moments.zero().added(x, torch.tensor([True, True, False]), axis=0)
    >>> [value.tolist() for value in moments.unshifted(None)]
    [[2], [[4.0, 6.0]], [[10.0, 20.0]]]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from vecrl.arrays import array_namespace


class Moments(NamedTuple):
    """``count``, ``total`` (the sum of ``x - shift``) and ``squares`` (the sum of its squares) of the
    observations added so far, as arrays of one library (or 0 before the first addition)."""

    count: Any
    total: Any
    squares: Any

    @classmethod
    def zero(cls) -> Moments:
        return cls(0, 0.0, 0.0)

    def added(self, x: Any, mask: Any, shift: Any = 0.0, axis: Any = None) -> Moments:
        """These moments and those of the observations ``x`` (``(..., size)``) where ``mask`` (``x``'s shape
        less its last axis) is True, summed over ``axis`` of the mask's axes (None: kept apart, one sum
        per mask entry, as the fused program keeps one per slot)."""
        xp = array_namespace(x)
        shifted = xp.where(mask[..., None], x - shift, 0.0)
        squared = shifted * shifted
        count = mask.astype("int32") if xp.__name__ != "torch" else mask.long()
        if axis is not None:
            count, shifted, squared = count.sum(axis), shifted.sum(axis), squared.sum(axis)
        return Moments(self.count + count, self.total + shifted, self.squares + squared)

    def about_zero(self, shift: Any) -> tuple[Any, Any, Any]:
        """``(count, sum, sum of squares)`` about zero, summed over every axis but the observation's, in the
        moments' own library and dtype, from moments taken about ``shift`` (None: zero)."""
        count, total, squares = self
        n = count.sum()
        s1 = total.reshape(-1, total.shape[-1]).sum(0)
        s2 = squares.reshape(-1, squares.shape[-1]).sum(0)
        if shift is None:
            return n, s1, s2
        return n, s1 + n * shift, s2 + 2 * shift * s1 + n * shift * shift

    def unshifted(self, shift: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``about_zero`` as float64 torch tensors of one row each (what ``ObsNorm.add_partial`` takes)."""
        from vecrl.arrays import convert_to_torch

        count, total, squares = (convert_to_torch(value) for value in self)
        m = None if shift is None else shift.double().to(total.device)
        n, s1, s2 = Moments(count.to(torch.int64), total.double(), squares.double()).about_zero(m)
        return n.reshape(1), s1[None], s2[None]
