"""str_to_net builds networks from strings through a whitelist of syntax, and never evaluates code."""

import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from vecrl_policy import GRU, LSTM, Chain, Clip, NetParsingError, Policy, str_to_net


def test_a_chain_of_calls_builds_a_chain_of_those_layers():
    net = str_to_net("Linear(4, 8) >> Tanh() >> Linear(8, 2, bias=False)")
    assert isinstance(net, Chain) and len(net) == 3
    assert isinstance(net[0], nn.Linear) and net[0].in_features == 4 and net[0].out_features == 8
    assert isinstance(net[1], nn.Tanh)
    assert net[2].bias is None


def test_a_single_call_builds_that_layer_alone():
    net = str_to_net("Linear(3, 2)")
    assert type(net) is nn.Linear


def test_own_layers_shadow_torch_nn():
    net = str_to_net("LSTM(4, 8) >> GRU(8, 3) >> Clip(-1, 1)")
    assert [type(layer) for layer in net] == [LSTM, GRU, Clip]


def test_multiline_text_comments_constants_and_keywords():
    net = str_to_net(
        """
        # a recurrent policy
        Linear(obs_length, hidden)   # encoder
        >> Tanh()
        >> LSTM(input_size=hidden, hidden_size=hidden)
        >> Linear(hidden, act_length)
        >> Hardtanh(-1.5, max_val=+1.5)
        """,
        obs_length=5,
        act_length=2,
        hidden=16,
    )
    assert len(net) == 5
    assert net[0].in_features == 5 and net[3].out_features == 2
    assert net[2].hidden_size == 16
    assert (net[4].min_val, net[4].max_val) == (-1.5, 1.5)


def test_nested_parentheses_flatten_into_one_chain():
    net = str_to_net("Linear(2, 3) >> (Tanh() >> Linear(3, 1))")
    assert len(net) == 3


def test_tuple_and_list_literals_are_arguments():
    net = str_to_net("Unflatten(0, (2, 3)) >> Flatten(0, -1)")
    assert net(torch.arange(6.0)).tolist() == list(range(6))


@given(st.lists(st.integers(1, 9), min_size=2, max_size=6))
@settings(max_examples=30, deadline=None, database=None)
def test_any_mlp_string_builds_the_described_sizes(sizes):
    text = " >> ".join(f"Linear({a}, {b}) >> Tanh()" for a, b in itertools.pairwise(sizes))
    net = str_to_net(text)
    linears = [layer for layer in net if isinstance(layer, nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == list(itertools.pairwise(sizes))


def error_of(text: str, **constants) -> NetParsingError:
    with pytest.raises(NetParsingError) as info:
        str_to_net(text, **constants)
    return info.value


def test_errors_give_line_and_column_and_point_at_the_source():
    error = error_of("Linear(2, 3)\n  >> Tahn()")
    assert (error.line, error.column) == (2, 6)
    assert "Did you mean 'Tanh'?" in str(error)
    assert "line 2, column 6" in str(error) and ">> Tahn()" in str(error)
    assert isinstance(error, ValueError)


def test_a_layer_name_in_the_wrong_case_gets_the_right_one():
    assert "Did you mean 'ReLU'?" in str(error_of("Linear(2, 3) >> Relu()"))


@pytest.mark.parametrize(
    ("text", "fragment", "line", "column"),
    [
        ("", "empty", None, None),
        ("Linear(2, 3) >>", "invalid syntax", None, None),
        ("Linear(2, 3) >>\n  Tanh(", "'(' is never closed", 2, 7),
        ("Linear(2, 3) + Tanh()", "only '>>' chains layers", 1, 1),
        ("Linear(2, 3) >> 4", "expected a layer call", 1, 17),
        ("Linear(2, n)", "unknown constant 'n'", 1, 11),
        ("Linear(2, -3)", "Linear(...) failed", 1, 1),
        ("Linear(2, 3, wrong=1)", "Linear(...) failed", 1, 1),
        ("Linear(*sizes)", "starred", 1, 8),
        ("Linear(**sizes)", "'**'", 1, 10),
        ("NoSuchLayer(2)", "unknown layer 'NoSuchLayer'", 1, 1),
        ("init(2)", "unknown layer 'init'", 1, 1),
        ("functional(2)", "unknown layer 'functional'", 1, 1),
        ("Linear(2, 3j)", "must be literals or constant names", 1, 11),
        ("Linear(2, -n)", "must be literals or constant names", 1, 11),
    ],
)
def test_every_error_path_raises_net_parsing_error(text, fragment, line, column):
    error = error_of(text)
    assert fragment in str(error)
    assert (error.line, error.column) == (line, column)


def test_syntax_errors_report_the_line_python_found():
    error = error_of("Linear(2, 3)\n >> Tanh() Tanh()")
    assert "invalid syntax" in str(error) and error.line in (1, 2)  # where Python's parser points


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("nn.Linear(2, 3)", "bare name"),
        ("Linear(2, 3).__class__()", "bare name"),
        ("Linear(sizes.count, 3)", "attribute access"),
        ("Linear(sizes[0], 3)", "a subscript"),
        ("Linear((lambda: 2)(), 3)", "calls are not allowed"),
        ("Linear(lambda: 2, 3)", "a lambda"),
        ("Linear(f'{2}', 3)", "an f-string"),
        ("__import__('os')", "private"),
        ("_Private()", "private"),
        ("Linear(__builtins__, 3)", "private"),
        ("Linear(2, 3, __class__=1)", "private"),
        ("import os", "invalid syntax"),
        ("exec('print(1)')", "unknown layer 'exec'"),
        ("eval('1')", "unknown layer 'eval'"),
        ("Linear(int(2), 3)", "calls are not allowed"),
        ("Linear(2, 3) if True else Tanh()", "expected a layer call"),
        ("[Linear(2, 3) for _ in range(9)]", "expected a layer call"),
        ("Linear(2, 3)) >> (Tanh()", "unbalanced ')'"),
        ("Linear(2, 1 + 2)", "arithmetic expression"),
    ],
)
def test_injection_attempts_are_rejected(text, fragment):
    assert fragment in str(error_of(text, sizes=[2, 3]))


def test_constants_are_used_as_values_never_evaluated():
    class Exploding:
        def __index__(self):
            raise AssertionError("evaluated")

    net = str_to_net("Linear(n, 2)", n=3)
    assert net.in_features == 3
    assert "Linear(...) failed" in str(error_of("Linear(x, 2)", x="3"))


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError, match="string"):
        str_to_net(nn.Linear(2, 3))  # type: ignore[arg-type]


def test_a_very_long_chain_builds_and_a_deeper_one_is_a_parsing_error():
    assert len(str_to_net(" >> ".join(["Tanh()"] * 1000))) == 1000
    with pytest.raises(NetParsingError, match="too deeply"):
        str_to_net(" >> ".join(["Tanh()"] * 100_000))
    with pytest.raises(NetParsingError, match="too deeply|nested"):
        str_to_net("Linear(" + "[" * 300 + "]" * 300 + ")")


@pytest.mark.parametrize(("text", "line"), [("# only a comment", 1), ("\n\n   # a comment\n", 3)])
def test_a_comment_only_string_points_at_a_real_line(text, line):
    with pytest.raises(NetParsingError, match="no layer, only comments") as caught:
        str_to_net(text)
    assert caught.value.line == line and caught.value.column >= 1


def test_a_network_past_the_parameter_limit_is_refused_before_it_is_built():
    with pytest.raises(NetParsingError, match=r"2,500,050,000 parameters, more than the limit of 10,000,000"):
        str_to_net("Linear(50000, 50000)")  # 9.3 GiB: refused without allocating it
    net = str_to_net("Linear(4000, 4000)", max_parameters=20_000_000)
    assert sum(p.numel() for p in net.parameters()) == 16_004_000
    with pytest.raises(TypeError, match="max_parameters must be a positive int"):
        str_to_net("Linear(2, 2)", max_parameters=0)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Linear(True, 2)", "Linear's in_features must be an int, but got True"),
        ("Linear(4, out_features=False)", "Linear's out_features must be an int, but got False"),
        ("LSTM(4, True)", "LSTM's hidden_size must be an int, but got True"),
    ],
)
def test_true_or_false_as_a_size_is_refused(text, words):
    with pytest.raises(NetParsingError, match=words):
        str_to_net(text)
    assert str_to_net("Linear(4, 2, False)").bias is None  # a bool where the layer takes one is fine


@pytest.mark.parametrize("keyword", [{"device": "cuda"}, {"dtype": torch.float64}])
def test_a_device_or_dtype_the_text_does_not_use_is_refused(keyword):
    with pytest.raises(TypeError, match="does not use.*device and dtype of the parameters"):
        Policy("Linear(4, 2)", **keyword)
    assert str_to_net("Linear(4, 2, device=device)", device="cpu").weight.device.type == "cpu"
