"""num_episodes: each sub-env runs that many episodes, then reports NaN and terminated=truncated=True."""

from __future__ import annotations

import torch

from vecrl.compat import FINAL_OBS_KEY
from vecrl_brax import make_brax_env

EPISODE_LENGTH = 3


def test_after_its_last_episode_a_sub_env_reports_nan_and_both_flags_until_reset():
    env = make_brax_env("fast", num_envs=2, episode_length=EPISODE_LENGTH, num_episodes=2)
    action = torch.ones(2, 1)
    for _ in range(2):  # the counters restart on reset
        env.reset(seed=0)
        results = [env.step(action) for _ in range(2 * EPISODE_LENGTH + 2)]
        first_end, last_end = results[EPISODE_LENGTH - 1], results[2 * EPISODE_LENGTH - 1]
        # the first episode ends and the next one starts in the same step
        assert first_end[3].all() and not first_end[2].any()
        assert (first_end[0] == 0).all() and (first_end[4][FINAL_OBS_KEY] != 0).any()
        # the last episode ends with its real final observation, reward and flags
        obs, reward, terminated, truncated, info = last_end
        assert truncated.all() and not terminated.any()
        assert not obs.isnan().any() and not reward.isnan().any()
        assert torch.equal(obs, info[FINAL_OBS_KEY])
        # then NaN observations and rewards, terminated and truncated, until reset()
        for obs, reward, terminated, truncated, _ in results[2 * EPISODE_LENGTH :]:
            assert obs.isnan().all() and reward.isnan().all()
            assert terminated.all() and truncated.all()
