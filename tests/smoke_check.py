"""Import and use each named package in an env that holds only them and their declared dependencies.

Run by ``nox -s isolation`` before any test tool is installed: a dependency a package uses without
declaring it (one that pytest happens to bring along, such as packaging) fails here. Each package's check
is the ``check()`` of its own ``smoke_check.py`` (tests/vecrl_packages.py).

    python tests/smoke_check.py vecrl-core vecrl-gym
"""

from __future__ import annotations

import importlib.util
import sys

from vecrl_packages import PACKAGES


def run_check(package: str) -> None:
    """Load ``packages/<package>/smoke_check.py`` by its path and run its ``check()``."""
    path = PACKAGES[package].folder / "smoke_check.py"
    spec = importlib.util.spec_from_file_location(f"smoke_check_{package.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.check()


def main(packages: list[str]) -> int:
    unknown = sorted(set(packages) - set(PACKAGES))
    if unknown or not packages:
        print(
            f"usage: smoke_check.py PACKAGE...; packages: {', '.join(PACKAGES)} (got {unknown})",
            file=sys.stderr,
        )
        return 2
    for tool in ("pytest", "hypothesis"):
        if importlib.util.find_spec(tool) is not None:
            print(f"smoke_check: {tool} is installed here; run this before any test tool.", file=sys.stderr)
            return 2
    for package in packages:
        run_check(package)
        print(f"smoke_check: {package} imports and runs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
