"""The code blocks of a README, and the commands of an example's docstring, run as their reader runs them:
after the document's install line, in a venv made by that line and nothing else (`nox -s isolation`,
`ray` and `evotorch` make it, then run this).

A document's install line is its first ``python3.11 -m pip install -c constraints.txt ...`` line. After
it, in the document's order: every Python block runs in a fresh interpreter (no block leans on an
earlier one); in shell blocks and docstrings the ``vecrl ...`` lines and the ``python examples/...``
lines run (those with ``[options]`` show a syntax, not a command), as do later install lines (what a
block needs beyond the first, e.g. gymnasium-robotics), from the root of the repository as the documents
say. The caller made the venv by the first document's install line; the later documents' install lines
run here.

    python tests/readme_blocks.py packages/vecrl-gym/README.md
    python tests/readme_blocks.py packages/vecrl-evotorch/README.md examples/evolve_cartpole.py
"""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READMES = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
EXAMPLES = sorted((ROOT / "examples").glob("evolve_*.py"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
INSTALL = "python3.11 -m pip install -c constraints.txt "
PACKAGE = re.compile(r"^packages/(vecrl-[a-z0-9]+)(\[[\w,-]+\])?$")  # (extras such as [classic-control])


@dataclass(frozen=True)
class Command:
    """One thing a README tells its reader to run: ``argv``, from ``root`` (the repository) or not."""

    name: str
    argv: list[str]
    text: str
    from_root: bool = False


def install_lines(readme: Path) -> list[list[str]]:
    """What each of the README's install lines hands to ``pip install``: ``[["-c", "constraints.txt", ...]]``."""
    lines = [
        shlex.split(line, comments=True)[4:]
        for line in text_of(readme).splitlines()
        if line.lstrip().startswith(INSTALL)
    ]
    if not lines:
        raise ValueError(f"{readme} has no install line (a line starting with {INSTALL!r})")
    return lines


def install_arguments(readme: Path) -> list[str]:
    """What the README's install line (its first) hands to ``pip install``."""
    return install_lines(readme)[0]


def packages_installed_by(readme: Path, *, every_line: bool = False) -> tuple[str, ...]:
    """The vecrl distributions the README's install line installs, e.g. ``("vecrl-core", "vecrl-gym")``;
    ``every_line``: with those its later install lines add."""
    arguments = [a for line in install_lines(readme)[: None if every_line else 1] for a in line]
    return tuple(dict.fromkeys(match[1] for argument in arguments if (match := PACKAGE.match(argument))))


def text_of(document: Path) -> str:
    """A README's text, or an example's docstring."""
    if document.suffix == ".py":
        return ast.get_docstring(ast.parse(document.read_text())) or ""
    return document.read_text()


def sections(document: Path) -> list[tuple[str, str, str]]:
    """``(name, language, code)`` of each code block of a README; an example's docstring is one shell block."""
    name = str(document.relative_to(ROOT))
    if document.suffix == ".py":
        return [(name, "bash", text_of(document))]
    found = FENCE.finditer(document.read_text())
    return [(f"{name}#{number}", *match.groups()) for number, match in enumerate(found, start=1)]


def commands(document: Path, *, venv_made_by_it: bool = True) -> list[Command]:
    """What runs after the document's install line (all of them, unless ``venv_made_by_it``), in order."""
    vecrl = str(Path(sys.executable).parent / "vecrl")
    install_seen = not venv_made_by_it
    found = []
    for name, language, code in sections(document):
        if language == "python":
            found.append(Command(name, [sys.executable, "-c", code], code))
        elif language == "bash":
            for line in map(str.strip, code.splitlines()):
                if line.startswith("vecrl "):
                    found.append(Command(name, [vecrl, *shlex.split(line, comments=True)[1:]], line))
                elif line.startswith("python examples/") and "[" not in line:
                    script, *arguments = shlex.split(line, comments=True)[1:]
                    found.append(Command(name, [sys.executable, str(ROOT / script), *arguments], line))
                elif line.startswith(INSTALL):
                    if install_seen:  # the first is the caller's: it made this venv
                        pip = [
                            sys.executable,
                            "-m",
                            "pip",
                            "install",
                            "--quiet",
                            *shlex.split(line, comments=True)[4:],
                        ]
                        found.append(Command(name, pip, line, from_root=True))
                    install_seen = True
    return found


def environment(scratch: Path) -> dict[str, str]:
    """The reader's environment, with what keeps a run on this machine quiet and contained."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # a Ray a block starts listens on 127.0.0.1 only
        # one OpenMP thread: beside other work, torch's intra-op threads wait on each other (the SB3
        # block's PPO took 870 s at load 10 with the default threads, 9.6 s with one)
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        "SB3_LOGDIR": str(scratch / "sb3"),  # stable-baselines3 otherwise leaves a log folder in /tmp
    }


def editable_installs() -> list[str]:
    """The distributions installed in this venv from a working tree (``pip install -e``)."""
    return [
        dist.metadata["Name"]
        for dist in importlib.metadata.distributions()
        if '"editable": true' in (dist.read_text("direct_url.json") or "")
    ]


def run(documents: list[Path]) -> bool:
    """Run every command of the documents, in order, saying how long each took; whether all of them passed.
    The venv was made by the first one's install line."""
    passed = True
    everything = [c for i, d in enumerate(documents) for c in commands(d, venv_made_by_it=i == 0)]
    if any(command.from_root for command in everything) and (editable := editable_installs()):
        sys.exit(
            f"readme_blocks.py: this venv has editable installs ({', '.join(editable)}), which the documents'"
            " install lines would replace; run it in a venv made for it (nox -s isolation does)"
        )
    with tempfile.TemporaryDirectory() as scratch:
        for command in everything:
            start = time.perf_counter()
            result = subprocess.run(
                command.argv,
                cwd=ROOT if command.from_root else scratch,
                env=environment(Path(scratch)),
                capture_output=True,
                text=True,
                timeout=600,
            )
            ok = result.returncode == 0 and "Traceback" not in result.stderr
            seconds = time.perf_counter() - start
            print(f"{'ok' if ok else 'FAILED'}  {command.name}  {seconds:.1f} s", flush=True)
            if not ok:
                print(f"{command.text}\n--- stderr:\n{result.stderr[-3000:]}", flush=True)
            passed &= ok
    return passed


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(0 if run([Path(document).resolve() for document in sys.argv[1:]]) else 1)
