"""Policy's construction, state handling, errors, gradients, devices and export."""

import pytest
import torch
from policy_cases import NETWORKS, OBS, PATHS, DictStateRNN
from torch import nn
from torch.nn.utils import parameters_to_vector

from vecrl_policy import LSTM, RNN, Chain, NetParsingError, Policy, str_to_net


def test_net_may_be_a_module_a_callable_with_kwargs_or_a_string_with_constants():
    module = nn.Linear(3, 2)
    assert Policy(module).wrapped_module is module
    assert isinstance(Policy(nn.Linear, in_features=3, out_features=2).wrapped_module, nn.Linear)
    net = Policy("Linear(obs, 4) >> LSTM(4, act)", obs=3, act=2).wrapped_module
    assert isinstance(net, Chain) and net[1].hidden_size == 2


def test_construction_errors_say_what_to_do():
    with pytest.raises(ValueError, match="Drop them, or pass the class"):
        Policy(nn.Linear(3, 2), in_features=3)
    with pytest.raises(TypeError, match="must return an nn.Module"):
        Policy(lambda: "not a module")
    with pytest.raises(TypeError, match="nn.Module, a callable"):
        Policy(42)  # type: ignore[arg-type]


def test_parameter_length_and_order_follow_named_parameters():
    policy = Policy(NETWORKS["lstm-chain"])
    module = policy.wrapped_module
    vector = parameters_to_vector(module.parameters())
    assert policy.parameter_length == vector.numel()
    torch.testing.assert_close(policy.to_torch_module(vector).state_dict(), module.state_dict())


def test_parameters_property_is_the_given_tensor():
    policy = Policy(nn.Linear(3, 2))
    assert policy.parameters is None
    p = torch.randn(4, 8)
    policy.set_parameters(p)
    assert policy.parameters is p


def test_recurrent_state_is_kept_between_calls_and_cleared_by_reset():
    policy = Policy("RNN(3, 4)")
    policy.set_parameters(torch.randn(policy.parameter_length))
    assert policy.h is None
    x = torch.ones(3)
    first = policy(x)
    assert torch.equal(policy.h, first)
    assert not torch.equal(policy(x), first)
    policy.reset()
    assert policy.h is None
    torch.testing.assert_close(policy(x), first)


def test_non_recurrent_networks_have_no_state():
    policy = Policy(NETWORKS["mlp"])
    policy.set_parameters(torch.randn(3, policy.parameter_length))
    policy(torch.randn(3, OBS))
    assert policy.h is None


@pytest.mark.parametrize(
    "indices",
    [[0, 2], torch.tensor([0, 2]), torch.tensor([True, False, True]), [True, False, True], [-3, -1]],
    ids=["list", "tensor", "mask", "bool-list", "negative"],
)
def test_reset_accepts_index_lists_tensors_and_masks(indices):
    policy = Policy("Linear(3, 4) >> LSTM(4, 2)")
    policy.set_parameters(torch.randn(3, policy.parameter_length))
    policy(torch.randn(3, 3))
    policy.reset(indices)
    h, c = policy.h[1]
    assert h[[0, 2]].eq(0).all() and c[[0, 2]].eq(0).all()
    assert h[1].ne(0).all() and c[1].ne(0).all()


def test_reset_by_default_leaves_an_output_that_aliases_the_state_untouched():
    policy = Policy(RNN(3, 4))  # its output is its state
    policy.set_parameters(torch.randn(2, policy.parameter_length))
    y = policy(torch.ones(2, 3))
    kept = y.clone()
    policy.reset([0])
    assert torch.equal(y, kept)
    assert policy.h[0].eq(0).all()
    y = policy(torch.ones(2, 3))
    policy.reset([1], copy=False)  # in place: the output that aliases the state goes too
    assert y[1].eq(0).all() and y[0].ne(0).all()


def test_reset_rows_works_for_nested_dict_and_list_states():
    policy = Policy(DictStateRNN)
    policy.set_parameters(torch.randn(3, policy.parameter_length))
    policy(torch.randn(3, OBS))
    policy(torch.randn(3, OBS))
    policy.reset(torch.tensor([1]))
    assert policy.h["steps"][0].tolist() == [2.0, 0.0, 2.0]
    assert policy.h["h"][1].eq(0).all()


@pytest.mark.parametrize(
    ("parameters", "match"),
    [
        (torch.randn(7), r"shape \(8,\) for one network or \(num_networks, 8\)"),
        (torch.randn(3, 9), r"got shape \(3, 9\)"),
        (torch.randn(2, 3, 8), r"got shape \(2, 3, 8\)"),
        (torch.randn(()), r"got shape \(\)"),
    ],
)
def test_wrong_parameter_shapes_are_value_errors(parameters, match):
    with pytest.raises(ValueError, match=match):
        Policy(nn.Linear(3, 2)).set_parameters(parameters)


def test_parameters_must_be_floating_point_tensors():
    policy = Policy(nn.Linear(3, 2))
    with pytest.raises(TypeError, match="torch.as_tensor"):
        policy.set_parameters([0.0] * 8)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="floating-point"):
        policy.set_parameters(torch.zeros(8, dtype=torch.int64))


def test_observation_batch_must_match_parameter_rows():
    policy = Policy(nn.Linear(3, 2))
    policy.set_parameters(torch.randn(4, 8))
    with pytest.raises(ValueError, match=r"holds 4 parameter rows.*got shape \(3, 3\)"):
        policy(torch.randn(3, 3))
    with pytest.raises(ValueError, match="batch of 4 observations"):
        policy(torch.tensor(1.0))


def test_calling_before_set_parameters_is_an_error():
    with pytest.raises(ValueError, match="set_parameters"):
        Policy(nn.Linear(3, 2))(torch.randn(3))


def test_observations_must_be_tensors():
    policy = Policy(nn.Linear(3, 2))
    policy.set_parameters(torch.randn(8))
    with pytest.raises(TypeError, match="convert_to_torch"):
        policy([1.0, 2.0, 3.0])  # type: ignore[arg-type]


def test_row_updates_are_validated_before_anything_changes():
    policy = Policy("LSTM(3, 2)")
    with pytest.raises(ValueError, match="needs 2-D parameters set before"):
        policy.set_parameters(torch.randn(1, policy.parameter_length), [0])
    base = torch.randn(4, policy.parameter_length)
    policy.set_parameters(base)
    policy(torch.randn(4, 3))
    state = policy.h
    bad_calls = [
        (torch.randn(2, policy.parameter_length), [0], "Expected 1 replacement rows"),
        (torch.randn(2, policy.parameter_length), [1, -3], "more than once"),
        (torch.randn(policy.parameter_length), [0], "Expected 1 replacement rows"),
        (torch.randn(1, policy.parameter_length), [4], r"must lie in \[-4, 4\)"),
        (torch.randn(1, policy.parameter_length), [True, False], "must have 4 entries"),
        (torch.randn(1, policy.parameter_length), torch.tensor([0.5]), "row numbers or a boolean mask"),
        (torch.randn(1, policy.parameter_length), torch.zeros(1, 1, dtype=torch.long), "1-D"),
    ]
    for rows, indices, match in bad_calls:
        with pytest.raises(ValueError, match=match):
            policy.set_parameters(rows, indices)
    with pytest.raises(ValueError, match=r"reset=False\) must keep the batch shape"):
        policy.set_parameters(torch.randn(3, policy.parameter_length), reset=False)
    assert policy.parameters is base and policy.h is state


def test_indices_must_be_a_collection_of_rows():
    policy = Policy("LSTM(3, 2)")
    policy.set_parameters(torch.randn(4, policy.parameter_length))
    with pytest.raises(TypeError, match=r"pass \[i\]"):
        policy.reset(2)  # type: ignore[arg-type]


def test_reset_rows_needs_a_batch():
    policy = Policy("LSTM(3, 2)")
    policy.set_parameters(torch.randn(policy.parameter_length))
    with pytest.raises(ValueError, match="call reset"):
        policy.reset([0])


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "vmap-path"])
def test_gradients_flow_into_parameters_that_require_them(fast):
    torch.manual_seed(0)
    policy = Policy(NETWORKS["lstm-chain"])
    policy.fast_path = fast
    parameters = (torch.randn(3, policy.parameter_length) * 0.5).requires_grad_()
    policy.set_parameters(parameters)
    xs = [torch.randn(3, OBS) for _ in range(4)]
    loss = torch.zeros(())
    for step, x in enumerate(xs):
        if step == 2:
            policy.reset([1])  # row 1 starts a new episode: no gradient through its old state
        loss = loss + policy(x).square().sum()
    (grad,) = torch.autograd.grad(loss, parameters)

    nets = [policy.to_torch_module(row.detach()) for row in parameters]
    reference = torch.zeros(())
    for i, net in enumerate(nets):
        h = None
        for step, x in enumerate(xs):
            if step == 2 and i == 1:
                h = None
            y, h = net(x[i], h)
            reference = reference + y.square().sum()
    reference.backward()
    expected = torch.stack([torch.cat([p.grad.flatten() for p in net.parameters()]) for net in nets])
    torch.testing.assert_close(grad, expected)


def test_both_paths_give_the_same_gradients_and_backward_can_run_per_call():
    grads = []
    for fast in (True, False):
        torch.manual_seed(0)
        policy = Policy(NETWORKS["gru-chain"])
        policy.fast_path = fast
        parameters = (torch.randn(4, policy.parameter_length) * 0.5).requires_grad_()
        policy.set_parameters(parameters)
        for _ in range(3):  # one backward per call, reusing the views bound at set_parameters
            policy(torch.randn(4, OBS)).sum().backward()
            policy.reset()
        grads.append(parameters.grad)
    torch.testing.assert_close(grads[0], grads[1])


def test_no_gradients_are_tracked_for_plain_parameters():
    policy = Policy(NETWORKS["mlp"])
    policy.set_parameters(torch.randn(2, policy.parameter_length))
    assert not policy(torch.randn(2, OBS)).requires_grad


@pytest.mark.parametrize(("name", "fast"), PATHS)
def test_parameters_on_a_device_run_there(name, fast):
    policy = Policy(NETWORKS[name])
    policy.fast_path = fast
    policy.set_parameters(torch.zeros(3, policy.parameter_length, device="meta"))
    y = policy(torch.zeros(3, OBS, device="meta"))
    assert y.device.type == "meta"
    policy.set_parameters(torch.zeros(policy.parameter_length, device="meta"))
    assert policy(torch.zeros(OBS, device="meta")).device.type == "meta"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_parameters_on_cuda_run_on_cuda():
    policy = Policy(NETWORKS["lstm-chain"])
    policy.set_parameters(torch.randn(3, policy.parameter_length, device="cuda"))
    assert policy(torch.randn(3, OBS, device="cuda")).is_cuda


def test_buffers_are_used_on_the_general_path():
    policy = Policy(DictStateRNN)
    policy.set_parameters(torch.ones(2, policy.parameter_length) * 10)
    y = policy(torch.ones(2, OBS))
    torch.testing.assert_close(y, torch.tensor([0.5, 2.0, -1.0]).expand(2, 3))  # tanh saturates at 1


def test_to_torch_module_is_a_standalone_copy_with_those_parameters():
    policy = Policy(NETWORKS["lstm-chain"])
    vector = torch.randn(policy.parameter_length)
    net = policy.to_torch_module(vector)
    assert net is not policy.wrapped_module
    torch.testing.assert_close(parameters_to_vector(net.parameters()), vector)
    with torch.no_grad():
        next(net.parameters()).zero_()
    assert next(policy.wrapped_module.parameters()).ne(0).any()
    meta = policy.to_torch_module(torch.zeros(policy.parameter_length, device="meta"))
    assert next(meta.parameters()).device.type == "meta"
    with pytest.raises(ValueError, match=r"shape \(\d+,\)"):
        policy.to_torch_module(torch.zeros(2, policy.parameter_length))


def test_recurrent_layers_inside_nn_sequential_behave_as_torch_makes_them():
    policy = Policy(nn.Sequential(nn.Linear(3, 4), LSTM(4, 2), nn.Linear(2, 2)))
    assert not policy.fast_path  # nn.Sequential hands the (y, state) pair on to the next layer
    policy.set_parameters(torch.randn(2, policy.parameter_length))
    with pytest.raises(TypeError):
        policy(torch.randn(2, 3))


def test_fast_path_can_be_switched_off_but_not_forced_on():
    policy = Policy(LSTM(3, 2))
    assert policy.fast_path
    policy.fast_path = False
    assert not policy.fast_path
    with pytest.raises(ValueError, match="does not support this network"):
        Policy(DictStateRNN).fast_path = True


def test_unusual_observation_shapes_fall_back_to_the_general_path():
    policy = Policy(nn.Linear(4, 2))
    parameters = torch.randn(3, policy.parameter_length)
    policy.set_parameters(parameters)
    x = torch.randn(3, 5, 4)  # five observations per network
    expected = torch.stack([policy.to_torch_module(parameters[i])(x[i]) for i in range(3)])
    torch.testing.assert_close(policy(x), expected)


@pytest.mark.parametrize("network", ["Linear(4, 2)", "Linear(4, 8) >> Tanh() >> LSTM(8, 2)", "GRU(4, 2)"])
def test_an_observation_of_the_wrong_length_names_the_length_the_network_takes(network):
    policy = Policy(network)
    policy.set_parameters(torch.zeros(3, policy.parameter_length))
    with pytest.raises(
        ValueError,
        match=r"takes observations of length 4 \(its first layer is .*\), got a tensor of shape \(3, 5\)",
    ):
        policy(torch.zeros(3, 5))


def test_a_module_of_the_users_own_reads_its_input_as_it_likes():
    class FirstTwo(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 1)

        def forward(self, x):
            return self.linear(x[..., :2])

    policy = Policy(FirstTwo())
    policy.set_parameters(torch.zeros(3, policy.parameter_length))
    assert policy(torch.zeros(3, 5)).shape == (3, 1)


def test_lazy_layers_are_refused_with_what_to_write_instead():
    with pytest.raises(
        NetParsingError, match=r"LazyLinear makes its parameters on its first call.*use Linear"
    ):
        str_to_net("LazyLinear(3)")
