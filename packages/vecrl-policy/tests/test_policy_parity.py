"""A batched Policy computes, row by row, what a standalone nn.Module with that row's parameters computes."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from policy_cases import FAST, NETWORKS, OBS, PATHS, RowByRow

from vecrl_policy import Policy


def make_policy(spec, fast: bool) -> Policy:
    policy = Policy(spec)
    if not fast:
        policy.fast_path = False
    return policy


def parameters_for(policy: Policy, rows: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(rows, policy.parameter_length, generator=generator) * 0.7


@pytest.mark.parametrize(("name", "fast"), PATHS)
def test_batched_outputs_match_per_row_modules_with_partial_resets(name, fast):
    policy = make_policy(NETWORKS[name], fast)
    parameters = parameters_for(policy, 6)
    policy.set_parameters(parameters)
    reference = RowByRow(policy, parameters)
    resets = {
        2: [1, 4],
        3: torch.tensor([True, False, False, False, False, True]),
        5: torch.tensor([0, 2, 3]),
    }
    for step in range(7):
        if step in resets:
            rows = resets[step]
            policy.reset(rows)
            is_mask = isinstance(rows, torch.Tensor) and rows.dtype == torch.bool
            reference.reset(rows.nonzero().flatten().tolist() if is_mask else [int(i) for i in rows])
        x = torch.randn(6, OBS)
        torch.testing.assert_close(policy(x), reference(x))


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_fast_path_is_used_exactly_for_known_layers(name):
    assert Policy(NETWORKS[name]).fast_path == (name in FAST)


@pytest.mark.parametrize("name", sorted(FAST))
def test_fast_and_vmap_paths_agree_including_hidden_state(name):
    fast, general = make_policy(NETWORKS[name], True), make_policy(NETWORKS[name], False)
    parameters = parameters_for(fast, 9)
    fast.set_parameters(parameters)
    general.set_parameters(parameters)
    for _ in range(4):
        x = torch.randn(9, OBS)
        torch.testing.assert_close(fast(x), general(x))
        torch.testing.assert_close(fast.h, general.h)


@pytest.mark.parametrize(("name", "fast"), PATHS)
def test_one_network_with_1d_parameters_matches_its_module(name, fast):
    policy = make_policy(NETWORKS[name], fast)
    vector = parameters_for(policy, 1)[0]
    policy.set_parameters(vector)
    reference = RowByRow(policy, vector.unsqueeze(0))
    for step in range(4):
        if step == 2:
            policy.reset()
            reference.reset([0])
        x = torch.randn(OBS)
        torch.testing.assert_close(policy(x), reference(x.unsqueeze(0))[0])


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "vmap-path"])
def test_set_parameters_on_some_rows_replaces_those_networks_and_resets_them(fast):
    policy = make_policy(NETWORKS["lstm-chain"], fast)
    parameters = parameters_for(policy, 5)
    given_tensor = parameters.clone()
    policy.set_parameters(parameters)
    reference = RowByRow(policy, parameters)
    for _ in range(2):
        x = torch.randn(5, OBS)
        torch.testing.assert_close(policy(x), reference(x))
    new_rows = parameters_for(policy, 2, seed=1)
    policy.set_parameters(new_rows, [3, 0])
    reference.replace([3, 0], policy, new_rows)
    assert torch.equal(parameters, given_tensor), "the tensor given before must not be modified"
    assert torch.equal(policy.parameters[[3, 0]], new_rows)
    for _ in range(3):
        x = torch.randn(5, OBS)
        torch.testing.assert_close(policy(x), reference(x))


def test_set_parameters_on_some_rows_without_reset_keeps_their_state():
    policy = Policy(NETWORKS["gru-chain"])
    parameters = parameters_for(policy, 3)
    policy.set_parameters(parameters)
    policy(torch.randn(3, OBS))
    before = policy.h
    policy.set_parameters(parameters[:1], torch.tensor([True, False, False]), reset=False)
    assert policy.h is before


@given(
    rows=st.integers(1, 7),
    plan=st.lists(st.lists(st.booleans(), min_size=7, max_size=7), min_size=1, max_size=5),
    fast=st.booleans(),
)
@settings(max_examples=15, deadline=None, database=None)
def test_any_reset_pattern_matches_per_row_modules(rows, plan, fast):
    policy = make_policy(NETWORKS["lstm-chain"], fast)
    parameters = parameters_for(policy, rows)
    policy.set_parameters(parameters)
    reference = RowByRow(policy, parameters)
    for mask in plan:
        mask = torch.tensor(mask[:rows])
        policy.reset(mask)
        reference.reset(mask.nonzero().flatten().tolist())
        x = torch.randn(rows, OBS)
        torch.testing.assert_close(policy(x), reference(x))


LAYER_MENU = {
    "linear": lambda n, m: f"Linear({n}, {m})",
    "linear-no-bias": lambda n, m: f"Linear({n}, {m}, bias=False)",
    "rnn": lambda n, m: f"RNN({n}, {m})",
    "lstm": lambda n, m: f"LSTM({n}, {m})",
    "gru": lambda n, m: f"GRU({n}, {m})",
    "tanh": lambda n, m: "Tanh()",
    "relu": lambda n, m: "ReLU()",
    "layernorm": lambda n, m: f"LayerNorm({n})",
}
SIZE_KEEPING = {"tanh", "relu", "layernorm"}


@given(
    layers=st.lists(
        st.tuples(st.sampled_from(sorted(LAYER_MENU)), st.integers(1, 6)), min_size=1, max_size=5
    ),
    rows=st.integers(1, 5),
)
@settings(max_examples=25, deadline=None, database=None)
def test_any_chain_of_layers_agrees_on_fast_and_vmap_paths(layers, rows):
    parts, size = [], OBS
    for name, width in layers:
        out = size if name in SIZE_KEEPING else width
        parts.append(LAYER_MENU[name](size, out))
        size = out
    text = " >> ".join([*parts, f"Linear({size}, 2)"])
    fast, general = make_policy(text, True), make_policy(text, False)
    parameters = parameters_for(fast, rows)
    fast.set_parameters(parameters)
    general.set_parameters(parameters)
    for step in range(3):
        x = torch.randn(rows, OBS)
        torch.testing.assert_close(fast(x), general(x), msg=lambda m: f"{text}: {m}")
        if step == 1:
            fast.reset([0])
            general.reset([0])
