"""CPU tensors to return, made many at a time so that no single step pays for making them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

#: A block holds at most this many rows ...
MAX_ROWS_PER_BLOCK = 64
#: ... and at most this many bytes (a kept tensor keeps its whole block alive) ...
MAX_BLOCK_BYTES = 16 * 1024
#: ... and when fewer rows fit, each row is made on its own: making a block (one ``unbind`` per entry)
#: costs more than a few rows' tensors (measured: a block of 2 rows of 256 CartPole results cost 37 us
#: a row, a row on its own 12 us).
MIN_ROWS_PER_BLOCK = 16

#: The arrays of one row, to write into, and the tensors sharing their memory, to return.
Row = tuple[tuple[np.ndarray, ...], tuple[torch.Tensor, ...]]


class TensorRows:
    """Rows of CPU arrays that are also torch tensors, each row handed out once, starting as a copy of
    ``initial``.

    Making a tensor costs about a microsecond of Python, and on a small env a step takes ten: the
    four result tensors of each step would cost more than the step itself. So a block of rows is made
    at once (``unbind`` makes all of a block's tensors in one call), every row goes to one caller, who
    writes it through its numpy arrays and returns its tensors. A row is never handed out again, so
    its tensors belong to whoever received them, like fresh ones; a kept tensor keeps its block (at
    most ``MAX_BLOCK_BYTES``) alive, and ``torch.save`` of one saves its block (``.clone()`` first to
    save only the row). Rows start as a copy of ``initial`` (the values a step writes only for some
    sub-envs: False flags), so that filling them costs nothing per step either.

    Args:
        initial: one array per entry of a row: its shape, dtype and first values.

    Examples:
        >>> rows = TensorRows([np.zeros((2, 3), np.float32), np.array([True, False])])
        >>> (observations, flags), (observations_tensor, flags_tensor) = rows.next_row()
        >>> observations[1] = 7.0
        >>> observations_tensor[1], flags_tensor
        (tensor([7., 7., 7.]), tensor([ True, False]))
        >>> rows.next_row()[1][0].data_ptr() != observations_tensor.data_ptr()
        True
    """

    def __init__(self, initial: Sequence[np.ndarray]) -> None:
        self._initial = [np.array(array) for array in initial]
        row_bytes = sum(array.nbytes for array in self._initial)
        fitting = min(MAX_ROWS_PER_BLOCK, MAX_BLOCK_BYTES // max(row_bytes, 1))
        self.rows_per_block = fitting if fitting >= MIN_ROWS_PER_BLOCK else 1
        self._rows: Iterator[Row] = iter(())

    def next_row(self) -> Row:
        """A row nobody else gets: ``(arrays, tensors)``, one of each per entry of the layout."""
        row = next(self._rows, None)
        if row is None:
            self._rows = self._new_block()
            row = next(self._rows)
        return row

    def _new_block(self) -> Iterator[Row]:
        if self.rows_per_block == 1:  # one copy and one tensor per entry
            arrays = tuple(array.copy() for array in self._initial)
            return iter([(arrays, tuple(torch.from_numpy(array) for array in arrays))])
        blocks = [np.repeat(array[np.newaxis], self.rows_per_block, axis=0) for array in self._initial]
        tensors: Any = zip(*(torch.from_numpy(block).unbind() for block in blocks), strict=True)
        return iter(list(zip(zip(*blocks, strict=True), tensors, strict=True)))
