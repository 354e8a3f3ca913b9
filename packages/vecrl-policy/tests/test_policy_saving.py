"""A Policy is saved as users save evolved solutions (pickle, torch.save) and keeps the reference's errors."""

import io
import pickle

import pytest
import torch
from torch import nn

from vecrl_policy import Policy


def round_trips():
    def with_pickle(policy):
        return pickle.loads(pickle.dumps(policy))

    def with_torch_save(policy):
        buffer = io.BytesIO()
        torch.save(policy, buffer)
        buffer.seek(0)
        return torch.load(buffer, weights_only=False)

    return [with_pickle, with_torch_save]


@pytest.mark.parametrize("round_trip", round_trips(), ids=["pickle", "torch.save"])
@pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "vmap"])
def test_a_recurrent_batch_round_trips_with_its_parameters_state_and_path(round_trip, fast_path):
    policy = Policy("Linear(3, 8) >> Tanh() >> LSTM(8, 2)")
    policy.fast_path = fast_path
    policy.set_parameters(torch.randn(4, policy.parameter_length, generator=torch.Generator().manual_seed(0)))
    x = torch.randn(4, 3)
    policy(x)  # some hidden state to keep
    loaded = round_trip(policy)
    assert loaded.fast_path is fast_path
    torch.testing.assert_close(loaded.parameters, policy.parameters)
    torch.testing.assert_close(loaded.h, policy.h)
    torch.testing.assert_close(loaded(x), policy(x))  # the next step continues from the same state


@pytest.mark.parametrize("round_trip", round_trips(), ids=["pickle", "torch.save"])
def test_a_policy_without_parameters_and_one_of_a_plain_module_round_trip(round_trip):
    loaded = round_trip(Policy(nn.Sequential(nn.Linear(2, 2), nn.ReLU())))
    assert loaded.parameters is None and loaded.parameter_length == 6
    loaded.set_parameters(torch.ones(6))
    assert loaded(torch.ones(2)).tolist() == [3.0, 3.0]


def test_calling_before_set_parameters_is_a_value_error_as_in_evotorch():
    with pytest.raises(ValueError, match=r"call policy.set_parameters\(...\) first"):
        Policy("Linear(2, 1)")(torch.ones(2))


def test_fast_path_must_be_a_bool():
    policy = Policy("Linear(2, 1)")
    with pytest.raises(TypeError, match="fast_path must be True or False, but got 'yes'"):
        policy.fast_path = "yes"
