"""RNN, LSTM and GRU are single-step cells with torch's parameter layout and math; helpers do what they say."""

import pytest
import torch
from torch import nn
from torch.func import functional_call, vmap
from torch.nn.utils import parameters_to_vector

from vecrl_policy import GRU, LSTM, RNN, Bin, Clip, Round, Slice

CASES = [
    (lambda: RNN(5, 7), lambda: nn.RNNCell(5, 7)),
    (lambda: RNN(5, 7, "relu"), lambda: nn.RNNCell(5, 7, nonlinearity="relu")),
    (lambda: RNN(5, 7, bias=False), lambda: nn.RNNCell(5, 7, bias=False)),
    (lambda: LSTM(5, 7), lambda: nn.LSTMCell(5, 7)),
    (lambda: LSTM(5, 7, bias=False), lambda: nn.LSTMCell(5, 7, bias=False)),
    (lambda: GRU(5, 7), lambda: nn.GRUCell(5, 7)),
    (lambda: GRU(5, 7, bias=False), lambda: nn.GRUCell(5, 7, bias=False)),
]
IDS = ["rnn", "rnn-relu", "rnn-nobias", "lstm", "lstm-nobias", "gru", "gru-nobias"]


def torch_cell_step(cell: nn.Module, x: torch.Tensor, h):
    if isinstance(cell, nn.LSTMCell):
        h, c = cell(x, h)
        return h, (h, c)
    h = cell(x, h)
    return h, h


@pytest.mark.parametrize(("ours", "theirs"), CASES, ids=IDS)
def test_cells_match_torch_cells_step_by_step(ours, theirs):
    torch.manual_seed(0)
    cell, reference = ours(), theirs()
    reference.load_state_dict(cell.state_dict())  # same names and shapes
    h = h_ref = None
    for _ in range(4):
        x = torch.randn(5)
        y, h = cell(x, h)
        y_ref, h_ref = torch_cell_step(reference, x, h_ref)
        torch.testing.assert_close(y, y_ref)
        torch.testing.assert_close(h, h_ref)


@pytest.mark.parametrize(("ours", "theirs"), CASES, ids=IDS)
def test_cells_flatten_like_torch_cells(ours, theirs):
    cell, reference = ours(), theirs()
    reference.load_state_dict(cell.state_dict())
    assert torch.equal(parameters_to_vector(cell.parameters()), parameters_to_vector(reference.parameters()))


@pytest.mark.parametrize(
    "make", [lambda: RNN(3, 4), lambda: LSTM(3, 4), lambda: GRU(3, 4)], ids=["rnn", "lstm", "gru"]
)
def test_cells_vmap_over_parameter_rows(make):
    cell = make()
    params = {name: torch.randn(6, *p.shape) for name, p in cell.named_parameters()}
    xs = torch.randn(6, 3)

    def run(p, x):
        y, h = functional_call(cell, p, (x,))
        return functional_call(cell, p, (x, h))

    ys, _ = vmap(run)(params, xs)
    for i in range(6):
        expected, _ = run({k: v[i] for k, v in params.items()}, xs[i])
        torch.testing.assert_close(ys[i], expected)


def test_cells_accept_leading_batch_dimensions():
    lstm = LSTM(3, 4)
    y, (h, c) = lstm(torch.randn(2, 5, 3))
    assert y.shape == h.shape == c.shape == (2, 5, 4)


def test_lstm_state_is_the_pair_h_c_and_output_is_h():
    y, state = LSTM(3, 4)(torch.randn(3))
    assert isinstance(state, tuple) and len(state) == 2 and state[0] is y


def test_cells_reject_bad_configuration():
    with pytest.raises(ValueError, match="nonlinearity"):
        RNN(3, 4, "sigmoid")
    with pytest.raises(ValueError, match="positive sizes"):
        LSTM(0, 4)


def test_clip_bin_slice_round():
    x = torch.tensor([-3.0, -0.5, 0.25, 2.0])
    assert Clip(-1, 1)(x).tolist() == [-1.0, -0.5, 0.25, 1.0]
    assert Bin(-1, 1)(x).tolist() == [-1.0, -1.0, 1.0, 1.0]
    assert Bin(0, 10)(torch.tensor([4.0, 6.0])).tolist() == [0.0, 10.0]
    assert Slice(1, 3)(x).tolist() == [-0.5, 0.25]
    assert Slice(0, 1)(torch.ones(2, 4)).shape == (2, 1)  # last dimension only
    torch.testing.assert_close(Round(1)(torch.tensor([0.26, -1.04])), torch.tensor([0.3, -1.0]))
    with pytest.raises(ValueError, match="lb <= ub"):
        Clip(1, -1)
    with pytest.raises(ValueError, match="lb < ub"):
        Bin(1, 1)
