"""Discovery as a user's machine sees it: our wheels and a third-party plugin's wheel, no editable
installs (run by `nox -s plugins`, which sets VECRL_WHEELS_INSTALLED)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import vecrl

pytestmark = pytest.mark.skipif(
    not os.environ.get("VECRL_WHEELS_INSTALLED"), reason="run by `nox -s plugins`, which installs the wheels"
)


def test_our_packages_and_the_plugin_are_installed_as_wheels_not_editable():
    for name in ("vecrl", "vecrl_gym", "vecrl_toy"):
        module = __import__(name)
        assert "site-packages" in Path(module.__file__).parts, f"{name} is not installed from a wheel"


def test_the_third_party_prefix_and_ours_are_discovered():
    assert {"gym", "toy"} <= {b.prefix for b in vecrl.list_backends()}
    assert vecrl.backend_distribution("toy") == ("vecrl-toy", "0.0.1")


def test_the_third_party_backend_steps():
    env = vecrl.make_vector_env("toy::Counter", num_envs=2)
    env.reset()
    _, reward, _, _, _ = env.step(torch.tensor([1, 0]))
    assert reward.tolist() == [1.0, 0.0]


def test_the_vecrl_command_lists_the_third_party_backend():
    vecrl_script = Path(sys.executable).parent / "vecrl"
    result = subprocess.run([str(vecrl_script), "backends"], capture_output=True, text=True, check=True)
    assert any(line.startswith("toy ") and "vecrl-toy 0.0.1" in line for line in result.stdout.splitlines())
