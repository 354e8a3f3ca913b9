"""make_envpool_env and make_vector_env("envpool::..."): the backend contract, spaces, keywords, mistakes."""

import subprocess
import sys

import numpy as np
import pytest
import torch
from gymnasium.spaces import Box, Discrete

import vecrl
from vecrl.testing import check_autoreset_modes, check_backend
from vecrl_envpool import EnvpoolVectorEnv, make_envpool_env


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [("Hopper-v5", {}), ("FrozenLake-v1", {}), ("Pong-v5", {"num_threads": 1})],
)
def test_the_backend_follows_the_vecrl_contract(env_id, kwargs):
    # (CartPole-v1: tests/test_backend_conformance.py, on the case this package's pyproject declares)
    check_backend(make_envpool_env, env_id, num_envs=3, **kwargs)


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("Hopper-v5", {"max_episode_steps": 6}),
        ("FrozenLake-v1", {"num_steps": 60}),  # the hole or the goal within a few random steps
    ],
)
def test_every_autoreset_mode_and_the_budget_follow_the_episode_rules(env_id, kwargs):
    check_autoreset_modes(make_envpool_env, env_id, **kwargs)


def test_the_prefix_is_served_through_the_installed_entry_point():
    assert vecrl.backend_distribution("envpool") == ("vecrl-envpool", "0.1.0")
    env = vecrl.make_vector_env("envpool::CartPole-v1", num_envs=4, envpool_kwargs={"num_threads": 1})
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 4) and obs.dtype == torch.float32
    assert env.recipe.env_name == "envpool::CartPole-v1"
    assert env.unwrapped.envpool_env.config["num_threads"] == 1
    env.close()


@pytest.mark.parametrize(
    ("env_id", "observation", "action", "dtype"),
    [
        ("Hopper-v5", Box, Box, torch.float64),  # MuJoCo: float64 observations, as envpool gives them
        ("FrozenLake-v1", Discrete, Discrete, torch.int64),  # envpool's int32 states, in the space's dtype
        ("Pong-v5", Box, Discrete, torch.uint8),  # four stacked 84x84 frames
    ],
)
def test_spaces_and_dtypes_are_envpools(env_id, observation, action, dtype):
    env = make_envpool_env(env_id, num_envs=2, num_threads=1)
    assert isinstance(env.single_observation_space, observation)
    assert isinstance(env.single_action_space, action)
    obs, _ = env.reset(seed=0)
    assert obs.dtype == dtype and obs.shape == (2, *env.single_observation_space.shape)
    obs, reward, terminated, truncated, _ = env.step(vecrl.testing.random_actions(env))
    assert obs.dtype == dtype and reward.dtype == torch.float32
    assert terminated.dtype == truncated.dtype == torch.bool
    env.close()


def test_envpools_keyword_arguments_reach_it():
    env = make_envpool_env("CartPole-v1", num_envs=2, num_threads=1, max_episode_steps=3)
    env.reset(seed=0)
    flags = [env.step(torch.tensor([0, 1]))[3].tolist() for _ in range(3)]
    assert flags == [[False, False], [False, False], [True, True]]  # the time limit of 3 steps
    assert env.unwrapped.envpool_env.config["max_episode_steps"] == 3
    env.close()


def test_torch_wrapper_options_apply():
    env = make_envpool_env("CartPole-v1", num_envs=2, discrete_to_continuous_act=True, force_classic_api=True)
    obs = env.reset(seed=0)
    obs, reward, done, info = env.step(torch.tensor([[0.1, 0.9], [0.8, 0.2]]))  # argmax: 1, 0
    assert env.single_action_space.shape == (2,) and done.dtype == torch.bool
    env.close()
    clipped = make_envpool_env("Hopper-v5", num_envs=2, clip_actions=True)
    plain = make_envpool_env("Hopper-v5", num_envs=2)
    clipped.reset(seed=0)
    plain.reset(seed=0)
    assert torch.equal(clipped.step(torch.full((2, 3), 5.0))[0], plain.step(torch.ones(2, 3))[0])
    clipped.close()
    plain.close()


def test_results_are_placed_on_the_torch_device_given():
    for device in (
        "cpu",
        "meta",
    ):  # meta: a device other than the CPU on any machine (its tensors hold no values)
        env = make_envpool_env("CartPole-v1", num_envs=2, device=device)
        obs, _ = env.reset(seed=0)
        assert obs.device == torch.device(device)
        env.close()
    with pytest.raises(ValueError, match="device='cpu' places torch results, but array_type is 'numpy'"):
        EnvpoolVectorEnv("CartPole-v1", num_envs=2, device="cpu")


def test_an_unknown_id_gets_a_close_match_and_how_to_list_them_all():
    with pytest.raises(
        ValueError, match=r"no environment 'Cartpole-v1'\. Did you mean 'CartPole-v1'\?"
    ) as caught:
        vecrl.make_vector_env("envpool::Cartpole-v1", num_envs=2)
    assert "envpool.list_all_envs()" in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"batch_size": 2}, ValueError, "autoreset_mode=.next_step."),
        ({"batch_size": 2, "autoreset_mode": "next_step", "num_episodes": 1}, ValueError, "no num_episodes"),
        ({"batch_size": 5}, ValueError, "batch_size must be an int that divides num_envs=4"),
        # (a step of every sub-env, 4, would wait on a second batch of 3 that never comes)
        ({"batch_size": 3, "autoreset_mode": "next_step"}, ValueError, "Sizes that fit: 1, 2, 4"),
        ({"seed": 3}, vecrl.UnknownKeywordError, r"reset\(seed=S\)"),
        ({"env_seed": [1, 2, 3, 4]}, vecrl.UnknownKeywordError, r"reset\(seed=\[s0, s1"),
        ({"env_type": "gym"}, vecrl.UnknownKeywordError, "gymnasium API"),
        ({"frame_skip": 2}, TypeError, "It takes: .*max_episode_steps"),  # an Atari keyword on CartPole
        ({"wrappers": []}, TypeError, "vector_wrappers"),
        ({"num_episodes": 1, "autoreset_mode": "disabled"}, ValueError, "cannot be combined"),
        ({"autoreset_mode": "sometimes"}, ValueError, "is not an autoreset mode"),
    ],
)
def test_keyword_mistakes_say_what_to_do(kwargs, error, words):
    with pytest.raises(error, match=words):
        make_envpool_env("CartPole-v1", num_envs=4, **kwargs)


# (num_envs=None gives one plain env: tests/test_single_env.py)
@pytest.mark.parametrize("num_envs", [0, -1, 2.0, True])
def test_num_envs_must_be_a_positive_int(num_envs):
    with pytest.raises(ValueError, match="num_envs"):
        make_envpool_env("CartPole-v1", num_envs=num_envs)


def test_the_vector_env_alone_speaks_numpy():
    env = EnvpoolVectorEnv("CartPole-v1", num_envs=3)
    obs, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, _ = env.step(np.array([0, 1, 0]))
    assert all(isinstance(x, np.ndarray) for x in (obs, reward, terminated, truncated))
    assert "EnvpoolVectorEnv('CartPole-v1', num_envs=3" in repr(env)
    env.close()


def test_without_envpool_the_error_says_how_to_install_it():
    code = (
        "import sys; sys.modules['envpool'] = None\n"  # what an install without envpool's wheel sees
        "import vecrl\n"
        "try:\n"
        "    vecrl.make_vector_env('envpool::CartPole-v1', num_envs=2)\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "The 'envpool::' backend needs the envpool package" in result.stdout
    assert "pip install envpool" in result.stdout


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        (dict(num_threads=-1), "num_threads must be an int from 0"),
        (dict(num_threads=10**6), "num_threads must be an int from 0"),
        (dict(num_threads=True), "num_threads must be an int from 0"),
        (dict(max_episode_steps=0), "max_episode_steps must be a positive int"),
        (dict(max_episode_steps=-5), "max_episode_steps must be a positive int"),
        (dict(max_episode_steps=2.5), "max_episode_steps must be a positive int"),
    ],
)
def test_counts_that_would_abort_the_interpreter_or_never_step_are_refused(kwargs, words):
    """(num_threads=-1 or 10**6 aborted the whole process at reset: `terminate called ...`)"""
    with pytest.raises(ValueError, match=words):
        vecrl.make_vector_env("envpool::CartPole-v1", num_envs=4, **kwargs)


def test_a_pool_larger_than_memory_is_refused_before_it_grows():
    with pytest.raises(
        MemoryError, match=r"num_envs=100,000,000 would need about [0-9.,]+ [KMGT]iB \(.* per sub-env\)"
    ):
        vecrl.make_vector_env("envpool::CartPole-v1", num_envs=10**8)


def test_under_an_address_space_limit_a_pool_it_cannot_measure_is_refused_not_made():
    # (under `ulimit -v`, the probe measuring a sub-env failed, the guard was skipped, and making the pool
    # aborted the interpreter with std::bad_alloc)
    code = """
import resource, vecrl
resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
try:
    vecrl.make_vector_env("envpool::Hopper-v5", num_envs=1_000_000)
except MemoryError as error:
    print(error)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "could not measure the memory a sub-env takes" in result.stdout
    assert "ulimit -v" in result.stdout and "Make fewer sub-envs" in result.stdout
