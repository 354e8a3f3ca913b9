"""evaluate on a jax env runs the whole loop as one compiled program (vecrl_evaluate.fused): the jax twins of
every layer kind compute what the torch layers do, whole evaluations equal the stepped loop's, the
neuroevolution options live inside the program, it compiles once per configuration, and what it cannot
express takes the stepped path and says so."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch
from torch import nn

import vecrl
from vecrl_evaluate import evaluate, fused
from vecrl_policy import Chain, ObsNorm, Policy, layers
from vecrl_policy.layer_table import LAYERS, why_not_fused

pytest.importorskip("vecrl_brax")
jax = pytest.importorskip("jax")

from vecrl.arrays import convert_from_torch, convert_to_torch  # noqa: E402
from vecrl_policy import jax_layers  # noqa: E402

PENDULUM = "brax::inverted_pendulum"  # episodes end early: refills happen at different steps
FAST = "brax::fast"  # brax's test env: compiles in a second
MLP = "Linear(4, 8) >> Tanh() >> Linear(8, 1)"
FAST_MLP = "Linear(2, 8) >> Tanh() >> Linear(8, 1)"
SHAPED = dict(decrease_rewards_by=0.5, alive_bonus_schedule=(5, 20, 2.0))


def population(policy: Policy, rows: int, seed: int = 4) -> torch.Tensor:
    return 0.5 * torch.randn(rows, policy.parameter_length, generator=torch.Generator().manual_seed(seed))


def pendulum(num_envs: int) -> object:
    return vecrl.make_vector_env(PENDULUM, num_envs=num_envs, num_episodes=1, episode_length=40)


def fast(num_envs: int, num_episodes: int = 1) -> object:
    return vecrl.make_vector_env(FAST, num_envs=num_envs, num_episodes=num_episodes, episode_length=9)


def assert_close(result, expected) -> None:
    assert torch.equal(result.episodes, expected.episodes)
    assert torch.equal(result.steps, expected.steps)
    torch.testing.assert_close(result.total_return, expected.total_return, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "network",
    [
        "Linear(5, 6) >> Tanh() >> Linear(6, 3) >> Sigmoid() >> Linear(3, 3, bias=False) >> ReLU()",
        "Linear(5, 6) >> ELU(0.5) >> Linear(6, 6) >> SELU() >> Linear(6, 6) >> GELU() >> Linear(6, 6)"
        " >> GELU(approximate='tanh') >> Linear(6, 6) >> SiLU() >> Linear(6, 6) >> LeakyReLU(0.2)",
        "Linear(5, 6) >> Hardtanh(-0.5, 0.5) >> Linear(6, 6) >> ReLU6() >> Linear(6, 6) >> Softplus(2.0, 1.0)"
        " >> Linear(6, 6) >> Softsign() >> Linear(6, 6) >> Identity() >> Clip(-0.3, 0.4)",
        "Linear(5, 6) >> Bin(-1, 1) >> Linear(6, 4) >> Slice(1, 3) >> Round(1)",
        "RNN(5, 4) >> RNN(4, 3, nonlinearity='relu') >> Linear(3, 2)",
        "LSTM(5, 4) >> Linear(4, 2) >> LSTM(2, 3, bias=False)",
        "GRU(5, 4) >> GRU(4, 3, bias=False)",
    ],
)
def test_the_jax_twin_of_each_layer_kind_computes_what_the_torch_layer_does(network):
    policy = Policy(network)
    specs = policy.layer_specs
    assert specs is not None
    rows = 6
    parameters = population(policy, rows)
    policy.set_parameters(parameters)
    layers = jax_layers.unpack(specs, convert_from_torch(parameters, "jax"))
    states = jax_layers.initial_states(specs, layers)
    inputs = torch.randn(4, rows, 5, generator=torch.Generator().manual_seed(1))
    for x in inputs:  # a few steps: recurrent states carry over
        expected = policy(x)
        y, states = jax_layers.forward(specs, layers, convert_from_torch(x, "jax"), states)
        torch.testing.assert_close(convert_to_torch(y), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("make", "network"),
    [
        (pendulum, MLP),  # episodes end at different steps: slots take new rows one by one
        (fast, "Linear(2, 8) >> LSTM(8, 4) >> Linear(4, 1)"),  # recurrent states start afresh in new rows
        (fast, "GRU(2, 4) >> Linear(4, 1)"),
    ],
)
def test_a_fused_evaluation_equals_the_stepped_one_with_refills(make, network):
    env = make(num_envs=4)  # 12 rows on 4 sub-envs
    policy = Policy(network)
    parameters = population(policy, 12)
    stepped = evaluate(policy, env, parameters, seed=3, fused=False)
    result = evaluate(policy, env, parameters, seed=3)
    assert (stepped.path, result.path) == ("stepped", "fused")
    assert_close(result, stepped)
    if make is pendulum:
        assert stepped.steps.min() < stepped.steps.max()
    env.close()


def test_statistics_and_shaping_live_inside_the_program():
    env = fast(num_envs=4)
    policy = Policy(FAST_MLP)
    parameters = population(policy, 12)
    stats = {path: ObsNorm() for path in ("stepped", "fused")}
    last = {}
    for path, obs_norm in stats.items():
        for generation in range(2):  # the second call normalizes with what the first saw
            options = dict(seed=generation, obs_norm=obs_norm, fused=path == "fused", **SHAPED)
            last[path] = evaluate(policy, env, parameters + 0.1 * generation, **options)
            assert last[path].path == path
    assert_close(last["fused"], last["stepped"])
    assert stats["fused"].count == stats["stepped"].count
    torch.testing.assert_close(stats["fused"].mean, stats["stepped"].mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(stats["fused"].std, stats["stepped"].std, rtol=1e-4, atol=1e-6)
    env.close()


def test_a_policy_carrying_statistics_normalizes_inside_the_program():
    env = fast(num_envs=4)
    policy = Policy(FAST_MLP)
    carried = ObsNorm()
    carried.update(torch.randn(100, 2, generator=torch.Generator().manual_seed(2)) * 0.3 + 0.1)
    policy.obs_norm = carried
    parameters = population(policy, 8)
    assert_close(
        evaluate(policy, env, parameters, seed=1), evaluate(policy, env, parameters, seed=1, fused=False)
    )
    env.close()


def test_later_episodes_and_action_noise_depend_on_the_seed_and_the_row_alone():
    policy = Policy(FAST_MLP)
    parameters = population(policy, 8)
    options = dict(seed=5, num_episodes=2, action_noise_stdev=0.2)
    results = []
    for num_envs in (2, 8):
        env = fast(num_envs, num_episodes=2)
        results.append(evaluate(policy, env, parameters, **options))
        again = evaluate(policy, env, parameters, **options)
        assert torch.equal(again.total_return, results[-1].total_return)  # reproduced
        env.close()
    assert_close(results[0], results[1])
    assert (results[0].episodes == 2).all()
    env = fast(num_envs=4)
    quiet = evaluate(policy, env, parameters, seed=5)
    noisy = evaluate(policy, env, parameters, seed=5, action_noise_stdev=0.2)
    assert not torch.equal(noisy.total_return, quiet.total_return)
    env.close()


def test_an_evolution_run_compiles_once():
    env = fast(num_envs=4)
    policy = Policy(FAST_MLP)
    fused.PROGRAMS.clear()
    programs = []
    for generation in range(3):
        evaluate(policy, env, population(policy, 8, seed=generation), seed=generation)
        programs += fused.PROGRAMS.values()
    assert len(set(map(id, programs))) == 1  # one trace and compile for three generations
    env.close()


def test_the_compiled_programs_are_bounded_and_those_dropped_are_freed():
    """Each population size compiles a program; a run trying many sizes keeps the last MAX_PROGRAMS, and
    nothing else holds the older ones (on inverted_pendulum, 16 sizes grew the process by 675 MiB when
    every program was kept)."""
    env = fast(num_envs=4)
    policy = Policy(FAST_MLP)
    fused.PROGRAMS.clear()
    made = []
    for size in range(1, fused.MAX_PROGRAMS + 5):
        evaluate(policy, env, population(policy, size), seed=0)
        made += [
            weakref.ref(program)
            for program in fused.PROGRAMS.values()
            if not any(ref() is program for ref in made)
        ]
    assert len(fused.PROGRAMS) == fused.MAX_PROGRAMS
    gc.collect()
    alive = [ref() for ref in made if ref() is not None]
    assert len(made) == fused.MAX_PROGRAMS + 4 and len(alive) == fused.MAX_PROGRAMS
    env.close()


class Doubled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 2 * self.linear(x)


def test_what_the_program_cannot_express_is_stepped_and_fused_true_says_why():
    env = fast(num_envs=4)
    own = Policy(Doubled())
    assert own.layer_specs is None
    assert evaluate(own, env, population(own, 4), seed=0).path == "stepped"
    with pytest.raises(ValueError, match="layer without a jax twin"):
        evaluate(own, env, population(own, 4), seed=0, fused=True)
    policy = Policy(FAST_MLP)
    with pytest.raises(ValueError, match="the program runs float32. Pass parameters.float()"):
        evaluate(policy, env, population(policy, 4).double(), seed=0, fused=True)
    assert evaluate(policy, env, population(policy, 4).double(), seed=0).path == "stepped"
    with pytest.raises(TypeError, match="fused must be True or False"):
        evaluate(policy, env, population(policy, 4), fused="yes")
    env.close()
    gym_env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, num_episodes=1)
    cartpole = Policy("Linear(4, 2)")
    with pytest.raises(ValueError, match="is not a jax env"):
        evaluate(cartpole, gym_env, population(cartpole, 2), fused=True)
    gym_env.close()


#: One instance of every layer of the table (a new entry needs one here: the test below checks).
TABLE_EXAMPLES = {
    nn.Linear: lambda: nn.Linear(4, 3),
    layers.RNN: lambda: layers.RNN(4, 3, nonlinearity="relu"),
    layers.LSTM: lambda: layers.LSTM(4, 3),
    layers.GRU: lambda: layers.GRU(4, 3, bias=False),
    nn.Tanh: nn.Tanh,
    nn.ReLU: nn.ReLU,
    nn.Sigmoid: nn.Sigmoid,
    nn.Identity: nn.Identity,
    nn.ELU: lambda: nn.ELU(0.5),
    nn.SELU: nn.SELU,
    nn.CELU: lambda: nn.CELU(0.7),
    nn.GELU: lambda: nn.GELU(approximate="tanh"),
    nn.SiLU: nn.SiLU,
    nn.Mish: nn.Mish,
    nn.LeakyReLU: lambda: nn.LeakyReLU(0.2),
    nn.Hardtanh: lambda: nn.Hardtanh(-0.5, 0.5),
    nn.ReLU6: nn.ReLU6,
    nn.Softplus: lambda: nn.Softplus(2.0, 1.0),
    nn.Softsign: nn.Softsign,
    nn.Tanhshrink: nn.Tanhshrink,
    nn.Hardswish: nn.Hardswish,
    nn.Hardsigmoid: nn.Hardsigmoid,
    layers.Clip: lambda: layers.Clip(-0.3, 0.4),
    layers.Bin: lambda: layers.Bin(-1, 1),
    layers.Round: lambda: layers.Round(1),
    layers.Slice: lambda: layers.Slice(1, 3),
}


@pytest.mark.parametrize("module_type", list(LAYERS), ids=lambda t: t.__name__)
def test_every_layer_of_the_table_runs_batched_and_fused_or_is_refused_with_its_reason(module_type):
    assert set(TABLE_EXAMPLES) == set(LAYERS)
    entry = LAYERS[module_type]
    policy = Policy(Chain(nn.Linear(5, 4), nn.Tanh(), TABLE_EXAMPLES[module_type]()))
    parameters = population(policy, 6)
    policy.set_parameters(parameters)
    assert policy.fast_path  # the batched torch path takes it
    if entry.no_twin is not None:
        assert policy.layer_specs is None
        assert entry.no_twin in why_not_fused(policy.wrapped_module)
        return
    specs = policy.layer_specs
    assert specs is not None and specs[-1].kind == entry.kind
    layers_ = jax_layers.unpack(specs, convert_from_torch(parameters, "jax"))
    states = jax_layers.initial_states(specs, layers_)
    for x in torch.randn(3, 6, 5, generator=torch.Generator().manual_seed(1)):
        expected = policy(x)
        y, states = jax_layers.forward(specs, layers_, convert_from_torch(x, "jax"), states)
        torch.testing.assert_close(convert_to_torch(y), expected, rtol=1e-5, atol=1e-5)


def test_the_result_says_how_long_the_call_compiled_and_a_second_call_compiles_nothing():
    env = fast(3)
    policy = Policy(FAST_MLP)
    rows = population(policy, 11)  # a population size no other test compiles
    first = evaluate(policy, env, rows, seed=0)
    second = evaluate(policy, env, rows, seed=1)
    assert first.path == second.path == "fused"
    assert first.compile_seconds > 0 and second.compile_seconds == 0
    assert evaluate(policy, env, rows, seed=0, fused=False).compile_seconds == 0
    env.close()
