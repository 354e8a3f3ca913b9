"""Batched info: as torch tensors on a device (the host backends, gym and envpool, hand theirs out so), and cut
to some sub-envs' rows (a batch of async batches)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from vecrl.final_observations import is_row_array


def info_to_device(info: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The batched ``info`` with its numeric and bool arrays (also in nested dicts, and in the tuples of
    batched Tuple observations) as torch tensors on ``device``; on the CPU they share memory with the
    arrays. An array under several keys (as the final-observation and final-info masks are) becomes one
    tensor, made once.

    Everything else is left as it is, in particular object arrays (as EvoTorch moves only numeric info).

    Examples:
        >>> info_to_device({"x": np.ones(2), "_x": np.ones(2, dtype=bool)}, torch.device("cpu"))["x"]
        tensor([1., 1.], dtype=torch.float64)
        >>> mask = np.array([True, False])
        >>> moved = info_to_device({"_final_obs": mask, "_final_info": mask}, torch.device("cpu"))
        >>> moved["_final_obs"] is moved["_final_info"]
        True
    """
    return _dict_to_device(info, None if device.type == "cpu" else device, {})


_from_numpy = torch.from_numpy


def _dict_to_device(
    info: dict[str, Any], device: torch.device | None, made: dict[int, Any]
) -> dict[str, Any]:
    """``info_to_device`` (``device`` None: the CPU), with the tensors ``made`` so far by their array's id.
    (A loop, with torch.from_numpy looked up once: the info of a same_step step that ends an episode took 3.4
    us before, as a dict comprehension, and takes 2.9.)"""
    moved: dict[str, Any] = {}
    for key, value in info.items():
        moved[key] = _value_to_device(value, device, made)
    return moved


def _value_to_device(value: Any, device: torch.device | None, made: dict[int, Any]) -> Any:
    if isinstance(value, np.ndarray):  # (the usual value first)
        tensor = made.get(id(value))
        if tensor is None:
            if value.dtype.kind not in "biuf":
                return value
            tensor = _from_numpy(value) if device is None else _from_numpy(value).to(device)
            made[id(value)] = tensor
        return tensor
    if isinstance(value, dict):
        return _dict_to_device(value, device, made) if value else {}
    if isinstance(value, tuple):
        return tuple(_value_to_device(item, device, made) for item in value)
    return value


def rows_of_info(info: dict[str, Any], start: int, stop: int, num_envs: int) -> dict[str, Any]:
    """The batched ``info`` of every sub-env cut to the rows ``start:stop``: each array with a row per
    sub-env (in nested dicts too, as gymnasium's final infos are) sliced, other values as they are.

    Examples:
        >>> rows_of_info({"a": np.arange(4), "b": {"c": np.arange(4)}, "d": 1}, 2, 4, 4)
        {'a': array([2, 3]), 'b': {'c': array([2, 3])}, 'd': 1}
    """
    rows: dict[str, Any] = {}
    for key, value in info.items():
        if is_row_array(value, num_envs):
            value = value[start:stop]
        elif isinstance(value, dict):
            value = rows_of_info(value, start, stop, num_envs)
        elif isinstance(value, tuple):  # (the final observations of Tuple spaces)
            value = tuple(rows_of_info({"": item}, start, stop, num_envs)[""] for item in value)
        rows[key] = value
    return rows
