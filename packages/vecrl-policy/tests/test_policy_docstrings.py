"""The examples in the docstrings run and print what they claim: the Policy's modules, and those of the engine that
stands on it where it is installed (the rows that install vecrl-evaluate run these tests too)."""

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
    "vecrl_evaluate.command_options",
    "vecrl_evaluate.options",
    "vecrl_evaluate.randomness",
    "vecrl_evaluate.rollout",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    pytest.importorskip(name.split(".")[0])
    module = importlib.import_module(name)
    import torch
    from torch import nn

    result = doctest.testmod(module, extraglobs={"torch": torch, "nn": nn}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
