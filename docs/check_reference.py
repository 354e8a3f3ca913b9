"""The docs test of the API reference, run by ``nox -s docs`` on the site it built: every public name has its
entry, with its signature where it is called; every ``vecrl...`` name the READMEs and pages cite has an entry
(a package's name, a module the reference shows, or a member of one); no Sphinx role is left as text; the
entry points' docstrings have their Parameters, Returns and Raises sections (``ENTRY_POINTS``).

Example::

    $ python docs/check_reference.py site
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
import griffe  # noqa: E402  (mkdocstrings' reader of the sources: what each public name is)
from hooks import PACKAGES, _api_page, public_names  # noqa: E402  (the pages' own lists)

#: The public entry points a reader calls first: each docstring has Args (every parameter), Returns (for a
#: function that returns something) and Raises sections, rendered as the page's Parameters, Returns, Raises.
ENTRY_POINTS = (
    "vecrl.make_vector_env",
    "vecrl.GoalEnvWrapper",
    "vecrl.testing.run_conformance",
    "vecrl_evaluate.evaluate",
    "vecrl_evaluate.EvaluateOptions",
    "vecrl_policy.Policy",
    "vecrl_evotorch.VecrlNE",
    "vecrl_sb3.SB3VecEnv",
)
#: Entry-point groups, cited as dotted names but not Python objects.
ENTRY_POINT_GROUPS = {"vecrl.commands", "vecrl.executors"}
SOURCES = [str(folder) for folder in ROOT.glob("packages/*/src")]
CITED = re.compile(r"`((?:vecrl|vecrl_\w+)(?:\.\w+)+)")
HEADING = re.compile(r'<div class="doc doc-object doc-(\w+)">\s*<h\d id="([\w.]+)"')
SPHINX_ROLE = re.compile(r":(?:mod|class|func|meth|attr|exc|data|obj):`")


def problems(site: Path) -> list[str]:
    """What the built ``site`` lacks, one line each."""
    found: list[str] = []
    pages = {}
    for package in PACKAGES.values():
        page = site / _api_page(package.import_name).removesuffix(".md") / "index.html"
        html = page.read_text(encoding="utf-8")
        pages[package.import_name] = html
        init = package.folder / "src" / package.import_name / "__init__.py"
        stub = init.with_suffix(".pyi")
        names = [f"{package.import_name}.{n}" for n in public_names(stub if stub.exists() else init)]
        kinds = {anchor: kind for kind, anchor in HEADING.findall(html)}
        module = griffe.load(package.import_name, search_paths=[str(package.folder / "src"), *SOURCES])
        for name in [*names, *package.get("api-modules")]:
            if name not in kinds:
                found.append(f"{page}: no entry (heading) for {name}")
            elif _called(module, name) and not _signed(html, name):
                found.append(f"{page}: {name} has no signature")
        found += [f"{page}: a Sphinx role shown as text: {m.group(0)}" for m in SPHINX_ROLE.finditer(html)]
    anchors = {anchor for html in pages.values() for anchor in re.findall(r'id="([\w.]+)"', html)}
    documents = [ROOT / "README.md", *ROOT.glob("packages/*/README.md"), *ROOT.glob("docs/*.md")]
    for document in documents:
        for cited in sorted(set(CITED.findall(document.read_text(encoding="utf-8")))):
            if cited not in anchors and cited not in ENTRY_POINT_GROUPS:
                found.append(
                    f"{document.relative_to(ROOT)} cites {cited}, which the API reference has no entry for"
                )
    return found


def entry_point_problems() -> list[str]:
    """What the docstrings of ``ENTRY_POINTS`` lack: an Args section naming every parameter, a Returns section
    where a function returns something, a Raises section."""
    found = []
    for name in ENTRY_POINTS:
        package, _, member = name.partition(".")
        module = griffe.load(package, search_paths=SOURCES)
        target = module[member]
        target = target.final_target if target.is_alias else target
        sections = {
            section.kind.value: section.value
            for section in (target.docstring.parse("google") if target.docstring else [])
        }
        documented = {parameter.name.lstrip("*") for parameter in sections.get("parameters", [])}
        given = [parameter.name for parameter in target.parameters if parameter.name not in ("self", "cls")]
        missing = [parameter for parameter in given if parameter not in documented]
        if "parameters" not in sections or missing:
            found.append(f"{name}: its docstring's Args section lacks {', '.join(missing) or 'everything'}")
        returns = target.is_function and str(target.returns) not in ("None", "")
        if returns and "returns" not in sections:
            found.append(f"{name}: its docstring has no Returns section")
        if "raises" not in sections:
            found.append(f"{name}: its docstring has no Raises section")
    return found


def _called(module: griffe.Module, name: str) -> bool:
    """Whether ``name`` is a function, or a class that takes arguments of its own (its ``__init__``, or a
    dataclass's fields): what a reader calls, and needs the signature of."""
    target = module[name.partition(".")[2]] if "." in name else module
    target = target.final_target if target.is_alias else target
    if target.is_function:
        return True
    return target.is_class and ("__init__" in target.members or "dataclass" in target.labels)


def _signed(html: str, anchor: str) -> bool:
    """Whether the entry headed ``anchor`` shows a signature before its contents."""
    start = html.index(f'id="{anchor}"')
    return "doc-signature" in html[start : html.index("doc-contents", start)]


if __name__ == "__main__":
    missing = problems(Path(sys.argv[1])) + entry_point_problems()
    print("\n".join(missing) or "the API reference has every public name, with its signature")
    sys.exit(1 if missing else 0)
