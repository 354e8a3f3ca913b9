"""Pack a pytree of arrays into one flat buffer per dtype, and back.

A jitted call costs a few microseconds per argument and per result buffer; a brax state has dozens of
leaves (twice that with the pool of fresh states), which made the call overhead dominate the step of a
small batch. Carrying the state as a handful of flat buffers keeps the call cheap; inside the jitted
function, unpacking is slicing and reshaping, which XLA fuses away.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class Packer:
    """Packs trees shaped like ``example`` (arrays or ``jax.ShapeDtypeStruct``) into ``{dtype: 1-D array}``.

    Example:
        >>> packer = Packer({"a": jnp.zeros((2, 3)), "b": jnp.ones(4), "k": jnp.zeros(2, jnp.uint32)})
        >>> sorted((name, buf.shape) for name, buf in packer.pack(...).items())  # doctest: +SKIP
        [('float32', (10,)), ('uint32', (2,))]
    """

    def __init__(self, example: Any) -> None:
        self.example = example
        leaves, self.treedef = jax.tree_util.tree_flatten(example)
        self._layout: list[tuple[str, int, int, tuple[int, ...]]] = []  # (dtype name, offset, size, shape)
        sizes: dict[str, int] = {}
        for leaf in leaves:
            name = np.dtype(leaf.dtype).name
            size = math.prod(leaf.shape)
            self._layout.append((name, sizes.get(name, 0), size, tuple(leaf.shape)))
            sizes[name] = sizes.get(name, 0) + size
        self.dtypes = sorted(sizes)
        #: The length of the buffer of each dtype.
        self.sizes: dict[str, int] = {name: sizes[name] for name in self.dtypes}

    def pack(self, tree: Any) -> dict[str, jax.Array]:
        """One 1-D array per dtype holding every leaf of ``tree``, in a fixed order."""
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        if treedef != self.treedef:  # type: ignore[operator]
            raise ValueError(f"Cannot pack a tree of structure {treedef}; this Packer packs {self.treedef}.")
        parts: dict[str, list[jax.Array]] = {name: [] for name in self.dtypes}
        for leaf, (name, _, _, _) in zip(leaves, self._layout, strict=True):
            parts[name].append(jnp.ravel(jnp.asarray(leaf, dtype=name)))
        return {name: jnp.concatenate(parts[name]) for name in self.dtypes}

    def unpack(self, packed: dict[str, jax.Array]) -> Any:
        """The tree ``pack`` was given."""
        leaves = [
            jax.lax.slice(packed[name], (offset,), (offset + size,)).reshape(shape)
            for name, offset, size, shape in self._layout
        ]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def gather_rows(self, packed: dict[str, jax.Array], copies: jax.Array, rows: jax.Array) -> Any:
        """A tree of this layout whose row ``i`` (along every leaf's first axis) is row ``rows[i]`` of the
        tree packed as copy ``copies[i]`` of ``packed``, a buffer per dtype holding packed trees of this
        layout end to end. Reads only those rows: nothing is unpacked (copied) first.

        Example:
            >>> packer = Packer({"a": jnp.zeros((3, 2))})
            >>> two = {"float32": jnp.concatenate([packer.pack({"a": jnp.zeros((3, 2))})["float32"],
            ...                                    packer.pack({"a": jnp.ones((3, 2))})["float32"]])}
            >>> packer.gather_rows(two, jnp.array([1, 0]), jnp.array([2, 0]))["a"].tolist()
            [[1.0, 1.0], [0.0, 0.0]]
        """
        leaves = []
        for name, offset, size, shape in self._layout:
            row_size = size // shape[0]
            starts = copies * self.sizes[name] + offset + rows * row_size
            indices = starts[:, None] + jnp.arange(row_size)[None, :]
            leaves.append(packed[name][indices].reshape((rows.shape[0], *shape[1:])))
        return jax.tree_util.tree_unflatten(self.treedef, leaves)
