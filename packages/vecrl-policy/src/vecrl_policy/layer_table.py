"""The one table of the layers vecrl-policy knows: for each module type, its kind, the attributes that
configure it, how the batched torch path computes it, and whether it has a jax twin (or why not).

``vecrl_policy.fastpath`` (batched torch), ``vecrl_policy.layer_specs`` (what the fused program can
run) and ``vecrl_policy.jax_layers`` (the twins, by kind) read it, so their coverage agrees: a layer
the fast path takes either runs fused or is refused with the reason written here.

Examples:
    >>> LAYERS[nn.LeakyReLU].settings
    ('negative_slope',)
    >>> why_not_fused(nn.Sequential(nn.Linear(2, 2), nn.Conv1d(1, 1, 1)))
    'Conv1d is not among the layers with a jax twin (Linear, RNN, LSTM, GRU and the parameter-free layers of vecrl_policy.layer_table)'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from vecrl_policy import layers
from vecrl_policy.chain import Chain


@dataclass(frozen=True)
class Layer:
    """One kind of layer.

    - ``kind``: its name, the key of its jax twin in ``vecrl_policy.jax_layers``.
    - ``settings``: the attributes that configure it (an activation's ``alpha``, an RNN's ``nonlinearity``).
    - ``weights``: True for the layers with parameters (``Linear`` and the recurrent cells), which the
      fast path batches as matmuls; the others are parameter-free and act elementwise or on the last
      dimension.
    - ``function``: the batched torch function of a parameter-free layer (None: the module's own
      ``forward``, which is fine on any batch layout).
    - ``no_twin``: why it has no jax twin (None: it has one).
    """

    kind: str
    settings: tuple[str, ...] = ()
    weights: bool = False
    function: Callable[[torch.Tensor], torch.Tensor] | None = None
    no_twin: str | None = None


def _table(*entries: tuple[type[nn.Module], tuple[str, ...]]) -> dict[type[nn.Module], Layer]:
    return {module: Layer(module.__name__, settings) for module, settings in entries}


#: Every layer vecrl-policy runs batched, by module type.
LAYERS: dict[type[nn.Module], Layer] = {
    nn.Linear: Layer("Linear", weights=True),
    layers.RNN: Layer("RNN", ("nonlinearity",), weights=True),
    layers.LSTM: Layer("LSTM", weights=True),
    layers.GRU: Layer("GRU", weights=True),
    nn.Tanh: Layer("Tanh", function=torch.tanh),
    nn.ReLU: Layer("ReLU", function=torch.relu),
    nn.Sigmoid: Layer("Sigmoid", function=torch.sigmoid),
    **_table(
        (nn.Identity, ()),
        (nn.ELU, ("alpha",)),
        (nn.SELU, ()),
        (nn.CELU, ("alpha",)),
        (nn.GELU, ("approximate",)),
        (nn.SiLU, ()),
        (nn.Mish, ()),
        (nn.LeakyReLU, ("negative_slope",)),
        (nn.Hardtanh, ("min_val", "max_val")),
        (nn.ReLU6, ()),
        (nn.Softplus, ("beta", "threshold")),
        (nn.Softsign, ()),
        (nn.Tanhshrink, ()),
        (nn.Hardswish, ()),
        (nn.Hardsigmoid, ()),
        (layers.Clip, ("lb", "ub")),
        (layers.Bin, ("lb", "ub")),
        (layers.Round, ("ndigits",)),
        (layers.Slice, ("from_index", "to_index")),
    ),
}


def why_not_fused(module: nn.Module) -> str:
    """Why a network has no jax twin: the first of its layers that the table gives none (or the network
    as a whole, where every layer has one: a layer used twice, a hook or a buffer)."""
    for layer in module.modules():
        entry = LAYERS.get(type(layer))
        if entry is not None and entry.no_twin is not None:
            return f"{entry.kind} has no jax twin: {entry.no_twin}"
        if entry is None and type(layer) not in (nn.Sequential, Chain):
            return (
                f"{type(layer).__name__} is not among the layers with a jax twin (Linear, RNN, LSTM, GRU and"
                " the parameter-free layers of vecrl_policy.layer_table)"
            )
    return (
        "its layers each have a jax twin, but the network shares a parameter between layers, carries a hook or"
        " a buffer, or runs a recurrent layer inside an nn.Sequential (which hands it no state)"
    )
