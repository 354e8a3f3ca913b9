"""Networks shared by the policy tests, and a per-row reference built from standalone nn.Module copies."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from vecrl_policy import LSTM, Chain, Policy

OBS = 5


class DictStateRNN(nn.Module):
    """A recurrent module outside the fast path: dict state, a buffer, and a parameter-free layer."""

    def __init__(self) -> None:
        super().__init__()
        self.cell = nn.Linear(OBS + 3, 3)
        self.register_buffer("scale", torch.tensor([0.5, 2.0, -1.0]))

    def forward(self, x: torch.Tensor, h: dict[str, Any] | None = None):
        if h is None:
            h = {"h": x.new_zeros(3), "steps": [x.new_zeros(())]}
        new = torch.tanh(self.cell(torch.cat([x, h["h"]]))) * self.scale
        return new, {"h": new, "steps": [h["steps"][0] + 1]}


def tied_weights() -> nn.Module:
    first, second = nn.Linear(OBS, OBS), nn.Linear(OBS, OBS)
    second.weight = first.weight  # one parameter used twice: outside the fast path
    return nn.Sequential(first, nn.Tanh(), second, nn.Linear(OBS, 3))


def linear_with_hook() -> nn.Module:
    hooked = nn.Linear(4, 3)
    hooked.register_forward_hook(lambda module, inputs, output: output * 2.0)
    return Chain(nn.Linear(OBS, 4), LSTM(4, 4), hooked)


NETWORKS: dict[str, Any] = {
    "mlp": "Linear(5, 8) >> Tanh() >> Linear(8, 8) >> ReLU() >> Linear(8, 3) >> Sigmoid()",
    "lstm-chain": "Linear(5, 6) >> Tanh() >> LSTM(6, 4) >> Linear(4, 3)",
    "gru-chain": "GRU(5, 4) >> Linear(4, 3) >> Clip(-0.5, 0.5)",
    "rnn-relu": "RNN(5, 4, 'relu') >> Linear(4, 3, bias=False) >> Slice(0, 2)",
    "cells-without-bias": "LSTM(5, 4, bias=False) >> GRU(4, 3, bias=False) >> RNN(3, 3, bias=False)",
    "bare-lstm": lambda: LSTM(OBS, 3),
    "sequential": lambda: nn.Sequential(nn.Linear(OBS, 4), nn.ELU(), nn.Linear(4, 3)),
    "nested-chains": lambda: Chain(Chain(nn.Linear(OBS, 4), LSTM(4, 4)), nn.Tanh(), Chain(nn.Linear(4, 3))),
    "layernorm-inside-a-chain": "Linear(5, 6) >> LayerNorm(6) >> Tanh() >> LSTM(6, 4) >> Linear(4, 3)",
    "custom-recurrent-inside-a-chain": lambda: Chain(nn.Linear(OBS, OBS), DictStateRNN(), nn.Linear(3, 3)),
    "custom-stateless-inside-a-chain": lambda: Chain(nn.Linear(OBS, 4), nn.LayerNorm(4), nn.Softmax(dim=-1)),
    "hooked-layer-inside-a-chain": linear_with_hook,
    "dict-state-with-buffer": DictStateRNN,
    "tied-weights": tied_weights,
}
FAST = set(NETWORKS) - {"dict-state-with-buffer", "tied-weights"}

#: (network name, whether to use the fast path): every network on the vmap path, fast-path ones on both.
PATHS = [
    pytest.param(name, fast, id=f"{name}-{'fast' if fast else 'vmap'}")
    for name in sorted(NETWORKS)
    for fast in (True, False)
    if name in FAST or not fast
]


class RowByRow:
    """The reference: one standalone nn.Module per parameter row, each with its own state."""

    def __init__(self, policy: Policy, parameters: torch.Tensor) -> None:
        self.modules = [policy.to_torch_module(row) for row in parameters]
        self.states: list[Any] = [None] * len(self.modules)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        outputs = []
        for i, module in enumerate(self.modules):
            result = module(x[i]) if self.states[i] is None else module(x[i], self.states[i])
            if isinstance(result, tuple):
                result, self.states[i] = result
            outputs.append(result)
        return torch.stack(outputs)

    def reset(self, rows: list[int]) -> None:
        for i in rows:
            self.states[i] = None

    def replace(self, rows: list[int], policy: Policy, parameters: torch.Tensor) -> None:
        for i, row in zip(rows, parameters, strict=True):
            self.modules[i] = policy.to_torch_module(row)
            self.states[i] = None
