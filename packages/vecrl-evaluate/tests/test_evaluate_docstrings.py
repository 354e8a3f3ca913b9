"""The examples in the engine's docstrings run and print what they claim (in every row that installs it)."""

import doctest
import importlib

import pytest

MODULES = [
    "vecrl_evaluate.command_options",
    "vecrl_evaluate.options",
    "vecrl_evaluate.randomness",
    "vecrl_evaluate.rollout",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    import torch

    result = doctest.testmod(module, extraglobs={"torch": torch}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
