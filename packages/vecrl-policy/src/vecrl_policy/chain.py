"""Chain: a sequence of layers that threads each recurrent layer's own hidden state."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn


class Chain(nn.Sequential):
    """Run layers one after the other, like ``nn.Sequential``, but recurrent layers keep their state.

    A layer is recurrent when it returns ``(y, h)``; it then receives its own ``h`` back on the next
    call. The chain's state is a tuple with one entry per layer (``()`` for a non-recurrent layer), so
    ``state[i]`` belongs to ``chain[i]``. A chain without recurrent layers returns just ``y``.

    Examples:
        >>> from vecrl_policy import LSTM
        >>> net = Chain(nn.Linear(4, 8), nn.Tanh(), LSTM(8, 2))
        >>> y, state = net(torch.zeros(4))
        >>> y, state = net(torch.zeros(4), state)
        >>> len(net), state[0], state[2][0].shape
        (3, (), torch.Size([2]))
    """

    def forward(self, x: torch.Tensor, h: tuple[Any, ...] | None = None) -> Any:
        if h is not None and (not isinstance(h, tuple) or len(h) != len(self)):
            raise ValueError(
                f"A Chain of {len(self)} layers expects its state as a tuple with one entry per layer,"
                f" got {type(h).__name__}{f' of length {len(h)}' if isinstance(h, tuple) else ''}."
                " Pass back the state the chain returned, or None to start afresh."
            )
        states: list[Any] = []
        recurrent = False
        for index, layer in enumerate(self):
            layer_h = () if h is None else h[index]
            result = layer(x) if isinstance(layer_h, tuple) and len(layer_h) == 0 else layer(x, layer_h)
            if isinstance(result, torch.Tensor):
                x, layer_h = result, ()
            elif isinstance(result, tuple) and len(result) == 2:
                x, layer_h = result
                recurrent = True
            else:
                raise TypeError(
                    f"Layer {index} of the chain ({type(layer).__name__}) returned {type(result).__name__};"
                    " expected a tensor, or a pair (output, state) from a recurrent layer."
                )
            states.append(layer_h)
        return (x, tuple(states)) if recurrent else x
