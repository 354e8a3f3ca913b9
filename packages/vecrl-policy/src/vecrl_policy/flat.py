"""Flat parameter vectors: where each parameter of a module lives, and the general (vmap) forward."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, vmap


@dataclass(frozen=True)
class Slot:
    """Where one parameter lives in a flat vector: ``flat[..., start:stop].view(*lead, *shape)``."""

    start: int
    stop: int
    shape: tuple[int, ...]

    def view(self, flat: torch.Tensor) -> torch.Tensor:
        """The parameter as a view of a 1-D vector, or of a 2-D batch (one row per network)."""
        return flat[..., self.start : self.stop].view(*flat.shape[:-1], *self.shape)


class ParameterLayout:
    """The order of ``module.named_parameters()`` flattened one after the other (as ``parameters_to_vector``).

    Examples:
        >>> layout = ParameterLayout(nn.Linear(3, 2))
        >>> layout.length, layout.slots["bias"]
        (8, Slot(start=6, stop=8, shape=(2,)))
    """

    def __init__(self, module: nn.Module) -> None:
        self.slots: dict[str, Slot] = {}
        offset = 0
        for name, parameter in module.named_parameters():
            self.slots[name] = Slot(offset, offset + parameter.numel(), tuple(parameter.shape))
            offset += parameter.numel()
        self.length = offset


class FunctionalNet:
    """Runs a module with parameters taken from a flat vector (1-D) or one row per network (2-D, vmapped).

    This is the general path: it works for any module, through ``torch.func.functional_call`` with the
    module's buffers on the parameters' device. ``slots`` say where each of the module's parameters
    (named as in ``module.named_parameters()``) lives in the flat vector. The vmapped functions are
    built once, here.
    """

    def __init__(self, module: nn.Module, slots: dict[str, Slot]) -> None:
        self.module = module
        self.slots = slots
        self._buffers = dict(module.named_buffers())
        self._buffers_by_device: dict[torch.device, dict[str, torch.Tensor]] = {}
        self._batched = vmap(self._call_stateless, randomness="different")
        self._batched_with_state = vmap(self._call, randomness="different")

    def __call__(self, flat: torch.Tensor, x: torch.Tensor, h: Any = None) -> Any:
        return self.call_views(self.views(flat), x, h, batched=flat.ndim == 2)

    def views(self, flat: torch.Tensor) -> dict[str, torch.Tensor]:
        """The module's parameters as views of ``flat`` (with a leading batch dimension if 2-D)."""
        return {name: slot.view(flat) for name, slot in self.slots.items()}

    def call_views(self, views: dict[str, torch.Tensor], x: torch.Tensor, h: Any, *, batched: bool) -> Any:
        """Run with parameters from ``views``; batched means one network per row of ``x`` and ``h``."""
        if not batched:
            return self._call(views, x, h)
        return self._batched(views, x) if h is None else self._batched_with_state(views, x, h)

    def _call_stateless(self, views: dict[str, torch.Tensor], x: torch.Tensor) -> Any:
        return self._call(views, x, None)

    def _call(self, views: dict[str, torch.Tensor], x: torch.Tensor, h: Any) -> Any:
        buffers = self._buffers_on(x.device)
        return functional_call(self.module, (views, buffers), (x,) if h is None else (x, h))

    def _buffers_on(self, device: torch.device) -> dict[str, torch.Tensor]:
        if device not in self._buffers_by_device:
            self._buffers_by_device[device] = {name: b.to(device) for name, b in self._buffers.items()}
        return self._buffers_by_device[device]
