"""The seat rules as a contract (``vecrl.worlds``, ``vecrl.testing.check_worlds``, run by ``check_backend``): a
third party's multi-agent backend on vecrl's engine keeps them, and each way of breaking them is named."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium.spaces import Box, Discrete

import vecrl
from vecrl.errors import BackendCheckError
from vecrl.testing import check_backend, check_worlds, maker
from vecrl.worlds import NotWholeWorldsError


class Pairs(vecrl.HostVectorEnv):
    """Worlds of two seats; a row observes its world's step count, and a world's episode lasts 3 steps (the
    second seat's ``late`` steps more where the backend breaks the rules)."""

    seats_per_world = 2

    def __init__(self, num_envs: int, *, refuse: bool = True, late: int = 0, **episode_options: Any) -> None:
        if refuse and num_envs % 2:
            raise NotWholeWorldsError(num_envs, 2)
        options = vecrl.EpisodeOptions(**episode_options)
        super().__init__(num_envs, Box(0.0, 9.0, (1,), np.float32), Discrete(2), episode_options=options)
        self.time = np.zeros(num_envs, np.float32)
        self.length = 3 + late * (np.arange(num_envs) % 2)

    def reset_rows(self, ids, seeds, options):
        ids = slice(None) if ids is None else ids
        self.time[ids] = 0.0
        return self.time[ids, None].copy(), {}

    def step_rows(self, actions, ids):
        ids = slice(None) if ids is None else ids
        self.time[ids] += 1.0
        time = self.time[ids]
        return (
            time[:, None].copy(),
            np.ones_like(time),
            time >= self.length[ids],
            np.zeros_like(time, bool),
            {},
        )


@pytest.fixture(scope="module")
def make():
    """The backend ``pairs::`` (its env name unused), registered as a plugin's would be."""
    registration = vecrl.register_backend(
        vecrl.Backend(
            "pairs",
            make=lambda env_name, *, num_envs=None, **kwargs: Pairs(num_envs, **kwargs),
            keywords=("num_episodes", "autoreset_mode", "seed_rule"),
        )
    )
    yield maker("pairs")
    registration.unregister()


def test_a_backend_that_keeps_the_seat_rules_passes_and_splitting_masks_are_refused_by_the_engine(make):
    check_backend(make, "pairs", num_envs=4)
    env = Pairs(4)
    env.reset()
    with pytest.raises(ValueError, match=r"splits world\(s\) \[1\] of 2 seats"):
        env.reset(options={"reset_mask": np.array([True, True, False, True])})
    env.step(np.zeros(4, np.int64))  # (refused before anything ran)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"refuse": False}, "must be refused with vecrl.worlds.NotWholeWorldsError"),
        ({"late": 1}, "some rows of a world ended and others did not"),
    ],
)
def test_each_broken_rule_is_named(make, kwargs, words):
    with pytest.raises(BackendCheckError, match=words):
        check_worlds(make, "pairs", num_envs=4, **kwargs)
