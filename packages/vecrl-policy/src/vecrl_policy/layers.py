"""Layers a policy string needs: single-step recurrent cells and small elementwise helpers.

The recurrent layers take one unbatched input and an optional state, ``forward(x, h=None) -> (y, new_h)``,
so that ``torch.func.vmap`` (and ``vecrl_policy.Policy``) can batch them over parameter rows. Their
parameters are laid out exactly like ``torch.nn.RNNCell`` / ``LSTMCell`` / ``GRUCell`` (``weight_ih``,
``weight_hh``, ``bias_ih``, ``bias_hh``, gates stacked in torch's order), so a flat parameter vector
means the same network for both.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LSTMState = tuple[torch.Tensor, torch.Tensor]

RNN_NONLINEARITIES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "relu": torch.relu,
}


class _RecurrentCell(nn.Module):
    """Parameters shared by RNN, LSTM and GRU: ``gates * hidden_size`` rows of input and hidden weights."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        gates: int,
        bias: bool,
        device: torch.device | str | None,
        dtype: torch.dtype | None,
    ) -> None:
        super().__init__()
        if int(input_size) <= 0 or int(hidden_size) <= 0:
            raise ValueError(
                f"{type(self).__name__} needs positive sizes, got input_size={input_size!r},"
                f" hidden_size={hidden_size!r}."
            )
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        rows = gates * self.hidden_size
        self.weight_ih = nn.Parameter(torch.empty(rows, self.input_size, device=device, dtype=dtype))
        self.weight_hh = nn.Parameter(torch.empty(rows, self.hidden_size, device=device, dtype=dtype))
        self.bias_ih: nn.Parameter | None
        self.bias_hh: nn.Parameter | None
        if bias:
            self.bias_ih = nn.Parameter(torch.empty(rows, device=device, dtype=dtype))
            self.bias_hh = nn.Parameter(torch.empty(rows, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as torch's cells do."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def _gates(self, x: torch.Tensor, h: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Input and hidden pre-activations; the hidden one is just the bias (or None) without a state."""
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        gh = self.bias_hh if h is None else F.linear(h, self.weight_hh, self.bias_hh)
        return gi, gh

    def extra_repr(self) -> str:
        bias = "" if self.bias_ih is not None else ", bias=False"
        return f"{self.input_size}, {self.hidden_size}{bias}"


def rnn_update(
    gi: torch.Tensor, gh: torch.Tensor | None, act: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """New RNN state from the input and hidden pre-activations (shared by every execution path)."""
    return act(gi if gh is None else gi + gh)


def lstm_update(gates: torch.Tensor, c: torch.Tensor | None) -> LSTMState:
    """New LSTM (h, c) from the summed pre-activations of the gates i, f, g, o (torch's order)."""
    hidden = gates.shape[-1] // 4
    i, f, _, o = torch.sigmoid(gates).chunk(4, dim=-1)
    g = torch.tanh(gates[..., 2 * hidden : 3 * hidden])
    c_new = i * g if c is None else torch.addcmul(f * c, i, g)
    return o * torch.tanh(c_new), c_new


def gru_update(gi: torch.Tensor, gh: torch.Tensor | None, h: torch.Tensor | None) -> torch.Tensor:
    """New GRU state from input/hidden pre-activations of the gates r, z, n (torch's order)."""
    if gh is None:
        gh = torch.zeros_like(gi)
    hidden = gi.shape[-1] // 3
    r, z = torch.sigmoid(gi[..., : 2 * hidden] + gh[..., : 2 * hidden]).chunk(2, dim=-1)
    n = torch.tanh(torch.addcmul(gi[..., 2 * hidden :], r, gh[..., 2 * hidden :]))
    return torch.addcmul(n, z, n, value=-1.0) if h is None else torch.lerp(n, h, z)


class RNN(_RecurrentCell):
    """Single-step Elman RNN: ``h' = act(W_ih x + b_ih + W_hh h + b_hh)``; output and state are ``h'``.

    Examples:
        >>> rnn = RNN(4, 8)
        >>> y, h = rnn(torch.zeros(4))
        >>> y, h = rnn(torch.zeros(4), h)
        >>> y.shape
        torch.Size([8])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        nonlinearity: str = "tanh",
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        if nonlinearity not in RNN_NONLINEARITIES:
            raise ValueError(
                f"RNN nonlinearity must be one of {sorted(RNN_NONLINEARITIES)}, got {nonlinearity!r}."
            )
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, 1, bias, device, dtype)

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        gi, gh = self._gates(x, h)
        y = rnn_update(gi, gh, RNN_NONLINEARITIES[self.nonlinearity])
        return y, y

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, nonlinearity={self.nonlinearity!r}"


class LSTM(_RecurrentCell):
    """Single-step LSTM; the state is the pair ``(h, c)`` and the output is ``h``.

    Examples:
        >>> lstm = LSTM(4, 8)
        >>> y, (h, c) = lstm(torch.zeros(4))
        >>> y, state = lstm(torch.zeros(4), (h, c))
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(input_size, hidden_size, 4, bias, device, dtype)

    def forward(self, x: torch.Tensor, h: LSTMState | None = None) -> tuple[torch.Tensor, LSTMState]:
        h_prev, c_prev = (None, None) if h is None else h
        gi, gh = self._gates(x, h_prev)
        h_new, c_new = lstm_update(gi if gh is None else gi + gh, c_prev)
        return h_new, (h_new, c_new)


class GRU(_RecurrentCell):
    """Single-step GRU; the output and the state are the new ``h``.

    Examples:
        >>> gru = GRU(4, 8)
        >>> y, h = gru(torch.zeros(4))
        >>> y, h = gru(torch.zeros(4), h)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__(input_size, hidden_size, 3, bias, device, dtype)

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        gi, gh = self._gates(x, h)
        y = gru_update(gi, gh, h)
        return y, y


class Clip(nn.Module):
    """Clamp every value into ``[lb, ub]``.

    Examples:
        >>> Clip(-1, 1)(torch.tensor([-3.0, 0.5, 2.0]))
        tensor([-1.0000,  0.5000,  1.0000])
    """

    def __init__(self, lb: float, ub: float) -> None:
        super().__init__()
        if not float(lb) <= float(ub):
            raise ValueError(f"Clip needs lb <= ub, got lb={lb!r}, ub={ub!r}.")
        self.lb = float(lb)
        self.ub = float(ub)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(self.lb, self.ub)

    def extra_repr(self) -> str:
        return f"lb={self.lb}, ub={self.ub}"


class Bin(nn.Module):
    """Snap every value to ``lb`` or ``ub``, whichever side of their midpoint it lies on.

    Examples:
        >>> Bin(-1, 1)(torch.tensor([-0.2, 0.3]))
        tensor([-1.,  1.])
    """

    def __init__(self, lb: float, ub: float) -> None:
        super().__init__()
        if not float(lb) < float(ub):
            raise ValueError(f"Bin needs lb < ub, got lb={lb!r}, ub={ub!r}.")
        self.lb = float(lb)
        self.ub = float(ub)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        half_width = (self.ub - self.lb) / 2.0
        middle = (self.ub + self.lb) / 2.0
        return torch.sign(x - middle) * half_width + middle

    def extra_repr(self) -> str:
        return f"lb={self.lb}, ub={self.ub}"


class Slice(nn.Module):
    """Keep the entries ``from_index:to_index`` of the last dimension.

    Examples:
        >>> Slice(1, 3)(torch.arange(5.0))
        tensor([1., 2.])
    """

    def __init__(self, from_index: int, to_index: int) -> None:
        super().__init__()
        self.from_index = int(from_index)
        self.to_index = int(to_index)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[..., self.from_index : self.to_index]

    def extra_repr(self) -> str:
        return f"from_index={self.from_index}, to_index={self.to_index}"


class Round(nn.Module):
    """Round every value to ``ndigits`` decimal digits.

    Examples:
        >>> Round(1)(torch.tensor([0.26, -1.04]))
        tensor([ 0.3000, -1.0000])
    """

    def __init__(self, ndigits: int = 0) -> None:
        super().__init__()
        self.ndigits = int(ndigits)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.round(x, decimals=self.ndigits)

    def extra_repr(self) -> str:
        return f"ndigits={self.ndigits}"
