"""mkdocs hook: the site's pages are made of the repository's READMEs, written once.

A line ``--8<-- "path"`` in a page is replaced by that file, with its relative links rewritten for the
site: a link to a README or a package's folder goes to the page that shows it, a link to any other file
of the repository to that file in the repository.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: Where a file of the repository is shown (the Source URL of the packages' pyproject.toml).
SOURCE = "https://github.com/vecrl/vecrl/blob/main/"
#: The page that shows each README (by its folder).
PAGES = {
    ".": "index.md",
    "packages/vecrl-core": "core.md",
    "packages/vecrl-gym": "backends/gym.md",
    "packages/vecrl-brax": "backends/brax.md",
    "packages/vecrl-envpool": "backends/envpool.md",
    "packages/vecrl-playground": "backends/playground.md",
    "packages/vecrl-policy": "neuroevolution.md",
    "packages/vecrl-evotorch": "neuroevolution.md",
    "packages/vecrl-ray": "neuroevolution.md",
    "packages/vecrl-sb3": "sb3.md",
}
INCLUDE = re.compile(r'^--8<-- "([^"]+)"$', re.MULTILINE)
LINK = re.compile(r"\]\(([^)#\s]*)(#[^)\s]*)?\)")


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
