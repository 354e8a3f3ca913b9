"""mkdocs hook: the site's pages are made of the repository's READMEs, written once.

Each backend's README is a page of its own, and each package has an API reference page: both are made
here from the packages' folders (tests/vecrl_packages.py), and listed in the nav's "Backends" and "API
reference" sections, so a new package needs nothing in docs/ or mkdocs.yml.

A line ``--8<-- "path"`` in a page is replaced by that file, with its relative links rewritten for the
site: a link to a README or a package's folder goes to the page that shows it, a link to any other file
of the repository to that file in the repository.
"""

from __future__ import annotations

import ast
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from vecrl_packages import PACKAGES  # noqa: E402  (what each package's folder declares: one home)

#: Where a file of the repository is shown (the Source URL of the packages' pyproject.toml).
SOURCE = "https://github.com/vecrl/vecrl/blob/main/"
#: The page that shows each README (by its folder): a backend's README is its own page.
PAGES = {".": "index.md", **{p.folder.relative_to(ROOT).as_posix(): p.docs_page for p in PACKAGES.values()}}
BACKENDS = [p for p in PACKAGES.values() if p.prefixes]
INCLUDE = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)
LINK = re.compile(r"\]\(([^)#\s]*)(#[^)\s]*)?\)")


def on_config(config: Any, **kwargs: Any) -> Any:
    """The nav's "Backends" and "API reference" sections, one entry per package."""
    sections = {
        "Backends": [{f"{p.table['docs-title']} ({p.prefixes[0]}::)": p.docs_page} for p in BACKENDS],
        "API reference": [{p.import_name: _api_page(p.import_name)} for p in PACKAGES.values()],
    }
    for entry in config["nav"]:
        for title in entry.keys() & sections.keys():
            entry[title] = sections[title]
    return config


def on_files(files: Files, config: Any, **kwargs: Any) -> Files:
    """``files`` with each backend's page (its README) and each package's API reference page."""
    for package in BACKENDS:
        folder = package.folder.relative_to(ROOT).as_posix()
        files.append(File.generated(config, package.docs_page, content=f'--8<-- "{folder}/README.md"\n'))
    for package in PACKAGES.values():
        files.append(File.generated(config, _api_page(package.import_name), content=_api_markdown(package)))
    return files


def _api_markdown(package: Any) -> str:
    """The API reference page of ``package``: its docstring, then each name of its ``__all__`` under a
    heading of its own with its signature (so the page's table of contents lists them), then the modules its
    ``api-modules`` name (those the READMEs send readers to). A name that mkdocstrings cannot find fails the
    strict build, so nothing public is left out; ``docs/check_reference.py`` checks the built pages."""
    name = package.import_name
    parts = [
        f"# `{name}`\n\n::: {name}\n    options:\n      members: false\n      show_root_heading: false\n"
    ]
    init = package.folder / "src" / name / "__init__.py"
    for public in public_names(stub if (stub := init.with_suffix(".pyi")).exists() else init):
        parts.append(f"::: {name}.{public}\n{ENTRY.format(level=2, full_path='false')}")
    modules = package.get("api-modules")
    if modules:
        parts.append("## Modules\n")
        parts += [f"::: {module}\n{ENTRY.format(level=3, full_path='true')}" for module in modules]
    return "\n".join(parts)


#: The options of one entry of an API page: a heading (in the page's table of contents) and the signature.
ENTRY = """    options:
      show_root_heading: true
      show_root_toc_entry: true
      show_root_full_path: {full_path}
      heading_level: {level}
"""


def public_names(init: Path) -> list[str]:
    """The names of the ``__all__`` of the module ``init`` (or of its stub, where the names are written:
    ``vecrl.lazy.attach_stub``), read without importing it."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            return [element.value for element in node.value.elts]  # type: ignore[attr-defined]
    return []


def _api_page(import_name: str) -> str:
    return f"api/{import_name.removeprefix('vecrl_')}.md"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """``markdown`` with each ``--8<-- "path"`` line replaced by the file, its links made the site's."""

    def include(match: re.Match[str]) -> str:
        path = match.group(1)
        text = (ROOT / path).read_text(encoding="utf-8")
        return LINK.sub(lambda link: _site_link(link, posixpath.dirname(path), page.file.src_uri), text)

    return INCLUDE.sub(include, markdown)


def _site_link(link: re.Match[str], folder: str, page_uri: str) -> str:
    """The link ``link`` of a README in ``folder``, as the page ``page_uri`` must write it."""
    target, anchor = link.group(1), link.group(2) or ""
    if not target or "://" in target or target.startswith("mailto:"):
        return link.group(0)
    path = posixpath.normpath(posixpath.join(folder, target)).removesuffix("/README.md")
    path = "." if path == "README.md" else path
    shown = PAGES.get(path)
    if shown is None:
        return f"]({SOURCE}{path}{anchor})"
    return f"]({posixpath.relpath(shown, posixpath.dirname(page_uri) or '.')}{anchor})"
