"""``old::NAME`` uses brax.v1 where brax still ships it, and otherwise says which versions do."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from vecrl_brax import make_brax_env

HAS_BRAX_V1 = importlib.util.find_spec("brax.v1") is not None


@pytest.mark.skipif(HAS_BRAX_V1, reason="the installed brax still ships brax.v1")
def test_old_prefix_without_brax_v1_is_an_import_error_naming_the_versions_that_ship_it():
    with pytest.raises(ImportError, match=r"removed it in 0\.12\.4.*0\.12\.3"):
        make_brax_env("old::fast", num_envs=2)


@pytest.mark.skipif(not HAS_BRAX_V1, reason="the installed brax has no brax.v1")
def test_old_prefix_makes_a_brax_v1_env():
    env = make_brax_env("old::fast", num_envs=2, episode_length=3)
    obs, _ = env.reset(seed=0)
    for _ in range(3):
        obs, _, terminated, truncated, _ = env.step(torch.ones(2, 1))
    assert truncated.all() and not terminated.any()
