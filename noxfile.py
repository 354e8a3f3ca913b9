"""vecrl's sessions: `nox -s tests` is the test command CI runs; `nox -s demo` runs the main job.

Every install goes through constraints.txt, which pins torch to the CPU wheel this machine ships.
"""

from __future__ import annotations

from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
PYTHON = "3.11"  # the only Python with the pinned torch wheel on this machine

CORE = "packages/vecrl-core"
GYM = "packages/vecrl-gym"
BRAX = "packages/vecrl-brax"
POLICY = "packages/vecrl-policy"
ALL_PACKAGES = (CORE, GYM, BRAX, POLICY)
TEST_TOOLS = ("pytest", "hypothesis", "setuptools>=68")

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


def install_packages(session: nox.Session, *packages: str, editable: bool = True) -> None:
    install(session, "torch==2.13.0")
    args: list[str] = []
    for package in packages:
        args += ["-e", package] if editable else [package]
    install(session, *args)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Every package installed together, every test (the command README.md and CI run)."""
    install_packages(session, *ALL_PACKAGES)
    install(session, *TEST_TOOLS, "gymnasium[classic-control,mujoco]")
    session.run("pytest", *session.posargs, *[f"{p}/tests" for p in ALL_PACKAGES], "tests")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: a short batched CartPole rollout printed as torch tensors."""
    install_packages(session, CORE, GYM, POLICY)
    session.run("python", "examples/rollout_cartpole.py", *session.posargs)
