"""Every code block of README.md and of each package's README runs on its own, as written.

Python blocks run in a fresh interpreter each (no block leans on an earlier one); in shell blocks the
`vecrl ...` command lines run (install and nox lines are what the nox sessions themselves run).
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
READMES = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
BIN = Path(sys.executable).parent


def blocks():
    for readme in READMES:
        for number, match in enumerate(FENCE.finditer(readme.read_text()), start=1):
            language, code = match.groups()
            name = f"{readme.relative_to(ROOT)}#{number}"
            if language == "python":
                yield pytest.param([sys.executable, "-c", code], code, id=name)
            elif language == "bash":
                for line in code.splitlines():
                    if line.startswith("vecrl "):
                        yield pytest.param([str(BIN / "vecrl"), *shlex.split(line)[1:]], line, id=name)


@pytest.mark.parametrize(("command", "code"), list(blocks()))
def test_the_block_runs_on_its_own(command, code, tmp_path):
    if "brax::" in code:
        pytest.importorskip("vecrl_brax")
    if "playground::" in code:
        pytest.importorskip("vecrl_playground")
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    environment["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # a Ray a block starts listens on 127.0.0.1 only
    # one OpenMP thread: beside other work, torch's intra-op threads wait on each other (the SB3 block's PPO
    # took 870 s at load 10 with the default threads, 9.6 s with one)
    environment["OMP_NUM_THREADS"] = "1"
    result = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{code}\n--- stderr:\n{result.stderr[-3000:]}"
    assert "Traceback" not in result.stderr


def test_every_readme_has_runnable_blocks():
    ids = [param.id for param in blocks()]
    for readme in READMES:
        assert any(i.startswith(str(readme.relative_to(ROOT))) for i in ids), readme


def test_the_docs_pages_are_made_of_these_readmes_so_their_blocks_run_here():
    # a page's code blocks are those of the READMEs it includes (docs/hooks.py): any block written in a
    # page itself would run nowhere
    included = set()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text()
        assert "```" not in text, f"{page} has a code block of its own; put it in a README it includes"
        included.update(re.findall(r'^--8<-- "([^"]+)"$', text, re.MULTILINE))
    assert included == {str(readme.relative_to(ROOT)) for readme in READMES}
