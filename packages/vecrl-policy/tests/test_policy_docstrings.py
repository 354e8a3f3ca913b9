"""The examples in the docstrings run and print what they claim."""

import doctest
import importlib

import pytest

MODULES = [
    "vecrl_policy",
    "vecrl_policy.chain",
    "vecrl_policy.fastpath",
    "vecrl_policy.flat",
    "vecrl_policy.layer_table",
    "vecrl_policy.layers",
    "vecrl_policy.parser",
    "vecrl_policy.policy",
    "vecrl_policy.normalization",
    "vecrl_policy.statistics",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    import torch
    from torch import nn

    result = doctest.testmod(module, extraglobs={"torch": torch, "nn": nn}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
