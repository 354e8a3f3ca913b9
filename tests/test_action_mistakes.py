"""Actions that are no array of numbers, or have no values, get the same clear error on every backend, and
the env steps on after it: nothing was half-applied."""

from __future__ import annotations

import pytest
import torch

import vecrl

#: (env name, the library it needs, keywords, a good action)
BACKENDS = [
    ("gym::CartPole-v1", "gymnasium", {}, torch.tensor([0, 1])),
    ("gym::Pendulum-v1", "gymnasium", {}, torch.zeros(2, 1)),
    ("envpool::CartPole-v1", "envpool", {}, torch.tensor([0, 1])),
    ("brax::inverted_pendulum", "brax", {"episode_length": 10}, torch.zeros(2, 1)),
]


@pytest.fixture(scope="module", params=BACKENDS, ids=[backend[0] for backend in BACKENDS])
def env_and_action(request):
    name, library, kwargs, action = request.param
    pytest.importorskip(library)
    env = vecrl.make_vector_env(name, num_envs=2, **kwargs)
    env.reset(seed=0)
    yield env, action
    env.close()


@pytest.mark.parametrize(
    ("action", "error", "words"),
    [
        (None, TypeError, "step\\(\\) expects an array or tensor of numbers of shape .*got None"),
        ("0101", TypeError, "step\\(\\) expects an array or tensor of numbers of shape .*got '0101' of str"),
        (
            [[0.0], [0.0, 1.0]],
            ValueError,
            "step\\(\\) expects an array .*got \\[\\[0.0\\], \\[0.0, 1.0\\]\\] of list",
        ),
    ],
    ids=["None", "text", "ragged"],
)
def test_an_action_that_is_no_array_of_numbers_says_what_was_expected(env_and_action, action, error, words):
    env, good = env_and_action
    with pytest.raises(error, match=words):
        env.step(action)
    assert env.step(good)[1].shape == (2,)


def test_an_action_on_the_meta_device_says_it_has_no_values(env_and_action):
    env, good = env_and_action
    with pytest.raises(ValueError, match="on the meta device has no values to convert"):
        env.step(torch.zeros_like(good, device="meta"))
    assert env.step(good)[1].shape == (2,)


def test_complex_actions_are_refused_saying_the_space_takes_real_numbers(env_and_action):
    env, good = env_and_action
    with pytest.raises(ValueError, match="received complex actions .* takes real numbers"):
        env.step(good.to(torch.complex64))  # (a raw "must be real number, not complex" before)
    assert env.step(good)[1].shape == (2,)


def test_a_bfloat16_action_reaches_the_env_as_float32():
    pytest.importorskip("gymnasium")
    env = vecrl.make_vector_env("gym::Pendulum-v1", num_envs=2)
    env.reset(seed=0)
    _, reward, *_ = env.step(torch.ones(2, 1, dtype=torch.bfloat16))  # (numpy has no bfloat16)
    assert reward.shape == (2,)
    env.close()


def test_nan_scores_are_refused_where_their_argmax_would_be_the_action():
    env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, discrete_to_continuous_act=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="some scores are NaN or inf. No sub-env was stepped"):
        env.step(torch.tensor([[0.0, 1.0], [float("nan"), 0.0]]))  # (action 0 for the NaN row before)
    assert env.step(torch.tensor([[0.0, 1.0], [1.0, 0.0]]))[1].shape == (2,)
    env.close()
