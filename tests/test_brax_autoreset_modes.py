"""The brax backend's autoreset modes and masked resets mean what the gym backend's do (see
vecrl_gym.SyncVectorEnv): the expected sequences below are written by hand from those semantics, on brax's
``fast`` env, whose state after k steps of action 1 is known: position p_k = 0.0004 * k * (k + 1) / 2,
velocity v_k = 0.02 * k, observation (p_k, v_k), reward p_k."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from vecrl.compat import FINAL_OBS_KEY
from vecrl_brax import VectorEnvFromBrax, make_brax_env
from vecrl_jax.compiles import programs_compiled

EPISODE_LENGTH = 3
NUM_ENVS = 2
PUSH = torch.ones(NUM_ENVS, 1)


def fast_state(k: int) -> list[float]:
    """The observation of ``fast`` after k steps of action 1 since its reset."""
    return [0.0004 * k * (k + 1) / 2, 0.02 * k]


def make(mode: str, **kwargs):
    return make_brax_env(
        "fast", num_envs=NUM_ENVS, episode_length=EPISODE_LENGTH, autoreset_mode=mode, **kwargs
    )


def assert_step(result, obs_k, reward, terminated=(False, False), truncated=(False, False)):
    """``result`` is a step whose rows are the observations after ``obs_k[i]`` steps (None: NaN)."""
    obs, rew, term, trunc, _ = result
    expected = [fast_state(k) if k is not None else [np.nan, np.nan] for k in obs_k]
    np.testing.assert_allclose(obs.numpy(), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(rew.numpy(), reward, rtol=1e-5, atol=1e-7)
    assert term.tolist() == list(terminated) and trunc.tolist() == list(truncated)


def p(k: int) -> float:
    return fast_state(k)[0]


def test_same_step_returns_the_next_episodes_first_observation_and_the_last_one_in_info():
    env = make("same_step")
    env.reset(seed=0)
    assert_step(env.step(PUSH), [1, 1], [p(1), p(1)])
    assert_step(env.step(PUSH), [2, 2], [p(2), p(2)])
    end = env.step(PUSH)
    assert_step(end, [0, 0], [p(3), p(3)], truncated=(True, True))
    np.testing.assert_allclose(end[4][FINAL_OBS_KEY].numpy(), [fast_state(3)] * 2, rtol=1e-5)
    assert end[4][f"_{FINAL_OBS_KEY}"].tolist() == [True, True]
    assert_step(env.step(PUSH), [1, 1], [p(1), p(1)])


def test_next_step_returns_the_last_observation_then_resets_ignoring_the_action_with_reward_zero():
    env = make("next_step")
    env.reset(seed=0)
    env.step(PUSH)
    # restart row 1 alone: the rows end their episodes one step apart from now on
    env.reset(options={"reset_mask": np.array([False, True])})
    assert_step(env.step(PUSH), [2, 1], [p(2), p(1)])
    assert_step(env.step(PUSH), [3, 2], [p(3), p(2)], truncated=(True, False))
    assert_step(env.step(PUSH), [0, 3], [0.0, p(3)], truncated=(False, True))  # row 0 resets
    assert_step(env.step(PUSH), [1, 0], [p(1), 0.0])  # row 1 resets
    result = env.step(PUSH)
    assert_step(result, [2, 1], [p(2), p(1)])
    assert FINAL_OBS_KEY not in result[4]


def test_disabled_never_resets_and_refuses_to_step_a_finished_sub_env_until_a_masked_reset():
    env = make("disabled")
    env.reset(seed=0)
    for k in (1, 2):
        assert_step(env.step(PUSH), [k, k], [p(k), p(k)])
    assert_step(env.step(PUSH), [3, 3], [p(3), p(3)], truncated=(True, True))
    with pytest.raises(RuntimeError, match=r"sub-envs \[0, 1\] have ended and autoreset is disabled"):
        env.step(PUSH)
    obs, _ = env.reset(options={"reset_mask": torch.tensor([True, False])})
    np.testing.assert_allclose(obs.numpy(), [fast_state(0), fast_state(3)], rtol=1e-5)
    with pytest.raises(RuntimeError, match=r"sub-envs \[1\] have ended"):
        env.step(PUSH)
    env.reset(options={"reset_mask": [False, True]})
    assert_step(env.step(PUSH), [1, 1], [p(1), p(1)])


@pytest.mark.parametrize("mode", ["same_step", "next_step", "disabled"])
def test_a_masked_reset_restarts_only_the_masked_rows_and_returns_the_others_last_observations(mode):
    env = make(mode)
    env.reset(seed=0)
    env.step(PUSH)
    last, *_ = env.step(PUSH)
    obs, _ = env.reset(options={"reset_mask": np.array([True, False])})
    assert torch.equal(obs[0], torch.zeros(2)) and torch.equal(obs[1], last[1])
    # row 1's episode ends now; in same_step mode the observation is already its next episode's first
    assert_step(env.step(PUSH), [1, 0 if mode == "same_step" else 3], [p(1), p(3)], truncated=(False, True))


def test_next_step_budget_reports_the_last_episode_end_then_nan_and_both_flags_until_reset():
    env = make("next_step", num_episodes=1)
    env.reset(seed=0)
    env.step(PUSH)
    env.step(PUSH)
    assert_step(env.step(PUSH), [3, 3], [p(3), p(3)], truncated=(True, True))
    for _ in range(2):
        assert_step(env.step(PUSH), [None, None], [np.nan, np.nan], (True, True), (True, True))
    # a masked reset restarts the budget of its rows only
    env.reset(options={"reset_mask": [True, False]})
    assert_step(env.step(PUSH), [1, None], [p(1), np.nan], (False, True), (False, True))


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="is not an autoreset mode"):
        VectorEnvFromBrax("fast", num_envs=2, autoreset_mode="eager")


def test_a_seeded_masked_reset_gives_the_masked_rows_fresh_random_states_of_that_seed_only():
    # inverted_pendulum starts from random states; the configuration of the brax package's own tests, so
    # that a run of both compiles it once
    env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, episode_length=8, backend="spring")
    full, _ = env.reset(seed=11)
    full = np.asarray(full)
    before, _ = env.reset(seed=12)
    mask = np.array([False, True, False, True])
    obs, _ = env.reset(seed=11, options={"reset_mask": mask})
    np.testing.assert_array_equal(np.asarray(obs)[mask], full[mask])
    np.testing.assert_array_equal(np.asarray(obs)[~mask], np.asarray(before)[~mask])
    # without a seed, the masked rows get new random states
    again, _ = env.reset(options={"reset_mask": mask})
    assert not np.isclose(np.asarray(again)[mask], full[mask]).all(axis=1).any()
    np.testing.assert_array_equal(np.asarray(again)[~mask], np.asarray(before)[~mask])


def test_the_next_step_mode_compiles_its_step_once_across_resets_and_restarts():
    env = make("next_step")
    env.reset(seed=0)
    env.step(PUSH)
    env.reset(options={"reset_mask": [True, False]})
    env.step(PUSH)
    with programs_compiled() as compiled:
        env.reset(seed=1)
        for _ in range(2 * EPISODE_LENGTH + 2):
            env.step(PUSH)
        env.reset(options={"reset_mask": [False, True]})
        env.step(PUSH)
    assert compiled == []


def test_disabled_mode_with_jax_results_refuses_finished_sub_envs_too():
    env = VectorEnvFromBrax(
        "fast", num_envs=NUM_ENVS, episode_length=EPISODE_LENGTH, autoreset_mode="disabled"
    )
    env.reset(seed=0)
    action = np.ones((NUM_ENVS, 1), np.float32)
    for _ in range(EPISODE_LENGTH):
        _, _, _, truncated, info = env.step(action)
    assert np.asarray(truncated).all() and FINAL_OBS_KEY not in info
    with pytest.raises(RuntimeError, match="autoreset is disabled"):
        env.step(action)
    obs, _ = env.reset(options={"reset_mask": np.asarray(truncated)})
    assert (np.asarray(obs) == 0).all()
    env.step(action)
