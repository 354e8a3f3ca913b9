"""The mistakes a new user makes with brax:: envs get vecrl's own errors, and nothing is half-applied."""

from __future__ import annotations

import pickle
import subprocess
import sys

import gymnasium
import pytest
import torch

import vecrl
from vecrl_brax import VectorEnvFromBrax


def fast_env(num_envs: int = 3) -> vecrl.TorchWrapper:
    return vecrl.make_vector_env("brax::fast", num_envs=num_envs, episode_length=4)


@pytest.mark.parametrize(
    ("name", "hint"), [("antt", "Did you mean 'ant'?"), ("zzz", "Its environments: ant")]
)
def test_an_unknown_name_lists_the_envs_with_a_close_match(name, hint):
    with pytest.raises(ValueError, match=f"brax has no environment '{name}'.*{hint}"):
        vecrl.make_vector_env(f"brax::{name}", num_envs=2)


def test_the_env_cannot_be_pickled_and_says_so_in_one_line():
    env = fast_env()
    with pytest.raises(TypeError, match="cannot be pickled: it holds compiled jax functions") as caught:
        pickle.dumps(env)
    assert "\n" not in str(caught.value)


def test_step_and_reset_after_close_raise():
    env = fast_env()
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.step(torch.zeros(3, 1))
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()
    inner = VectorEnvFromBrax("fast", num_envs=3, episode_length=4)
    inner.close()
    with pytest.raises(RuntimeError, match=r"reset\(\) was called on .* which is closed"):
        inner.reset()
    with pytest.raises(RuntimeError, match=r"step\(\) was called on .* which is closed"):
        inner.step(torch.zeros(3, 1))


def test_a_bad_action_changes_nothing():
    env = fast_env()
    env.reset(seed=0)
    first = env.step(torch.ones(3, 1))[0].clone()
    with pytest.raises(ValueError, match=r"expected \(3, 1\)"):
        env.step(torch.ones(2, 1))
    again = fast_env()
    again.reset(seed=0)
    again.step(torch.ones(3, 1))
    # the refused action left the state as it was: both envs take the same next step
    torch.testing.assert_close(env.step(torch.ones(3, 1))[0], again.step(torch.ones(3, 1))[0])
    assert first.shape == (3, 2)


def test_a_num_envs_that_cannot_fit_fails_at_once_with_the_size_it_needs():
    with pytest.raises(MemoryError, match=r"jax env 'fast' with num_envs=1,000,000,000,000 would need about"):
        vecrl.make_vector_env("brax::fast", num_envs=10**12)


def test_importing_brax_prints_no_warp_notice():
    code = "from vecrl_brax.brax_versions import resolve_create; resolve_create('fast'); print('done')"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert "Failed to import" not in result.stderr


def test_the_env_says_that_its_first_calls_compile():
    assert fast_env().unwrapped.jit_compiled is True
    assert vecrl.BaseVectorEnv.jit_compiled is False


def test_wrappers_meant_for_gym_sub_envs_are_refused_not_ignored():
    with pytest.raises(
        vecrl.UnknownKeywordError,
        match="wrappers=.*it applies gymnasium wrappers to each sub-env.*vector_wrappers",
    ):
        vecrl.make_vector_env("brax::fast", num_envs=2, wrappers=[gymnasium.wrappers.ClipAction])


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"episode_length": 0}, "episode_length must be a positive int"),
        ({"episode_length": 2.5}, "episode_length must be a positive int"),
        ({"action_repeat": 0}, "action_repeat must be a positive int"),
        ({"action_repeat": True}, "action_repeat must be a positive int"),
        ({"action_repeat": 2**31}, r"action_repeat must be at most 2\*\*31 - 1"),
    ],
)
def test_episode_counts_that_brax_would_take_silently_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        vecrl.make_vector_env("brax::fast", num_envs=2, **kwargs)


def test_the_names_read_from_brax_s_source_are_the_ones_it_registers():
    # vecrl's commands check a name before importing brax (seconds): from the registry's source
    import brax.envs

    from vecrl.checks import names_in_source

    assert sorted(names_in_source("brax/envs/__init__.py", "_envs")) == sorted(brax.envs._envs)
