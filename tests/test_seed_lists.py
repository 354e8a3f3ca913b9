"""Per-sub-env seeds, the same on every backend (vecrl.testing.check_seed_lists): gymnasium's envs
(classic control, MuJoCo's float64, a Discrete observation, worker processes), brax, envpool and MuJoCo
Playground."""

from __future__ import annotations

import pytest

import vecrl
from vecrl.compat import GYMNASIUM_1
from vecrl.testing import BackendCheckError, check_seed_lists

HOPPER = "Hopper-v5" if GYMNASIUM_1 else "Hopper-v4"


def make(prefix: str):
    return lambda name, **kwargs: vecrl.make_vector_env(f"{prefix}::{name}", **kwargs)


@pytest.mark.parametrize(
    ("prefix", "env_name", "package", "kwargs"),
    [
        # (each backend's own case runs in tests/test_backend_conformance.py)
        ("gym", HOPPER, "vecrl_gym", {}),
        ("gym", "FrozenLake-v1", "vecrl_gym", {"is_slippery": True}),
        ("gym", "CartPole-v1", "vecrl_gym", {"num_workers": 2}),
        # envpool fixes each sub-env's seed when its pool is built: a seeded masked reset is refused
        ("envpool", "Hopper-v5", "vecrl_envpool", {}),
    ],
)
def test_a_seed_per_sub_env_starts_each_from_its_own_seed_on_every_backend(prefix, env_name, package, kwargs):
    pytest.importorskip(package)
    check_seed_lists(make(prefix), env_name, num_envs=3, **kwargs)


class FirstSeedOnly(vecrl.TorchWrapper):
    """A backend with the bug the check is for: it seeds the whole batch with the list's first seed."""

    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed[0] if isinstance(seed, list) else seed, options=options)


def test_the_check_fails_a_backend_whose_rows_do_not_follow_their_seeds():
    def make(name, **kwargs):
        return FirstSeedOnly(vecrl.make_vector_env(f"gym::{name}", **kwargs).env)

    with pytest.raises(BackendCheckError, match="rows of the second are not those of the first, moved"):
        check_seed_lists(make, "CartPole-v1", num_envs=3)
