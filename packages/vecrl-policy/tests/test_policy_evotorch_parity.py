"""The same flat vectors mean the same recurrent networks as in EvoTorch 0.6.1 (checked when it is installed)."""

import pytest
import torch

from vecrl_policy import Policy

NETWORKS = ["LSTM(5, 4) >> Linear(4, 3)", "Linear(5, 4) >> Tanh() >> RNN(4, 4) >> Linear(4, 3)"]


@pytest.mark.parametrize("text", NETWORKS)
def test_batched_outputs_equal_evotorch_policy_on_the_same_parameters(text):
    evotorch_vecrl = pytest.importorskip("evotorch.neuroevolution.net.vecrl")
    ours, theirs = Policy(text), evotorch_vecrl.Policy(text)
    assert ours.parameter_length == theirs.parameter_length
    parameters = torch.randn(6, ours.parameter_length)
    ours.set_parameters(parameters)
    theirs.set_parameters(parameters)
    for step in range(4):
        if step == 2:
            ours.reset([1, 3])
            theirs.reset(torch.tensor([1, 3]))
        x = torch.randn(6, 5)
        torch.testing.assert_close(ours(x), theirs(x))
