"""Moving batched info to a torch device."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def info_to_device(info: dict[str, Any], device: torch.device) -> dict[str, Any]:
    """The batched ``info`` with its numeric and bool arrays (also in nested dicts) as torch tensors on
    ``device``; on the CPU they share memory with the arrays.

    Everything else is left as it is, in particular object arrays such as the final observations (as
    EvoTorch moves only numeric info): converting those item by item would cost time at every episode
    end, for values that few users read.

    Examples:
        >>> info_to_device({"x": np.ones(2), "_x": np.ones(2, dtype=bool)}, torch.device("cpu"))["x"]
        tensor([1., 1.], dtype=torch.float64)
    """
    on_cpu = device.type == "cpu"
    moved: dict[str, Any] = {}
    for key, value in info.items():
        if isinstance(value, dict):
            value = info_to_device(value, device)
        elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            value = torch.from_numpy(value) if on_cpu else torch.from_numpy(value).to(device)
        moved[key] = value
    return moved
