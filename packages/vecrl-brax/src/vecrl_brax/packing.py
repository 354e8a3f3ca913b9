"""Pack a pytree of arrays into one flat buffer per dtype, and back.

A jitted call costs a few microseconds per argument and per result buffer; a brax state has dozens of
leaves (twice that with the pool of fresh states), which made the call overhead dominate the step of a
small batch. Carrying the state as a handful of flat buffers keeps the call cheap; inside the jitted
function, unpacking is slicing and reshaping, which XLA fuses away.

A batch of ``k`` times the example's rows packs as ``k`` blocks end to end, each laid out like one packed
tree of the example's shape: the first rows of a packed batch are then one slice per dtype
(``first_block``), not one per leaf, which would compile into as many small kernels (106 for an MJX
cartpole, more than half a second on a CPU).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class Packer:
    """Packs trees shaped like ``example`` (arrays or ``jax.ShapeDtypeStruct``) into ``{dtype: 1-D array}``,
    or batches of ``blocks`` such trees stacked along their first axis into ``blocks`` packed trees end to end.

    Example:
        >>> packer = Packer({"a": jnp.zeros((2, 3)), "k": jnp.zeros(2, jnp.uint32)})
        >>> packer.sizes
        {'float32': 6, 'uint32': 2}
        >>> batch = packer.pack({"a": jnp.arange(12.0).reshape(4, 3), "k": jnp.arange(4, dtype=jnp.uint32)}, blocks=2)
        >>> packer.unpack(packer.first_block(batch))["a"].tolist()  # its first two rows
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
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
        #: The length of the buffer of each dtype (of one block).
        self.sizes: dict[str, int] = {name: sizes[name] for name in self.dtypes}

    def pack(self, tree: Any, blocks: int = 1) -> dict[str, jax.Array]:
        """One 1-D array per dtype holding every leaf of ``tree``, in a fixed order; with ``blocks=k``, a
        tree whose leaves have ``k`` times the example's rows, packed as ``k`` blocks of those rows."""
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        if treedef != self.treedef:  # type: ignore[operator]
            raise ValueError(f"Cannot pack a tree of structure {treedef}; this Packer packs {self.treedef}.")
        parts: dict[str, list[jax.Array]] = {name: [] for name in self.dtypes}
        for leaf, (name, _, size, _) in zip(leaves, self._layout, strict=True):
            parts[name].append(jnp.reshape(jnp.asarray(leaf, dtype=name), (blocks, size)))
        return {name: jnp.concatenate(parts[name], axis=1).reshape(-1) for name in self.dtypes}

    def unpack(self, packed: dict[str, jax.Array]) -> Any:
        """The tree ``pack`` was given (one block; ``first_block`` or ``gather_rows`` read a batch)."""
        leaves = [
            jax.lax.slice(packed[name], (offset,), (offset + size,)).reshape(shape)
            for name, offset, size, shape in self._layout
        ]
        return jax.tree_util.tree_unflatten(self.treedef, leaves)

    def first_block(self, packed: dict[str, jax.Array]) -> dict[str, jax.Array]:
        """The first block of a packed batch: a packed tree of the example's shape (its first rows)."""
        return {name: packed[name][: self.sizes[name]] for name in self.dtypes}

    def gather_rows(self, packed: dict[str, jax.Array], rows: jax.Array) -> Any:
        """A tree of this layout whose row ``i`` (along every leaf's first axis) is row ``rows[i]`` of the
        batch packed in ``packed`` (blocks of the example's rows end to end). Reads only those rows:
        nothing is unpacked (copied) first.

        Example:
            >>> packer = Packer({"a": jnp.zeros((2, 2))})
            >>> batch = packer.pack({"a": jnp.arange(8.0).reshape(4, 2)}, blocks=2)
            >>> packer.gather_rows(batch, jnp.array([3, 0]))["a"].tolist()
            [[6.0, 7.0], [0.0, 1.0]]
        """
        leaves = []
        for name, offset, size, shape in self._layout:
            row_size = size // shape[0]
            starts = (rows // shape[0]) * self.sizes[name] + offset + (rows % shape[0]) * row_size
            indices = starts[:, None] + jnp.arange(row_size)[None, :]
            leaves.append(packed[name][indices].reshape((rows.shape[0], *shape[1:])))
        return jax.tree_util.tree_unflatten(self.treedef, leaves)
