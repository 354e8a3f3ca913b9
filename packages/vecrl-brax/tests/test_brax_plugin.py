"""The brax plugin is found through its entry point and imports neither jax nor brax until an env is made."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import vecrl

CHECK = """
import sys
import vecrl, vecrl_brax, vecrl_brax.plugin
assert [b.prefix for b in vecrl_brax.plugin.vecrl_backends()] == ["brax"]
assert "brax" in [b.prefix for b in vecrl.list_backends()]
vecrl.get_backend("brax")
leaked = sorted(m for m in ("jax", "jaxlib", "brax") if m in sys.modules)
assert not leaked, leaked
"""


def test_importing_the_plugin_and_listing_backends_imports_neither_jax_nor_brax():
    result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_brax_prefix_is_served_by_the_entry_point_of_the_installed_vecrl_brax():
    (entry_point,) = importlib.metadata.entry_points(group="vecrl", name="brax")
    assert entry_point.value == "vecrl_brax.plugin" and entry_point.dist.metadata["Name"] == "vecrl-brax"
    assert vecrl.get_backend("brax").make == "vecrl_brax.make:make_brax_vector_env"
