"""make_brax_env and the brax:: prefix: the vecrl contract, zero-copy torch results, kwargs reaching brax."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import vecrl
from vecrl.compat import FINAL_OBS_KEY
from vecrl_brax import VectorEnvFromBrax, make_brax_env


def test_make_vector_env_with_the_brax_prefix_gives_torch_tensors():
    env = vecrl.make_vector_env("brax::fast", num_envs=3, episode_length=1)  # (each step ends the episodes)
    obs, _ = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(torch.ones(3, 1))
    assert isinstance(env.unwrapped, VectorEnvFromBrax)
    assert (obs.dtype, reward.dtype, terminated.dtype, truncated.dtype) == (
        torch.float32,
        torch.float32,
        torch.bool,
        torch.bool,
    )
    assert isinstance(info[FINAL_OBS_KEY], torch.Tensor) and info[f"_{FINAL_OBS_KEY}"].dtype == torch.bool


def test_torch_results_are_views_of_the_jax_buffers_not_copies():
    env = make_brax_env("fast", num_envs=3, episode_length=1)  # (each step ends the episodes)
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(torch.ones(3, 1))
    # obs, reward and the final observations are views of the one buffer imported from jax through DLPack
    floats = {t.untyped_storage().data_ptr() for t in (obs, reward, info[FINAL_OBS_KEY])}
    flags = {t.untyped_storage().data_ptr() for t in (terminated, truncated, info[f"_{FINAL_OBS_KEY}"])}
    assert len(floats) == 1 and len(flags) == 1
    assert obs.is_contiguous() and reward.is_contiguous()


def test_episode_length_and_action_repeat_given_as_brax_kwargs_reach_brax():
    env = vecrl.make_vector_env(
        "brax::fast", num_envs=2, brax_kwargs={"episode_length": 3, "action_repeat": 2}
    )
    env.reset(seed=0)
    env.step(torch.ones(2, 1))
    assert np.asarray(env.unwrapped.state.info["steps"]).tolist() == [2.0, 2.0]  # action_repeat
    _, _, terminated, truncated, _ = env.step(torch.ones(2, 1))
    assert truncated.all() and not terminated.any()  # 4 steps >= episode_length 3


def test_the_backend_and_other_env_constructor_arguments_reach_the_brax_env():
    env = make_brax_env("inverted_pendulum", num_envs=2, backend="positional", n_frames=3, episode_length=5)
    assert env.unwrapped.brax_env.unwrapped.backend == "positional"
    assert env.unwrapped.brax_env.unwrapped._n_frames == 3


@pytest.mark.parametrize("keyword", ["batch_size", "auto_reset"])
def test_keywords_that_would_break_batching_or_autoreset_are_rejected(keyword):
    with pytest.raises(vecrl.UnknownKeywordError, match=keyword):
        make_brax_env("fast", num_envs=2, **{keyword: 2})


@pytest.mark.parametrize(
    ("keyword", "words"),
    [
        (
            {"device": "cpu"},
            "device='cpu', which the brax backend does not take: a jax env computes on jax's",
        ),
        (
            {"num_workers": 2},
            "num_workers=2, which the brax backend does not take: worker processes are the gym",
        ),
    ],
)
def test_other_backends_keywords_say_why_a_jax_env_does_not_take_them(keyword, words):
    with pytest.raises(vecrl.UnknownKeywordError, match=words):
        make_brax_env("inverted_pendulum", num_envs=2, **keyword)
    # the env class, made directly, says the same
    with pytest.raises(vecrl.UnknownKeywordError, match=words.split(": ")[1]):
        VectorEnvFromBrax("inverted_pendulum", num_envs=2, **keyword)


def test_an_unknown_keyword_lists_what_the_env_takes_with_a_close_match():
    with pytest.raises(
        TypeError,
        match=r"does not take a keyword given.*It takes: action_repeat, backend, .*"
        r"Did you mean 'episode_length'\?",
    ):
        VectorEnvFromBrax("inverted_pendulum", num_envs=2, episode_lenght=5)
    # make_brax_env is make_vector_env's, which refuses a near miss of one of vecrl's keywords first
    with pytest.raises(vecrl.UnknownKeywordError, match=r"episode_lenght=5, which is no option of vecrl's"):
        make_brax_env("inverted_pendulum", num_envs=2, episode_lenght=5)


@pytest.mark.parametrize("mode", ["same_step", "next_step"])
def test_nan_actions_are_refused_but_those_of_spent_sub_envs_pass(mode):
    env = make_brax_env(
        "inverted_pendulum", num_envs=3, episode_length=2, num_episodes=1, autoreset_mode=mode
    )
    first, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match=r"non-finite values \(NaN or inf\) for sub-envs \[1\].*No sub-env"):
        env.step(torch.tensor([[0.0], [float("nan")], [0.0]]))
    again = make_brax_env(
        "inverted_pendulum", num_envs=3, episode_length=2, num_episodes=1, autoreset_mode=mode
    )
    again.reset(seed=0)
    # nothing stepped: the next step is the first, as on an env that never saw the NaN
    torch.testing.assert_close(env.step(torch.zeros(3, 1))[0], again.step(torch.zeros(3, 1))[0])
    _, _, terminated, truncated, _ = env.step(torch.zeros(3, 1))
    assert (terminated | truncated).all()  # every budget is spent
    assert env.step(torch.full((3, 1), float("nan")))[1].isnan().all()  # their NaN actions are ignored
