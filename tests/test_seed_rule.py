"""One seed rule on every backend: ``seed_rule=`` makes ``reset(seed=S)`` give the sub-envs the same seeds on
gym and envpool (and on the jax backends: their tests), so one seed means the same thing whichever engine
runs it."""

from __future__ import annotations

import pytest

import vecrl
from vecrl.seeding import sub_env_seeds


@pytest.mark.parametrize("rule", ["gymnasium", "evotorch"])
@pytest.mark.parametrize("env_name", ["gym::CartPole-v1", "envpool::CartPole-v1"])
def test_make_vector_env_takes_seed_rule_on_the_host_backends_and_seeds_by_it(env_name, rule):
    pytest.importorskip(f"vecrl_{env_name.partition('::')[0]}")
    env = vecrl.make_vector_env(env_name, num_envs=4, seed_rule=rule)
    seed = 50  # the evotorch rule's seeds of 50 are all below envpool's int32 limit, so envpool takes them
    assert env.unwrapped.sub_env_seeds(seed) == sub_env_seeds(seed, 4, rule)
    first, _ = env.reset(seed=seed)
    again, _ = env.reset(seed=sub_env_seeds(seed, 4, rule))
    assert first.equal(again)
    env.close()


@pytest.mark.parametrize("env_name", ["gym::CartPole-v1", "envpool::CartPole-v1"])
def test_an_unknown_seed_rule_names_the_rules(env_name):
    pytest.importorskip(f"vecrl_{env_name.partition('::')[0]}")
    with pytest.raises(ValueError, match=r"seed_rule='S\+i' is not a seed rule\. Expected 'evotorch'"):
        vecrl.make_vector_env(env_name, num_envs=4, seed_rule="S+i")
