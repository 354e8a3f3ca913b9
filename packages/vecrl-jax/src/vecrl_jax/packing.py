"""Pack a batch of pytrees into one 2-D array per dtype, row by row, and back.

A jitted call costs a few microseconds per argument and per result buffer; a brax state has dozens of
leaves (106 for an MJX cartpole), which made the call overhead dominate the step of a small batch.
Carrying the state as a handful of buffers keeps the call cheap; inside the jitted function, unpacking is
slicing and reshaping, which XLA fuses away.

Row ``i`` of the buffer of a dtype holds row ``i`` (sub-env ``i``) of every leaf of that dtype, raveled,
end to end. So what the autoreset does to whole sub-envs (restart some from rows of a pool of fresh
states, keep the state of others, take the first rows of a batch) is one gather, select or slice per
dtype, not one per leaf: per leaf, those compiled into as many small kernels, seconds of XLA compile
on a CPU for an MJX env.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

#: A packed batch: ``{dtype name: array of shape (rows, row size)}``.
Packed = dict[str, jax.Array]


class Packer:
    """Packs batches of trees shaped like ``example`` (every leaf an array or ``jax.ShapeDtypeStruct``
    with the batch on its first axis) into ``{dtype: (rows, row size) array}``, for any number of rows;
    each leaf is converted to its dtype in ``example``.

    Examples:
        >>> packer = Packer({"a": jnp.zeros((2, 3)), "k": jnp.zeros(2, jnp.uint32)})
        >>> packer.sizes
        {'float32': 3, 'uint32': 1}
        >>> packed = packer.pack({"a": jnp.arange(12.0).reshape(4, 3), "k": jnp.arange(4)})
        >>> packed["float32"].shape, packed["uint32"][:, 0].tolist()
        ((4, 3), [0, 1, 2, 3])
        >>> packer.unpack(packed)["k"].dtype
        dtype('uint32')
    """

    def __init__(self, example: Any) -> None:
        self.example = example
        leaves, self.treedef = jax.tree_util.tree_flatten(example)
        self._layout: list[tuple[str, int, int, tuple[int, ...]]] = []  # (dtype, column, size, row shape)
        sizes: dict[str, int] = {}
        for leaf in leaves:
            if len(leaf.shape) == 0:
                raise ValueError("Packer packs batches: every leaf needs the batch on its first axis.")
            name = np.dtype(leaf.dtype).name
            size = math.prod(leaf.shape[1:])
            self._layout.append((name, sizes.get(name, 0), size, tuple(leaf.shape[1:])))
            sizes[name] = sizes.get(name, 0) + size
        self.dtypes = sorted(sizes)
        #: The row size of the buffer of each dtype.
        self.sizes: dict[str, int] = {name: sizes[name] for name in self.dtypes}

    def pack(self, tree: Any) -> Packed:
        """The batch ``tree`` (leaves with the same number of rows, in ``example``'s structure), packed."""
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        if treedef != self.treedef:  # type: ignore[operator]
            raise ValueError(f"Cannot pack a tree of structure {treedef}; this Packer packs {self.treedef}.")
        rows = leaves[0].shape[0]
        parts: dict[str, list[jax.Array]] = {name: [] for name in self.dtypes}
        for leaf, (name, _, size, _) in zip(leaves, self._layout, strict=True):
            # strongly typed: a jitted function fed weak and strong types would compile twice
            parts[name].append(jax.lax.convert_element_type(jnp.reshape(leaf, (rows, size)), np.dtype(name)))
        return {name: jnp.concatenate(parts[name], axis=1) for name in self.dtypes}

    def unpack(self, packed: Packed) -> Any:
        """The batch ``pack`` was given (as many rows as ``packed`` has)."""
        rows = packed[self.dtypes[0]].shape[0]
        leaves = [
            packed[name][:, column : column + size].reshape((rows, *shape))
            for name, column, size, shape in self._layout
        ]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def shapes(self, rows: int) -> dict[str, jax.ShapeDtypeStruct]:
        """The shapes and dtypes of a packed batch of ``rows`` rows."""
        return {name: jax.ShapeDtypeStruct((rows, size), np.dtype(name)) for name, size in self.sizes.items()}


def take_rows(packed: Packed, rows: Any) -> Packed:
    """The rows ``rows`` (a slice or an index array) of a packed batch.

    Examples:
        >>> take_rows({"float32": jnp.arange(6.0).reshape(3, 2)}, jnp.array([2, 0]))["float32"].tolist()
        [[4.0, 5.0], [0.0, 1.0]]
    """
    return {name: buffer[rows] for name, buffer in packed.items()}


def where_rows(mask: jax.Array, on_true: Packed, on_false: Packed) -> Packed:
    """Row ``i`` of ``on_true`` where ``mask[i]``, else of ``on_false`` (packed batches of the same layout).

    Examples:
        >>> a, b = {"int32": jnp.zeros((2, 2), jnp.int32)}, {"int32": jnp.ones((2, 2), jnp.int32)}
        >>> where_rows(jnp.array([True, False]), a, b)["int32"].tolist()
        [[0, 0], [1, 1]]
    """
    return {name: jnp.where(mask[:, None], on_true[name], on_false[name]) for name in on_false}
