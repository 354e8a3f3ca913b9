"""Every README's code blocks and every example's docstring commands run as their reader runs them:
`readme_blocks.py` runs them in a venv made by the document's own install line (the nox sessions named
here make it). These tests check that each document has that line and such a session, and that the docs
site shows no block that runs nowhere."""

import re

from readme_blocks import EXAMPLES, READMES, ROOT, commands, install_arguments, packages_installed_by
from vecrl_packages import PACKAGES, isolation_rows

NOXFILE = (ROOT / "noxfile.py").read_text()


def test_every_readme_and_example_has_an_install_line_and_commands_to_run_after_it():
    for readme in [*READMES, *EXAMPLES]:
        assert install_arguments(readme)[:2] == ["-c", "constraints.txt"], readme
        assert "vecrl-core" in packages_installed_by(readme), readme
        assert commands(readme), f"{readme} has no block to run"


def test_every_readme_and_example_is_run_by_a_nox_session_made_by_its_install_line():
    # the isolation rows (from the packages' declarations), or a session of the noxfile naming the document
    rows = {document: row for row in isolation_rows() for document in row.documents}
    for readme in [*READMES, *EXAMPLES]:
        path = readme.relative_to(ROOT).as_posix()
        assert path in rows or f'"{path}"' in NOXFILE, f"no nox session runs the blocks of {readme}"
    for row in {id(row): row for row in rows.values()}.values():
        assert packages_installed_by(ROOT / row.documents[0]) == row.packages, row


def test_an_install_line_after_the_first_runs_from_the_repository_root():
    gym = ROOT / "packages" / "vecrl-gym" / "README.md"
    later = [command for command in commands(gym) if "pip" in command.argv]
    assert [command.text.split()[-1] for command in later] == [
        '"packages/vecrl-gym[mujoco]"',
        "gymnasium-robotics",
    ]
    assert all(command.from_root for command in later)


def test_the_docs_pages_are_made_of_these_readmes_so_their_blocks_run_there():
    # a page's code blocks are those of the READMEs it includes (docs/hooks.py): any block written in a
    # page itself would run nowhere
    # the backends' pages are made by docs/hooks.py, of their READMEs alone
    included = {
        f"{package.folder.relative_to(ROOT).as_posix()}/README.md"
        for package in PACKAGES.values()
        if package.prefixes
    }
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        assert "```" not in text, f"{page} has a code block of its own; put it in a README it includes"
        included.update(re.findall(r'^--8<-- "([^"]+)"$', text, re.MULTILINE))
    assert included == {str(readme.relative_to(ROOT)) for readme in READMES}
