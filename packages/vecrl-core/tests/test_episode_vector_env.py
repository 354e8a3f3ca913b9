"""EpisodeVectorEnv: the episode options and reset requests every backend shares, on a small subclass."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

from vecrl import Capabilities, EpisodeOptions, EpisodeVectorEnv
from vecrl.compat import AutoresetMode


class Requests(EpisodeVectorEnv):
    """Returns each reset's checked request as its info, so that the tests read what a backend would get."""

    def __init__(self, num_envs: int = 3, **options) -> None:
        super().__init__(
            num_envs, Box(-1.0, 1.0, (2,)), Discrete(2), episode_options=EpisodeOptions(**options)
        )
        self.started = False

    def reset(self, *, seed=None, options=None):
        request = self._reset_request(seed, options, started=self.started)
        self.started = True
        return np.zeros((self.num_envs, 2), np.float32), {"request": request}


class Unseedable(Requests):
    capabilities = Capabilities(seeded_masked_reset=False)


class PassesOptions(Requests):
    capabilities = Capabilities(passes_reset_options=True)


def request(env, **kwargs):
    return env.reset(**kwargs)[1]["request"]


def test_a_pending_seed_seeds_the_next_reset_without_a_seed_of_its_own():
    env = Requests(seed_rule="gymnasium")
    env.seed(5)
    assert request(env, seed=None).seeds == [5, 6, 7]  # what a gymnasium wrapper passes on
    assert request(env).seeds is None  # used once
    env.seed([1, None, 3])
    assert request(env, seed=8).seeds == [8, 9, 10]  # a seed of its own wins, and the pending one is gone
    assert request(env).seeds is None


def test_seed_none_cancels_a_pending_seed():
    env = Requests()
    env.seed(5)
    env.seed(None)
    assert request(env).seeds is None


def test_a_refused_reset_leaves_the_pending_seed_and_the_env_as_they_were():
    env = Requests(seed_rule="gymnasium")
    env.seed(5)
    with pytest.raises(ValueError, match="all False"):
        env.reset(options={"reset_mask": [False, False, False]})
    with pytest.raises(RuntimeError, match="not been reset yet"):
        env.reset(options={"reset_mask": [True, False, False]})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert not env.started
    assert request(env).seeds == [5, 6, 7]


def test_an_all_true_mask_is_a_full_reset_and_a_mask_chooses_sub_envs_once_started():
    env = Requests()
    assert request(env, options={"reset_mask": [True] * 3}).mask is None
    mask = request(env, options={"reset_mask": np.array([True, False, True])}).mask
    assert mask.tolist() == [True, False, True]


def test_other_reset_options_are_refused_unless_the_env_passes_them_on():
    with pytest.raises(ValueError, match="Requests takes no reset options other than 'reset_mask'"):
        Requests().reset(options={"init_state": 1})
    assert request(Requests(), options={}).options is None
    env = PassesOptions()
    assert request(env, options={"x_init": 0.5}).options == {"x_init": 0.5}
    assert request(env, options={"x_init": 0.5, "reset_mask": [True] * 3}) == (None, None, {"x_init": 0.5})


def test_a_seeded_masked_reset_is_refused_where_the_env_cannot_seed_some_sub_envs_alone():
    env = Unseedable(seed_rule="gymnasium")
    env.reset(seed=0)
    env.seed(3)
    with pytest.raises(ValueError, match="cannot seed only some sub-envs of a Unseedable"):
        env.reset(options={"reset_mask": [True, False, False]})
    assert request(env).seeds == [3, 4, 5]  # still pending after the refusal


def test_a_closed_env_refuses_reset():
    env = Requests()
    env.close()
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_episode_options_are_checked_and_declared():
    env = Requests(num_episodes=2, autoreset_mode="next_step", seed_rule="evotorch")
    assert env.num_episodes == 2
    assert env.seed_rule == "evotorch"
    declared = env.metadata["autoreset_mode"]
    assert declared == env.autoreset_mode
    assert declared == ("next_step" if AutoresetMode is None else AutoresetMode.NEXT_STEP)
    with pytest.raises(ValueError, match="cannot be combined with autoreset_mode='disabled'"):
        Requests(num_episodes=1, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="is not a seed rule"):
        Requests(seed_rule="numpy")


def test_sub_env_seeds_follow_the_rule_and_need_one():
    assert Requests(seed_rule="gymnasium").sub_env_seeds(4) == [4, 5, 6]
    with pytest.raises(ValueError, match="has no seed_rule"):
        Requests(seed_rule=None).sub_env_seeds(4)
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2\*\*32\)"):
        Requests().sub_env_seeds(2.5)


def test_with_autoreset_disabled_a_step_is_refused_until_the_finished_sub_envs_are_reset():
    import torch

    env = Requests(autoreset_mode="disabled")
    env._refuse_finished()  # nothing ended yet
    env._note_ended(np.array([False, True, False]))
    env._note_ended(torch.tensor([False, False, True]))  # any array type; kept until a reset
    with pytest.raises(RuntimeError, match=r"sub-envs \[1, 2\] have ended and autoreset is disabled"):
        env._refuse_finished()
    env._note_reset(np.array([False, True, False]))
    with pytest.raises(RuntimeError, match=r"sub-envs \[2\] have ended"):
        env._refuse_finished()
    env._note_reset(None)
    env._refuse_finished()
