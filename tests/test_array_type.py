"""make_vector_env(..., array_type="numpy" or "jax"): one spelling for the results' type, on every backend."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from gymnasium.wrappers.vector import RecordEpisodeStatistics

import vecrl
from vecrl.numpy_view import JaxView, NumpyView
from vecrl_evaluate import evaluate
from vecrl_policy import Policy

# Each backend installed, with an env of it (Hopper: float64 observations; FrozenLake: Discrete ones).
ENVS = [
    pytest.param("gym::CartPole-v1", {}, id="gym-CartPole"),
    pytest.param("gym::Hopper-v5", {}, id="gym-Hopper"),
    pytest.param("gym::FrozenLake-v1", {}, id="gym-FrozenLake"),
    pytest.param("gym::CartPole-v1", {"num_workers": 2}, id="gym-workers"),
    pytest.param("brax::fast", {"episode_length": 5}, id="brax"),
    pytest.param("envpool::CartPole-v1", {}, id="envpool"),
    pytest.param("playground::CartpoleBalance", {"episode_length": 5}, id="playground"),
]
PACKAGE = {"brax": "vecrl_brax", "envpool": "vecrl_envpool", "playground": "vecrl_playground"}


def skip_unless_installed(env_name):
    package = PACKAGE.get(env_name.partition("::")[0])
    if package and importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")


def leaves(x):
    if isinstance(x, dict):
        return [leaf for value in x.values() for leaf in leaves(value)]
    if isinstance(x, tuple):
        return [leaf for value in x for leaf in leaves(value)]
    return [x]


def run(env, steps=8):
    """The results of a seeded reset and ``steps`` steps with the same numpy actions each time."""
    results = [env.reset(seed=3)]
    for _ in range(steps):
        actions = np.stack([env.single_action_space.sample() for _ in range(env.num_envs)])
        if not isinstance(env, NumpyView):  # the torch env takes the same actions
            actions = torch.as_tensor(actions)
        results.append(env.step(actions))
    env.close()
    return results


@pytest.mark.parametrize(("env_name", "kwargs"), ENVS)
def test_numpy_results_are_the_torch_results_as_numpy_arrays(env_name, kwargs):
    skip_unless_installed(env_name)
    env = vecrl.make_vector_env(env_name, num_envs=3, array_type="numpy", **kwargs)
    assert isinstance(env, NumpyView) and env.num_envs == 3
    env.single_action_space.seed(0)
    as_numpy = run(env)
    torch_env = vecrl.make_vector_env(env_name, num_envs=3, **kwargs)
    torch_env.single_action_space.seed(0)
    as_torch = run(torch_env)
    for numpy_result, torch_result in zip(as_numpy, as_torch, strict=True):
        # observations, rewards and flags (and info's tensors) are numpy arrays, equal to the torch ones
        for numpy_leaf, torch_leaf in zip(leaves(numpy_result[:-1]), leaves(torch_result[:-1]), strict=True):
            assert isinstance(numpy_leaf, np.ndarray), type(numpy_leaf)
            np.testing.assert_array_equal(numpy_leaf, torch_leaf.numpy())
        assert not any(isinstance(leaf, torch.Tensor) for leaf in leaves(numpy_result[-1]))


@pytest.mark.parametrize("env_name", ["gym::CartPole-v1", "brax::fast"])
def test_jax_results_are_jax_arrays(env_name):
    skip_unless_installed(env_name)
    jax = pytest.importorskip("jax")
    env = vecrl.make_vector_env(env_name, num_envs=2, array_type="jax")
    assert isinstance(env, JaxView)
    obs, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, _ = env.step(jax.numpy.asarray(env.action_space.sample()))
    assert all(isinstance(x, jax.Array) for x in (obs, reward, terminated, truncated))
    assert obs.shape == (2, *env.single_observation_space.shape)
    env.close()


def test_the_view_keeps_the_recipe_and_gymnasium_s_numpy_wrappers_go_beneath_it():
    env = vecrl.make_vector_env(
        "CartPole-v1", num_envs=2, array_type="numpy", vector_wrappers=[RecordEpisodeStatistics]
    )
    again = env.recipe.make()
    assert isinstance(again, NumpyView) and again.recipe == env.recipe
    env.reset(seed=0)
    episodes = []
    for _ in range(40):
        *_, info = env.step(np.zeros(2, dtype=np.int64))
        episodes += [info["episode"]] if "episode" in info else []
    assert episodes and all(isinstance(episode["r"], np.ndarray) for episode in episodes)
    env.close()
    again.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"array_type": "pandas"}, ValueError, "array_type must be 'torch', 'numpy' or 'jax'.*got 'pandas'"),
        (
            {"array_type": "numpy", "force_classic_api": True},
            ValueError,
            "cannot be combined with force_classic",
        ),
        ({"array_type": "numpy", "num_envs": None}, ValueError, "needs num_envs: pass num_envs=1"),
        (
            {"gym_kwargs": {"array_type": "numpy"}},
            ValueError,
            r"gym_kwargs holds array_type.*give them directly",
        ),
        ({"gym_kwargs": {"num_envs": 4}}, ValueError, r"gym_kwargs holds num_envs: make_vector_env's own"),
        ({"array_types": "numpy"}, vecrl.UnknownKeywordError, "Did you mean 'array_type'"),
    ],
)
def test_mistakes_are_refused_before_anything_is_made(kwargs, error, words):
    before = vecrl.testing.child_processes()
    with pytest.raises(error, match=words):
        vecrl.make_vector_env("gym::CartPole-v1", **{"num_envs": 2, "num_workers": 2, **kwargs})
    assert vecrl.testing.child_processes() == before  # no worker process was started


def test_evaluate_asks_for_the_torch_env_a_view_views():
    env = vecrl.make_vector_env("CartPole-v1", num_envs=2, array_type="numpy")
    policy = Policy("Linear(4, 2)")
    with pytest.raises(TypeError, match=r"results are numpy arrays .*pass env.env, the torch env it views"):
        evaluate(policy, env, torch.zeros(2, policy.parameter_length))
    assert evaluate(policy, env.env, torch.zeros(2, policy.parameter_length), seed=0).mean_return.shape == (
        2,
    )
    env.close()
