"""What a user who installs only some vecrl packages gets (run by `nox -s isolation`).

The session names the installed vecrl distributions in VECRL_ISOLATION; these tests check that
exactly those are there, that nothing heavier came along, and that what is missing says how to get it.
"""

import importlib.metadata
import importlib.util
import os
import subprocess
import sys

import pytest

import vecrl

INSTALLED = [name for name in os.environ.get("VECRL_ISOLATION", "").split(",") if name]
pytestmark = pytest.mark.skipif(not INSTALLED, reason="run by `nox -s isolation`, which sets VECRL_ISOLATION")

ALL = (
    "vecrl-core",
    "vecrl-gym",
    "vecrl-brax",
    "vecrl-policy",
    "vecrl-sb3",
    "vecrl-ray",
    "vecrl-envpool",
    "vecrl-playground",
    "vecrl-evotorch",
)
IMPORT_NAMES = {
    "vecrl-core": "vecrl",
    "vecrl-gym": "vecrl_gym",
    "vecrl-brax": "vecrl_brax",
    "vecrl-policy": "vecrl_policy",
    "vecrl-sb3": "vecrl_sb3",
    "vecrl-ray": "vecrl_ray",
    "vecrl-envpool": "vecrl_envpool",
    "vecrl-playground": "vecrl_playground",
    "vecrl-evotorch": "vecrl_evotorch",
}


def is_installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.parametrize("distribution", ALL)
def test_exactly_the_chosen_vecrl_packages_are_installed(distribution):
    assert is_installed(distribution) == (distribution in INSTALLED)


def test_jax_and_brax_come_only_with_vecrl_brax():
    with_brax = (
        "vecrl-brax" in INSTALLED
    )  # vecrl-playground installs it: the two share their jitted machinery
    assert (importlib.util.find_spec("jax") is not None) == with_brax
    assert (importlib.util.find_spec("brax") is not None) == with_brax


def test_ray_comes_only_with_vecrl_ray_or_evotorch():
    with_ray = "vecrl-ray" in INSTALLED or "vecrl-evotorch" in INSTALLED  # EvoTorch depends on Ray
    assert (importlib.util.find_spec("ray") is not None) == with_ray


def test_envpool_comes_only_with_vecrl_envpool():
    assert (importlib.util.find_spec("envpool") is not None) == ("vecrl-envpool" in INSTALLED)


def test_playground_comes_only_with_vecrl_playground():
    assert (importlib.util.find_spec("mujoco_playground") is not None) == ("vecrl-playground" in INSTALLED)


@pytest.mark.parametrize(
    ("prefix", "distribution"),
    [
        ("gym", "vecrl-gym"),
        ("brax", "vecrl-brax"),
        ("envpool", "vecrl-envpool"),
        ("playground", "vecrl-playground"),
    ],
)
def test_a_missing_backend_names_the_package_to_install(prefix, distribution):
    if distribution in INSTALLED:
        assert vecrl.get_backend(prefix).prefix == prefix
    else:
        with pytest.raises(ValueError, match=f"pip install -c constraints.txt packages/{distribution}"):
            vecrl.make_vector_env(f"{prefix}::Anything", num_envs=1)


def test_importing_the_installed_packages_and_listing_backends_imports_nothing_heavy():
    # EvoTorch itself imports jax and brax (and with them mujoco) whenever they are installed: vecrl-evotorch
    # is left out where vecrl-brax brought them (the `all` row)
    own = [d for d in INSTALLED if not (d == "vecrl-evotorch" and "vecrl-brax" in INSTALLED)]
    imports = "; ".join(f"import {IMPORT_NAMES[d]}" for d in own)
    code = (
        f"import sys; {imports}; import vecrl; vecrl.list_backends();"
        " print(' '.join(m for m in ('jax', 'brax', 'mujoco', 'envpool', 'mujoco_playground', 'vecrl_gym', 'vecrl_policy') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = result.stdout.split()
    assert "jax" not in loaded and "brax" not in loaded and "mujoco" not in loaded and "envpool" not in loaded
    assert "mujoco_playground" not in loaded
    # listing backends loads the gym plugin module, never the policy package
    assert ("vecrl_policy" in loaded) == ("vecrl-policy" in INSTALLED)


def test_the_evaluate_command_names_its_package_when_it_is_missing():
    vecrl_script = os.path.join(os.path.dirname(sys.executable), "vecrl")
    result = subprocess.run([vecrl_script, "evaluate", "gym::CartPole-v1"], capture_output=True, text=True)
    if "vecrl-policy" in INSTALLED:
        assert result.returncode in (0, 2) and "'vecrl evaluate' is added by" not in result.stderr
    else:
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert (
            "'vecrl evaluate' is added by the package vecrl-policy, which is not installed" in result.stderr
        )
        assert "pip install -c constraints.txt packages/vecrl-policy" in result.stderr
