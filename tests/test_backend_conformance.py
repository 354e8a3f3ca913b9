"""vecrl's conformance spec (``vecrl.testing``) on every backend installed here, on the cases each backend's
package declares in its ``pyproject.toml`` (``[[tool.vecrl.conformance]]``: tests/vecrl_packages.py): the
contract (types, shapes, seeding, the classic API, close), every autoreset mode with the episode budget,
final observations and masked resets, per-sub-env seeds, and ``num_envs=None`` as one plain env.

It runs in ``nox -s tests`` (every backend but those kept apart), in each isolation row (the backends of that
row) and in each matrix row, so a backend gets the whole spec by declaring a case.
"""

from __future__ import annotations

import importlib.util

import pytest
from vecrl_packages import PACKAGES

from vecrl import testing

CHECKS = testing.CONFORMANCE_CHECKS


def cases() -> list:
    params = []
    for package in PACKAGES.values():
        installed = importlib.util.find_spec(package.import_name) is not None
        for case in package.get("conformance"):
            unknown = sorted(set(case.get("checks", ())) - set(CHECKS))
            assert not unknown, (
                f"{package.name} declares unknown conformance checks {unknown}; known: {sorted(CHECKS)}"
            )
            for check in case.get("checks", CHECKS):
                marks = [pytest.mark.skipif(not installed, reason=f"{package.name} is not installed here")]
                if check in case.get("slow", ()):
                    marks.append(pytest.mark.slow)
                env = f"{package.prefixes[0]}::{case['env']}"
                params.append(
                    pytest.param(env, case.get("kwargs", {}), check, marks=marks, id=f"{env}-{check}")
                )
    return params


@pytest.mark.parametrize(("env", "kwargs", "check"), cases())
def test_every_backend_follows_vecrl_s_conformance_spec(env, kwargs, check):
    prefix, _, env_name = env.partition("::")
    testing.run_conformance(prefix, [{"env": env_name, "kwargs": kwargs, "checks": [check]}])


def test_every_backend_declares_a_case_of_each_check():
    for package in PACKAGES.values():
        if package.prefixes:
            declared = {check for case in package.get("conformance") for check in case.get("checks", CHECKS)}
            assert declared == set(CHECKS), (
                f"{package.name} declares no conformance case for {set(CHECKS) - declared}"
            )
