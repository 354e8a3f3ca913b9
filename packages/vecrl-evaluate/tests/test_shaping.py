"""The checks of evaluate's reward shaping and action noise settings (their effect on evaluate: tests/)."""

import pytest

from vecrl_evaluate.shaping import Shaping


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"decrease_rewards_by": "1"}, "decrease_rewards_by must be a finite number"),
        ({"decrease_rewards_by": float("inf")}, "decrease_rewards_by must be a finite number"),
        ({"alive_bonus_schedule": 3}, r"must be \(t, bonus\) or \(t0, t1, bonus\)"),
        ({"alive_bonus_schedule": (1, 2, 3, 4)}, r"must be \(t, bonus\)"),
        ({"alive_bonus_schedule": (-1, 1.0)}, r"steps are not ints in \[0, 2147483647\]"),
        ({"alive_bonus_schedule": (1.5, 1.0)}, r"steps are not ints in \[0, 2147483647\]"),
        (
            {"alive_bonus_schedule": (10**30, 1.0)},
            r"steps are not ints in \[0, 2147483647\]",
        ),  # (an OverflowError)
        ({"alive_bonus_schedule": (5, 2, 1.0)}, "t1 < t0"),
        ({"alive_bonus_schedule": (5, float("nan"))}, "bonus is not a finite number"),
        ({"action_noise_stdev": -0.1}, "action_noise_stdev must be a finite number >= 0"),
        ({"action_noise_stdev": True}, "action_noise_stdev must be a finite number >= 0"),
    ],
)
def test_bad_settings_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Shaping.checked(**kwargs)
