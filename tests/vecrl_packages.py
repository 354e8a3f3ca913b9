"""What the repository's central files know about each package, read from the package's own folder.

``noxfile.py`` (sessions, isolation and matrix rows, what CI runs), ``tests/smoke_check.py`` and
``tests/test_install_isolation.py`` read the packages from here, so adding a package (a backend, say) touches
its own folder only:

- ``packages/<name>/pyproject.toml``: the distribution's name, its import name (the one folder under
  ``src/``), its backend prefixes (its ``vecrl`` entry points) and a ``[tool.vecrl]`` table with the keys
  below, each optional;
- ``packages/<name>/smoke_check.py``: a ``check()`` that imports and uses the package in an env holding only
  it and its dependencies (run before any test tool is installed).

``[tool.vecrl]`` keys:

- ``brings``: modules that come installed with this package only (the isolation tests check that they are
  absent otherwise);
- ``lazy-imports``: modules that importing this package (or listing backends) must not import;
- ``imports-when-installed``: modules this package imports whenever they are installed, whoever brought them
  (a dependency's habit), left out of the ``lazy-imports`` check for it;
- ``test-extras``: what its tests need beyond its dependencies;
- ``readme-row``: whether its README's install line makes an isolation row, where its README's blocks run
  (default true; rows with the same packages merge);
- ``isolation-rows``: more isolation rows, each a list of packages (the tests of those packages run there);
- ``ci``: whether its isolation rows run in CI (``.ci/run`` runs the sessions tagged ``ci``);
- ``tests-session``: whether ``nox -s tests`` (and ``bench``) install it with the others (default true); false
  where its dependencies would hold the others back (gymnax pins an older gymnasium): its tests then run in its
  isolation rows;
- ``matrix-rows``: dependency rows ``{id, packages, pins}`` its tests run against (``nox -s matrix``);
- ``conformance``: a backend's cases of vecrl's conformance spec (``tests/test_backend_conformance.py`` runs
  ``vecrl.testing``'s checks on them wherever the package is installed), each ``{env, kwargs}`` with episodes
  that end within a few steps, and optionally ``checks`` (default: every check) and ``slow`` (checks marked
  slow: the isolation and matrix rows leave them out);
- ``matrix-tests``: the repository's own tests (under ``tests/``) that run in every matrix row holding it;
- ``docs-title``: a backend's title on the docs site, where its README is its own page (``docs/hooks.py``
  makes it), or ``docs-page``: the authored page of ``docs/`` that shows its README. Every package gets an
  API reference page;
- ``api-modules``: the modules, beyond the package's own names, that its API reference page shows (those the
  READMEs send readers to: ``docs/check_reference.py`` checks that each reference has its entry).

    >>> [p.name for p in read_packages()][:2]
    ['vecrl-core', 'vecrl-brax']
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomllib  # Python 3.11+ (the tests run on 3.11, the only Python with the pinned torch)
from readme_blocks import packages_installed_by

ROOT = Path(__file__).resolve().parent.parent
KEYS = {
    "brings",
    "lazy-imports",
    "imports-when-installed",
    "test-extras",
    "readme-row",
    "isolation-rows",
    "ci",
    "tests-session",
    "matrix-rows",
    "matrix-tests",
    "conformance",
    "docs-page",
    "docs-title",
    "api-modules",
}


@dataclass(frozen=True)
class Package:
    """One package of the repository, as its folder declares it."""

    name: str
    folder: Path
    import_name: str
    prefixes: tuple[str, ...]
    table: dict[str, Any]

    def get(self, key: str, default: Any = ()) -> Any:
        return self.table.get(key, default)

    @property
    def docs_page(self) -> str:
        """The docs site's page that shows its README (a backend's own: ``backends/<prefix>.md``)."""
        return self.table.get("docs-page") or f"backends/{self.prefixes[0]}.md"


def read_package(folder: Path) -> Package:
    """The package in ``folder``; a ValueError names a misspelled ``[tool.vecrl]`` key or a missing file."""
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    table = project.get("tool", {}).get("vecrl", {})
    entry_points = project["project"].get("entry-points", {}).get("vecrl", {})
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ValueError(
            f"{folder}/pyproject.toml: unknown [tool.vecrl] keys {unknown}; known: {sorted(KEYS)}"
        )
    backend = bool(entry_points)
    if backend != ("docs-title" in table) or backend == ("docs-page" in table):
        raise ValueError(
            f"{folder}/pyproject.toml: [tool.vecrl] gives a backend a docs-title (its README becomes its own"
            " page of the docs site) and any other package a docs-page (the page of docs/ that shows its README)"
        )
    if not (folder / "smoke_check.py").is_file():
        raise ValueError(f"{folder} has no smoke_check.py: write one with a check() (see {__file__})")
    (import_name,) = (p.parent.name for p in (folder / "src").glob("*/__init__.py"))
    return Package(project["project"]["name"], folder, import_name, tuple(entry_points), table)


def read_packages() -> list[Package]:
    """Every package under ``packages/``: vecrl-core first, the others by name."""
    packages = [read_package(p.parent) for p in sorted((ROOT / "packages").glob("*/pyproject.toml"))]
    return sorted(packages, key=lambda p: (p.name != "vecrl-core", p.name))


PACKAGES = {package.name: package for package in read_packages()}


@dataclass(frozen=True)
class IsolationRow:
    """Packages installed alone in a fresh env (``nox -s "isolation(<id>)"``): the documents' blocks run
    there (the first one's install line installs it), then, with ``tests``, the packages' tests."""

    packages: tuple[str, ...]
    documents: tuple[str, ...]
    tests: bool
    ci: bool

    @property
    def id(self) -> str:
        if set(self.packages) == set(PACKAGES):
            return "all"
        return "+".join(p.removeprefix("vecrl-") for p in self.packages)


def isolation_rows() -> list[IsolationRow]:
    """One row per install combination: the rows each package declares (its README's install line, where its
    README's blocks run, and its ``isolation-rows``; in CI if it declares ``ci``), the top README's (in CI;
    its packages' tests run in the other rows, so this row runs its blocks and the example's command) and
    ``all``. Rows with the same packages merge."""
    rows: dict[tuple[str, ...], IsolationRow] = {}

    def add(packages: tuple[str, ...], documents: tuple[str, ...], tests: bool, ci: bool) -> None:
        known = rows.get(packages, IsolationRow(packages, (), False, False))
        rows[packages] = IsolationRow(
            packages, known.documents + documents, known.tests or tests, known.ci or ci
        )

    for package in PACKAGES.values():
        ci = package.get("ci", False)
        for packages in package.get("isolation-rows"):
            add(tuple(packages), (), True, ci)
        if package.get("readme-row", True):
            readme = package.folder / "README.md"
            add(packages_installed_by(readme), (readme.relative_to(ROOT).as_posix(),), True, ci)
    add(packages_installed_by(ROOT / "README.md"), ("README.md", "examples/evolve_cartpole.py"), False, True)
    add(tuple(PACKAGES), (), True, False)
    return list(rows.values())
