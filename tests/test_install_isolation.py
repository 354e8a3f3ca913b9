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
from vecrl_packages import PACKAGES

import vecrl

INSTALLED = [name for name in os.environ.get("VECRL_ISOLATION", "").split(",") if name]
pytestmark = pytest.mark.skipif(not INSTALLED, reason="run by `nox -s isolation`, which sets VECRL_ISOLATION")

BROUGHT = sorted({module for package in PACKAGES.values() for module in package.get("brings")})
LAZY = sorted({module for package in PACKAGES.values() for module in package.get("lazy-imports")})
BACKENDS = [(prefix, package.name) for package in PACKAGES.values() for prefix in package.prefixes]


def is_installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def modules_loaded_by(code: str, modules: list[str]) -> set[str]:
    """Which of ``modules`` a fresh interpreter holds after running ``code``."""
    report = f"import sys; {code}; print(' '.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", report], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


@pytest.mark.parametrize("distribution", PACKAGES)
def test_exactly_the_chosen_vecrl_packages_are_installed(distribution):
    assert is_installed(distribution) == (distribution in INSTALLED)


@pytest.mark.parametrize("module", BROUGHT)
def test_a_heavy_dependency_comes_only_with_a_package_that_brings_it(module):
    # playground depends on brax, and EvoTorch on Ray: each package's pyproject says what it
    # brings (so gymnax's row, core+jax+gymnax+policy+evaluate, holds no brax)
    bringers = [package.name for package in PACKAGES.values() if module in package.get("brings")]
    assert (importlib.util.find_spec(module) is not None) == any(b in INSTALLED for b in bringers), bringers


@pytest.mark.parametrize(("prefix", "distribution"), BACKENDS)
def test_a_missing_backend_names_the_package_to_install(prefix, distribution):
    if distribution in INSTALLED:
        assert vecrl.get_backend(prefix).prefix == prefix
    else:
        with pytest.raises(ValueError, match=f"pip install -c constraints.txt packages/{distribution}"):
            vecrl.make_vector_env(f"{prefix}::Anything", num_envs=1)


@pytest.mark.parametrize("distribution", INSTALLED)
def test_importing_a_package_and_listing_backends_imports_nothing_heavy(distribution):
    package = PACKAGES[distribution]
    loaded = modules_loaded_by(f"import {package.import_name}; import vecrl; vecrl.list_backends()", LAZY)
    # a package may import what a dependency of its own imports whenever it is installed (EvoTorch imports
    # jax where vecrl-brax brought it: the `all` row)
    assert loaded <= set(package.get("imports-when-installed"))


def test_listing_backends_loads_their_plugin_modules_and_never_the_policy_package():
    plugins = [package.import_name for package in PACKAGES.values() if package.prefixes]
    loaded = modules_loaded_by("import vecrl; vecrl.list_backends()", ["vecrl_policy", *plugins])
    assert loaded == {
        package.import_name for package in PACKAGES.values() if package.prefixes and package.name in INSTALLED
    }


def test_the_evaluate_command_names_its_package_when_it_is_missing():
    vecrl_script = os.path.join(os.path.dirname(sys.executable), "vecrl")
    result = subprocess.run([vecrl_script, "evaluate", "gym::CartPole-v1"], capture_output=True, text=True)
    if "vecrl-evaluate" in INSTALLED:
        assert result.returncode in (0, 2) and "'vecrl evaluate' is added by" not in result.stderr
    else:
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert (
            "'vecrl evaluate' is added by the package vecrl-evaluate, which is not installed" in result.stderr
        )
        assert "pip install -c constraints.txt packages/vecrl-evaluate" in result.stderr
