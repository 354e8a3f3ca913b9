"""Chain behaves like a sequence of layers and threads each recurrent layer's own state."""

import pytest
import torch
from torch import nn

from vecrl_policy import GRU, LSTM, Chain


def test_chain_is_a_sequence_of_its_layers():
    layers = [nn.Linear(3, 4), nn.Tanh(), LSTM(4, 2)]
    chain = Chain(*layers)
    assert len(chain) == 3
    assert chain[0] is layers[0] and chain[-1] is layers[2]
    assert list(chain) == layers
    assert isinstance(chain[1:], Chain) and len(chain[1:]) == 2


def test_chain_without_recurrent_layers_returns_only_the_output():
    y = Chain(nn.Linear(3, 4), nn.Tanh())(torch.randn(3))
    assert isinstance(y, torch.Tensor) and y.shape == (4,)


def test_chain_threads_each_recurrent_layer_state():
    torch.manual_seed(0)
    lin, lstm, out, gru = nn.Linear(3, 4), LSTM(4, 5), nn.Linear(5, 2), GRU(2, 3)
    chain = Chain(lin, lstm, out, gru)
    state = None
    s_lstm = s_gru = None
    for _ in range(3):
        x = torch.randn(3)
        y, state = chain(x, state)
        a, s_lstm = lstm(lin(x), s_lstm)
        expected, s_gru = gru(out(a), s_gru)
        torch.testing.assert_close(y, expected)
        assert state[0] == () and state[2] == ()
        torch.testing.assert_close(state[1][1], s_lstm[1])
        torch.testing.assert_close(state[3], s_gru)


def test_chain_rejects_a_state_of_the_wrong_shape():
    chain = Chain(nn.Linear(3, 4), LSTM(4, 2))
    with pytest.raises(ValueError, match="one entry per layer"):
        chain(torch.randn(3), ((),))


def test_chain_rejects_layers_returning_something_else():
    class Bad(nn.Module):
        def forward(self, x):
            return [x]

    with pytest.raises(TypeError, match="Layer 1 of the chain"):
        Chain(nn.Linear(3, 3), Bad())(torch.randn(3))
