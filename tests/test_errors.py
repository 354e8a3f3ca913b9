"""vecrl's own errors share one base, vecrl.VecrlError, and each is still the built-in type it was."""

from __future__ import annotations

import pytest

import vecrl
from vecrl.checks import SubEnvError
from vecrl.command import CommandError
from vecrl.testing import BackendCheckError
from vecrl_policy import NetParsingError, WorkerError, str_to_net


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (SubEnvError, RuntimeError),
        (WorkerError, RuntimeError),
        (NetParsingError, ValueError),
        (CommandError, Exception),
        (BackendCheckError, AssertionError),
    ],
)
def test_each_error_is_a_vecrl_error_and_its_builtin_type(error, builtin):
    assert issubclass(error, vecrl.VecrlError) and issubclass(error, builtin)


def test_the_ray_evaluation_error_is_one_too():
    vecrl_ray = pytest.importorskip("vecrl_ray")
    assert issubclass(vecrl_ray.EvaluationError, vecrl.VecrlError)
    assert issubclass(vecrl_ray.EvaluationError, RuntimeError)


def test_except_vecrl_error_catches_what_vecrl_raises():
    with pytest.raises(vecrl.VecrlError, match="unknown layer 'Linearr'"):
        str_to_net("Linearr(4, 2)")
