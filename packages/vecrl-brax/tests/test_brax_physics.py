"""One full physics env (hopper), through the vecrl contract checks: shapes, dtypes, flags, close."""

from __future__ import annotations

import numpy as np
import pytest

from vecrl.testing import check_reset_and_step
from vecrl_brax import make_brax_env

# the spring pipeline compiles several times faster than brax's default generalized one
HOPPER_KWARGS = {"episode_length": 10, "backend": "spring"}


@pytest.mark.slow
def test_hopper_steps_with_actions_bounded_by_its_actuators():
    check_reset_and_step(make_brax_env, "hopper", num_envs=2, num_steps=3, **HOPPER_KWARGS)
    env = make_brax_env("hopper", num_envs=2, **HOPPER_KWARGS)
    np.testing.assert_array_equal(env.single_action_space.low, -1.0)
    np.testing.assert_array_equal(env.single_action_space.high, 1.0)
    assert env.single_observation_space.shape == (11,)
