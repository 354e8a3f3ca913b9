"""Each package's folder declares what the central files need (tests/vecrl_packages.py); these tests check the
declarations against what the package really is, and name the lists that are still kept by hand."""

from __future__ import annotations

import ast
import graphlib
import re
from pathlib import Path

import pytest
import tomllib
from vecrl_packages import PACKAGES, ROOT, isolation_rows, read_package

import vecrl


def test_every_package_is_read_from_its_folder_and_core_comes_first():
    assert next(iter(PACKAGES)) == "vecrl-core"
    assert {p.folder.name for p in PACKAGES.values()} == {p.name for p in (ROOT / "packages").iterdir()}


def test_a_misspelled_key_names_the_file_and_the_known_keys(tmp_path: Path):
    folder = tmp_path / "vecrl-new"
    (folder / "src" / "vecrl_new").mkdir(parents=True)
    (folder / "src" / "vecrl_new" / "__init__.py").write_text("")
    (folder / "smoke_check.py").write_text("def check() -> None: ...\n")
    (folder / "pyproject.toml").write_text('[project]\nname = "vecrl-new"\n\n[tool.vecrl]\nbring = ["jax"]\n')
    with pytest.raises(
        ValueError, match=r"unknown \[tool.vecrl\] keys \['bring'\]; known: \['api-modules', 'brings'"
    ):
        read_package(folder)
    (folder / "pyproject.toml").write_text('[project]\nname = "vecrl-new"\n')
    with pytest.raises(ValueError, match="any other package a docs-page"):
        read_package(folder)
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "vecrl-new"\n\n[tool.vecrl]\ndocs-page = "x.md"\n'
    )
    assert read_package(folder).import_name == "vecrl_new"
    (folder / "smoke_check.py").unlink()
    with pytest.raises(ValueError, match="has no smoke_check.py"):
        read_package(folder)


def test_only_the_packages_that_would_hold_the_others_back_are_kept_out_of_the_tests_session():
    kept_apart = [name for name, package in PACKAGES.items() if not package.get("tests-session", True)]
    assert kept_apart == ["vecrl-gymnax"]  # gymnax pins gymnasium<1.4


def test_the_backends_vecrl_names_when_they_are_missing_are_the_declared_ones():
    # vecrl-core's hint for a backend that is not installed (vecrl.registry.WELL_KNOWN_BACKENDS) is kept by
    # hand: core cannot read a package that is not installed
    declared = {prefix: p.name for p in PACKAGES.values() for prefix in p.prefixes}
    assert declared == vecrl.registry.WELL_KNOWN_BACKENDS


def test_the_docs_site_shows_every_readme_on_an_authored_page_or_a_backend_page_of_its_own():
    # docs/hooks.py makes the backends' pages and the API pages; the other pages are written in docs/
    for package in PACKAGES.values():
        authored = (ROOT / "docs" / package.docs_page).is_file()
        assert authored != bool(package.prefixes), package.docs_page
        if authored:
            include = f'--8<-- "{package.folder.relative_to(ROOT).as_posix()}/README.md"'
            assert include in (ROOT / "docs" / package.docs_page).read_text(encoding="utf-8")


def test_the_isolation_rows_and_those_ci_runs_come_from_the_declarations():
    rows = {row.id: row for row in isolation_rows()}
    assert {id for id, row in rows.items() if row.ci} == {
        "core",
        "core+gym",
        "core+policy",  # the Policy alone, without the engine
        "core+policy+evaluate",  # the engine with what it needs
        "core+gym+policy+evaluate",
        "core+jax+gymnax+policy+evaluate",  # gymnax's tests run there only (it is kept out of `nox -s tests`)
        "core+jax",  # vecrl-jax's README: the jax backend example of the backend contract
    }
    assert rows["core+jax+gymnax+policy+evaluate"].tests and rows["core+policy+evaluate"].tests
    # two READMEs with one install line make one row, where both READMEs' blocks run
    assert rows["core+gym"].documents == ("packages/vecrl-core/README.md", "packages/vecrl-gym/README.md")
    assert rows["core+sb3"].tests and rows["core+gym+sb3"].documents == ("packages/vecrl-sb3/README.md",)
    assert not rows["core+gym+policy+evaluate"].tests and rows["all"].packages == tuple(PACKAGES)
    # vecrl-ray's and vecrl-evotorch's READMEs run in their own sessions
    assert not any(
        "vecrl-ray" in row.packages or "vecrl-evotorch" in row.packages
        for row in rows.values()
        if row.id != "all"
    )


def test_every_package_says_its_version_as_its_pyproject_does():
    for package in PACKAGES.values():
        declared = tomllib.loads((package.folder / "pyproject.toml").read_text(encoding="utf-8"))["project"][
            "version"
        ]
        init = (package.folder / "src" / package.import_name / "__init__.py").read_text(encoding="utf-8")
        assert f'\n__version__ = "{declared}"\n' in init, (
            f"{package.name}'s __init__ has no __version__ = {declared!r}"
        )


def test_the_changelog_s_sections_name_packages_of_this_repository():
    headings = re.findall(r"^### (.+)$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)
    named = {name.strip().split(" ")[0] for heading in headings for name in heading.split(",")}
    assert headings and named <= set(PACKAGES), named - set(PACKAGES)


def test_every_package_s_public_names_resolve():
    # each __init__.pyi names the module of every public name (vecrl.lazy.attach_stub): a wrong one fails
    # here, not at a user's first use
    import importlib
    import importlib.util

    for package in PACKAGES.values():
        if importlib.util.find_spec(package.import_name) is None:
            continue  # not installed in this row (gymnax has a row of its own)
        module = importlib.import_module(package.import_name)
        for public in module.__all__:
            assert getattr(module, public) is not None, (package.name, public)


def module_imports() -> dict[str, set[str]]:
    """Each module of every package -> the modules of the repository it imports, wherever in the file
    (lazy and type-only imports too: each is a piece of knowledge of the other module)."""
    files = {}
    for package in PACKAGES.values():
        for path in (package.folder / "src").rglob("*.py"):
            name = ".".join(path.relative_to(package.folder / "src").with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
        graph[name] = set()
        for target in targets:
            while target and target not in files:  # the module an imported name belongs to
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def test_the_house_has_no_import_circle():
    graph = module_imports()
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"an import circle: {' -> '.join(error.args[1])}; move the shared piece down")


def test_no_package_imports_one_that_stands_on_it():
    """The arrows run down: a package may import those it depends on (or, optionally, one beside it, as the
    engine imports vecrl_jax for a jax env), never one that depends on it."""
    depends_on = {
        package.name: {
            re.split(r"[<>=!~\\[ ;]", requirement)[0]
            for requirement in tomllib.loads((package.folder / "pyproject.toml").read_text(encoding="utf-8"))[
                "project"
            ]["dependencies"]
        }
        & set(PACKAGES)
        for package in PACKAGES.values()
    }
    below: dict[str, set[str]] = {}
    for name in depends_on:  # everything each package stands on, directly or not
        below[name] = set()
        todo = list(depends_on[name])
        while todo:
            dependency = todo.pop()
            if dependency not in below[name]:
                below[name].add(dependency)
                todo += depends_on[dependency]
    owner = {package.import_name: package.name for package in PACKAGES.values()}
    upward = [
        f"{module} imports {target}"
        for module, imported in module_imports().items()
        for target in imported
        if owner[module.split(".")[0]] in below[owner[target.split(".")[0]]]
    ]
    assert upward == []


def test_all_packages_txt_installs_every_package_the_tests_session_installs_together():
    # all-packages.txt is the README's one line that installs the whole checkout; nox's tests session reads the
    # folders themselves, so this list is the one kept by hand
    lines = (ROOT / "all-packages.txt").read_text().splitlines()
    listed = [
        re.fullmatch(r"-e \./packages/([\w-]+)(\[[\w,-]+\])?", line) for line in lines if line[:1] != "#"
    ]
    assert all(listed), lines
    together = [name for name, package in PACKAGES.items() if package.get("tests-session", True)]
    assert sorted(match.group(1) for match in listed if match) == sorted(together)
