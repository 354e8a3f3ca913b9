"""Moving batched info to a torch device."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def info_to_device(info: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The batched ``info`` with its numeric and bool arrays (also in nested dicts, and in the tuples of
    batched Tuple observations) as torch tensors on ``device``; on the CPU they share memory with the
    arrays.

    Everything else is left as it is, in particular object arrays (as EvoTorch moves only numeric info).

    Examples:
        >>> info_to_device({"x": np.ones(2), "_x": np.ones(2, dtype=bool)}, torch.device("cpu"))["x"]
        tensor([1., 1.], dtype=torch.float64)
    """
    return {key: _value_to_device(value, device) for key, value in info.items()}


def _value_to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, np.ndarray):  # (the usual value first)
        if value.dtype.kind not in "biuf":
            return value
        tensor = torch.from_numpy(value)
        return tensor if device.type == "cpu" else tensor.to(device)
    if isinstance(value, dict):
        return info_to_device(value, device)
    if isinstance(value, tuple):
        return tuple(_value_to_device(item, device) for item in value)
    return value
