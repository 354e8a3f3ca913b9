"""The array protocol: recognise numpy / torch / jax arrays and move them to and from torch.

jax is never imported here unless the caller hands over a jax array or asks for one: recognising a
jax array only looks the class up in ``sys.modules`` (as array-api-compat does).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, Literal, TypeAlias

import numpy as np
import torch

from vecrl.nests import map_batch, nest_leaves

ArrayType: TypeAlias = Literal["jax", "torch", "numpy"]
ARRAY_TYPES: tuple[ArrayType, ...] = ("jax", "torch", "numpy")

MaskOrIndices: TypeAlias = "torch.Tensor | np.ndarray | Iterable[int] | Iterable[bool] | int | slice"


def is_jax_array(x: Any) -> bool:
    """True when ``x`` is a jax array; never imports jax to find out.

    Examples:
        >>> is_jax_array(np.zeros(3))
        False
    """
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(x, jax.Array)


def array_type(x: Any, fallback: ArrayType | None = None) -> ArrayType:
    """Name the array library ``x`` belongs to: ``"jax"``, ``"torch"`` or ``"numpy"``.

    Unknown types give ``fallback``, or a TypeError when no fallback is given.

    Examples:
        >>> array_type(torch.zeros(2)), array_type([1, 2], fallback="numpy")
        ('torch', 'numpy')
    """
    if isinstance(x, torch.Tensor):
        return "torch"
    if isinstance(x, np.ndarray):
        return "numpy"
    if is_jax_array(x):
        return "jax"
    if fallback is not None:
        return fallback
    raise TypeError(
        f"array_type() received an object of type {type(x).__qualname__}, which is not a numpy array,"
        " a torch tensor or a jax array. Pass `fallback=` to get a default instead of this error."
    )


def array_namespace(x: Any) -> Any:
    """The module of the array library ``x`` belongs to (``torch``, ``numpy`` or ``jax.numpy``), for a rule
    written once over the functions these share (``where``, ``log``, ``sqrt``, ``arange``, ...); a TypeError
    for anything else, as ``array_type`` gives.

    Examples:
        >>> array_namespace(np.zeros(2)).__name__, array_namespace(torch.zeros(2)).__name__
        ('numpy', 'torch')
    """
    kind = array_type(x)
    if kind == "jax":
        import jax.numpy as jnp  # (x is a jax array: jax is imported already)

        return jnp
    return torch if kind == "torch" else np


def convert_to_torch(x: Any) -> torch.Tensor:
    """Turn ``x`` into a torch tensor, sharing memory where it can.

    Tensors come back as they are; numpy arrays through ``torch.from_numpy`` and jax arrays through
    DLPack, both without a copy (a read-only numpy array is copied, since torch tensors are writable);
    numbers and other iterables through ``torch.as_tensor``.

    Examples:
        >>> a = np.zeros(3, dtype=np.float32)
        >>> convert_to_torch(a).data_ptr() == a.ctypes.data
        True
    """
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray):
        if x.flags.writeable:
            try:
                return torch.from_numpy(x)
            except (ValueError, TypeError):  # byte-swapped or reversed memory: copied below
                pass
        # torch cannot view these (read-only, byte-swapped or reversed memory): copy once.
        return torch.from_numpy(np.array(x, dtype=x.dtype.newbyteorder("=")))
    if is_jax_array(x):
        tensor = torch.from_dlpack(x)
        if tensor.dtype != torch.bool and x.dtype == np.bool_:  # jax < 0.4.31 exports bools as uint8
            tensor = tensor.view(torch.bool)
        return tensor
    return torch.as_tensor(x)


def convert_from_torch(x: torch.Tensor, array_type: ArrayType) -> Any:
    """Turn the torch tensor ``x`` into an array of ``array_type`` ("torch", "numpy" or "jax").

    The numpy result shares memory with a CPU tensor; the jax result is made through DLPack, on the
    tensor's device, without a host copy. numpy has no bfloat16: such a tensor becomes a float32 array,
    which holds each of its values exactly.

    Examples:
        >>> convert_from_torch(torch.ones(2), "numpy")
        array([1., 1.], dtype=float32)
    """
    if array_type == "torch":
        return x
    if array_type == "numpy":
        try:
            return x.numpy()  # the common case (a CPU tensor without grad) in one call
        except (RuntimeError, TypeError):  # needs grad, is not on the CPU, or is bfloat16
            if x.is_meta:
                raise _no_values_error(x) from None
            x = x.detach().cpu()
            return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    if array_type == "jax":
        import jax.dlpack  # imported only when a jax array is asked for

        if x.is_meta:
            raise _no_values_error(x)
        x = x.detach().contiguous()
        try:
            return jax.dlpack.from_dlpack(x)
        except Exception:
            if x.dtype != torch.bool:
                raise
            # older jax has no DLPack bool type: import the bytes, then cast (one copy)
            return jax.dlpack.from_dlpack(x.view(torch.uint8)).astype(np.bool_)
    raise ValueError(
        f"convert_from_torch() received array_type={array_type!r}; expected one of {', '.join(ARRAY_TYPES)}."
    )


def _no_values_error(x: torch.Tensor) -> ValueError:
    """The error for converting a tensor of the meta device, which holds a shape but no values."""
    return ValueError(
        f"A tensor of shape {tuple(x.shape)} on the meta device has no values to convert. Make it on a real"
        " device (e.g. torch.zeros(..., device='cpu'))."
    )


def convert_to_numpy(x: Any) -> np.ndarray:
    """``x`` as a numpy array: a torch tensor through ``convert_from_torch`` (on any device, even one that
    needs grad), anything else (jax arrays, nested lists) through ``numpy.asarray``.

    Examples:
        >>> convert_to_numpy(torch.ones(2, requires_grad=True))
        array([1., 1.], dtype=float32)
    """
    if isinstance(x, torch.Tensor):
        return convert_from_torch(x, "numpy")
    return np.asarray(x)


def tree_to_torch(x: Any) -> Any:
    """``x`` (an array, or tuples and dicts of arrays, nested: ``vecrl.nests``) with every array as a torch
    tensor, each through ``convert_to_torch``.

    Examples:
        >>> tree_to_torch((np.zeros(2), {"a": np.ones(1)}))
        (tensor([0., 0.], dtype=torch.float64), {'a': tensor([1.], dtype=torch.float64)})
    """
    return map_batch(convert_to_torch, x)


def tree_from_torch(x: Any, array_type: ArrayType) -> Any:
    """``x`` (a tensor, or tuples and dicts of tensors, nested: ``vecrl.nests``) with every tensor turned into an array
    of ``array_type`` through ``convert_from_torch``; other leaves (numpy arrays, lists) are left alone.

    Examples:
        >>> tree_from_torch({"a": torch.ones(2), "b": (torch.zeros(1),)}, "numpy")
        {'a': array([1., 1.], dtype=float32), 'b': (array([0.], dtype=float32),)}
    """
    return map_batch(
        lambda leaf: convert_from_torch(leaf, array_type) if isinstance(leaf, torch.Tensor) else leaf, x
    )


def convert_to_torch_bool(x: Any) -> torch.Tensor:
    """Turn ``x`` into a bool tensor: bools as they are, floats as ``abs(x) > 1e-4``, integers as ``x != 0``.

    Examples:
        >>> convert_to_torch_bool(np.array([0.0, 1e-5, 0.5]))
        tensor([False, False,  True])
    """
    t = convert_to_torch(x)
    if t.dtype == torch.bool:
        return t
    if t.is_floating_point():
        return t.abs() > 1e-4
    if t.is_complex():
        return t.abs() > 1e-4
    return t != 0


def reset_tensors(x: Any, indices: MaskOrIndices) -> None:
    """Zero, in place, the rows ``indices`` selects in ``x``.

    ``x`` is a tensor or any nesting of lists, tuples and dicts of tensors (strings and bytes are
    left alone); ``indices`` is a list or tensor of row indices, or a boolean mask over the rows.

    Examples:
        >>> h = (torch.ones(3, 2), {"c": torch.ones(3)})
        >>> reset_tensors(h, [True, False, True])
        >>> h[1]["c"]
        tensor([0., 1., 0.])
    """
    for leaf in nest_leaves(x):  # (strings, bytes and other values are leaves)
        if isinstance(leaf, torch.Tensor):
            leaf[_as_row_index(indices, leaf.device)] = 0


def _as_row_index(indices: MaskOrIndices, device: torch.device) -> Any:
    """Make ``indices`` usable as ``tensor[indices]`` on ``device``: lists of bools become masks."""
    if isinstance(indices, (int, slice)):
        return indices
    if isinstance(indices, torch.Tensor):
        return indices.to(device)
    array = np.asarray(indices)
    if array.size == 0:  # an empty list selects no row (numpy would make it float)
        array = array.astype(np.int64)
    return torch.as_tensor(array, device=device)
