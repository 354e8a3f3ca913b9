import gymnasium
import pytest

from vecrl.autoreset import AUTORESET_MODES, autoreset_metadata, autoreset_mode_name, declared_autoreset_mode
from vecrl.compat import AutoresetMode


@pytest.mark.parametrize("mode", AUTORESET_MODES)
def test_every_mode_round_trips_through_the_metadata_it_declares(mode):
    class Env:
        metadata = autoreset_metadata(mode)

    assert declared_autoreset_mode(Env()) == mode


def test_gymnasiums_spellings_name_the_same_modes():
    assert [autoreset_mode_name(m) for m in ("SameStep", "NextStep", "Disabled")] == list(AUTORESET_MODES)
    if AutoresetMode is not None:
        assert autoreset_mode_name(AutoresetMode.DISABLED) == "disabled"
        assert autoreset_metadata("disabled")["autoreset_mode"] is AutoresetMode.DISABLED
    else:
        assert autoreset_metadata("disabled")["autoreset_mode"] == "disabled"


def test_an_env_that_declares_no_mode_is_taken_to_reset_in_the_same_step():
    assert declared_autoreset_mode(gymnasium.make("CartPole-v1")) == "same_step"
    assert declared_autoreset_mode(object(), default="next_step") == "next_step"


@pytest.mark.parametrize("bad", ["eager", None, 1])
def test_anything_else_is_a_value_error_listing_the_modes(bad):
    with pytest.raises(ValueError, match="'same_step', 'next_step', 'disabled'"):
        autoreset_mode_name(bad)
