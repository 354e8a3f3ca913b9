"""vecrl's sessions.

    nox -s tests        every package and every test, newest dependencies (README's test command); a package
                        whose dependencies would hold the others back (vecrl-gymnax) is tested in its own row
    nox -s isolation    each install combination alone in a fresh env (what a user who installs one backend gets):
                        a README's rows install by its install line and run its code blocks (tests/readme_blocks.py)
    nox -s plugins      wheels (no editable installs) of our packages and a third-party plugin, discovered
    nox -s torchrl      TorchRL's GymWrapper on vecrl envs (torchrl is a test-only dependency, kept apart)
    nox -s ray          vecrl-ray installed alone (with the gym backend) in a fresh env: its tests on a local
                        Ray and a 3-node cluster on this machine, listening on 127.0.0.1 only
    nox -s evotorch     vecrl-evotorch installed alone (with the gym backend) in a fresh env: its tests
    nox -s matrix       the tests against the oldest/API-break/newest dependency rows
    nox -s lint         ruff
    nox -s typecheck    mypy, and deptry on every package: each declares what it imports
    nox -s demo         the main job (README's other command)
    nox -s bench        everything in bench/ (off by default: slow, and numbers want a quiet machine)

CI (.ci/run) runs tests in one lane and, beside them, lint, typecheck, docs, gymnasium 0.29's matrix row
(gym029-numpy1: the oldest API we promise), and the sessions tagged `ci`: plugins and the isolation rows of
the packages that declare `ci = true` (core, core+gym, core+policy, core+policy+evaluate, core+jax,
core+jax+gymnax+policy+evaluate) with the top README's (core+gym+policy+evaluate), within CI's 60 minutes on 2 cores. Run the rest (the other dependency rows, the brax, sb3, envpool and playground isolation rows, `all`, TorchRL, vecrl-ray and vecrl-evotorch
alone) with `nox -s isolation matrix torchrl ray evotorch` (about 40 more minutes on a quick day).
Every install goes through constraints.txt, which pins torch to the CPU wheel this machine ships.
The packages, and what each adds to these sessions (extras, rows), are read from their own folders
(tests/vecrl_packages.py): adding a package touches nothing here.
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "tests"))
import readme_blocks  # noqa: E402  (the README parsing the block runner uses: one home)
from vecrl_packages import PACKAGES, isolation_rows  # noqa: E402  (what each package's folder declares: one home)

CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
PYTHON = "3.11"  # the only Python with the pinned torch wheel on this machine
TORCH = "torch==2.13.0"

# The packages the sessions below name; the others are only ever read from PACKAGES.
CORE, GYM, JAX, BRAX = "vecrl-core", "vecrl-gym", "vecrl-jax", "vecrl-brax"
POLICY, EVALUATE, EVOTORCH = "vecrl-policy", "vecrl-evaluate", "vecrl-evotorch"
ALL_PACKAGES = tuple(PACKAGES)
# What `tests` and `bench` install together: every package but those whose dependencies would hold the others back
# (`tests-session = false`; their tests run in their isolation rows).
TOGETHER = tuple(name for name, package in PACKAGES.items() if package.get("tests-session", True))
# pytest-timeout: every test has a time limit (pyproject.toml's [tool.pytest.ini_options]), so a hang fails fast
# pytest-xdist: the tests session runs its files in a process per core (conftest.py groups them).
TEST_TOOLS = ("pytest", "pytest-timeout", "pytest-xdist", "hypothesis", "setuptools>=68")
#: pytest-xdist's options: a process per core (4 at most: each holds its own jax compiles and torch), each
#: file's tests in one of them.
# --max-worker-restart=0: a worker that dies ends the run, its test named in the summary; replaced, it left
# its group's tests unscheduled and loadgroup's controller waited for them until CI's time ran out.
IN_PARALLEL = ("--numprocesses=auto", "--maxprocesses=4", "--dist=loadgroup", "--max-worker-restart=0")
# What the tests of each package need beyond its own dependencies.
TEST_EXTRAS = {name: tuple(package.get("test-extras")) for name, package in PACKAGES.items()}
# Read by Ray when it is imported: a Ray that a test or a check starts listens on 127.0.0.1 only (the Ray
# tests' conftest sets it too).
RAY_LOCAL_ONLY = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def jax_cache(session: nox.Session) -> dict[str, str]:
    """jax's persistent compilation cache in the session's folder: a program compiled once (seconds to a
    minute for a physics env on this CPU) is read back by every later test that compiles the same one, in
    this run and in the next."""
    folder = Path(session.virtualenv.location) / "jax-cache"
    return {"JAX_COMPILATION_CACHE_DIR": str(folder), "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0.5"}


nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True


def path_of(package: str) -> str:
    return str(ROOT / "packages" / package)


def install(session: nox.Session, *args: str) -> None:
    session.install(*CONSTRAINTS, *args)


def install_packages(
    session: nox.Session, packages: tuple[str, ...], *extra: str, editable: bool, for_tests: bool = True
) -> None:
    """torch first (from the pinned wheel), then the packages (and, ``for_tests``, what their tests need)
    in one resolve; says first how long that takes, since pip works in silence."""
    session.log(
        f"installing torch and {len(packages)} package(s) with their dependencies: about a minute the first time"
        " (pip's cache makes later installs faster); `nox -v` shows pip's own progress"
    )
    install(session, TORCH)
    targets: list[str] = []
    for package in packages:
        targets += ["-e", path_of(package)] if editable else [path_of(package)]
        if for_tests:
            targets += TEST_EXTRAS[package]
    install(session, *targets, *(TEST_TOOLS if for_tests else ()), *extra)


# vecrl's conformance spec, on the cases each installed backend declares: every session that tests backends runs it.
CONFORMANCE = "tests/test_backend_conformance.py"

# Sessions other than `tests` leave out the tests marked slow (physics envs that take a minute to
# compile): `tests` runs them, and the other sessions check installs and versions, not physics.
NOT_SLOW = ("-m", "not slow")


def test_paths(packages: tuple[str, ...]) -> list[str]:
    return [f"{path_of(p)}/tests" for p in packages]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The packages installed together (all but those declaring ``tests-session = false``), every test: the
    command README.md and CI run."""
    # gymnasium-robotics: the native goal env (PointMaze) of the Dict-observation tests;
    # matplotlib: the example's plot, smoke-tested here; moviepy: gymnasium's RecordVideo writes with it;
    # ribs: pyribs, whose scheduler drives vecrl in examples/pyribs_interop.py, run by the tests;
    # evosax: its PGPE runs vecrl's rollout inside its jitted generation in examples/evosax_rollout.py.
    install_packages(
        session,
        TOGETHER,
        "gymnasium-robotics",
        "matplotlib",
        "moviepy",
        "ribs",
        "evosax==0.3.2",
        editable=True,
    )
    sources = [f"{path_of(p)}/src" for p in TOGETHER]  # the docstring examples run too
    if session.posargs[:1] == [
        "--stress"
    ]:  # `-- --stress [N]`: the tests that race, N times beside busy loops
        stress(session, int(session.posargs[1]) if len(session.posargs) > 1 else 1)
        return
    # words after `--` name what to run instead, in this process (a failed test's id, with `nox -R`: README.md)
    targets = session.posargs or [*IN_PARALLEL, *test_paths(TOGETHER), "tests", *sources]
    with cpu_floor(session):
        session.run(
            "pytest",
            "--doctest-modules",
            "--durations=25",  # the slowest tests, where a slow day's time goes
            *targets,
            env={**RAY_LOCAL_ONLY, **jax_cache(session)},
        )


def stress(session: nox.Session, rounds: int) -> None:
    """The tests marked ``races`` (they send signals or wait for another process) ``rounds`` times in a row,
    with a CPU-bound process per core running beside them, as on a shared machine: a test that waits for a
    time rather than an event fails here. Each round's time and the load are logged."""
    cores = len(os.sched_getaffinity(0))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        for round_number in range(1, rounds + 1):
            start = time.monotonic()
            session.run(
                "pytest",
                "-m",
                "races",
                *IN_PARALLEL,
                *test_paths(TOGETHER),
                "tests",
                env={**RAY_LOCAL_ONLY, **jax_cache(session)},
            )
            session.log(
                f"stress round {round_number}/{rounds} passed in {time.monotonic() - start:.0f} s beside {cores}"
                f" busy processes (load average {os.getloadavg()[0]:.1f})"
            )
    finally:
        for process in busy:
            process.kill()
            process.wait()


@contextlib.contextmanager
def cpu_floor(session: nox.Session) -> Iterator[None]:
    """Log the block's wall time beside its processes' CPU time over this machine's cores: the least wall time
    the tests could take here, however they were spread."""
    start, before = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        yield
    finally:  # (a failed run's time is the one most wanted)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        cores = len(os.sched_getaffinity(0))
        session.log(
            f"pytest took {time.monotonic() - start:.0f} s for {cpu:.0f} CPU-seconds: at least"
            f" {cpu / cores:.0f} s on this machine's {cores} cores"
        )


def isolation_params() -> list[nox.param]:
    """The isolation rows (tests/vecrl_packages.py builds them from the packages' declarations), with the
    rows CI runs tagged ``ci``."""
    return [
        nox.param(row.packages, row.documents, row.tests, id=row.id, tags=["ci"] if row.ci else [])
        for row in isolation_rows()
    ]


def install_and_check(
    session: nox.Session, packages: tuple[str, ...], documents: tuple[str, ...]
) -> tuple[str, ...]:
    """The packages alone (by the first document's own install line, if any), the smoke check with nothing
    else installed (no pytest, which brings packaging along), then the documents' blocks as their reader runs
    them (with their other install lines); the vecrl packages installed then."""
    if not documents:
        install_packages(session, packages, editable=False, for_tests=False)
    else:
        session.log(
            f"installing by {documents[0]}'s install line: about a minute the first time; `nox -v` shows pip"
        )
        install(session, *readme_blocks.install_arguments(ROOT / documents[0])[2:])
    session.run("python", str(ROOT / "tests" / "smoke_check.py"), *packages, env=RAY_LOCAL_ONLY)
    if documents:
        session.run("python", str(ROOT / "tests" / "readme_blocks.py"), *documents)
    every_line = (readme_blocks.packages_installed_by(ROOT / d, every_line=True) for d in documents)
    return tuple(dict.fromkeys([*packages, *(p for line in every_line for p in line)]))


@nox.session(python=PYTHON, reuse_venv=False)
@nox.parametrize(("packages", "documents", "tests"), isolation_params())
def isolation(
    session: nox.Session, packages: tuple[str, ...], documents: tuple[str, ...], tests: bool
) -> None:
    """One install combination alone in a fresh env (non-editable): a README's reader's, or one more: the
    smoke check and the README's blocks, then its tests and what must be absent."""
    installed = install_and_check(session, packages, documents)
    if not tests:
        return
    install(session, *TEST_TOOLS, *(extra for package in packages for extra in TEST_EXTRAS[package]))
    session.run(
        "pytest",
        *NOT_SLOW,
        *session.posargs,
        *test_paths(packages),
        "tests/test_install_isolation.py",
        CONFORMANCE,
        env={"VECRL_ISOLATION": ",".join(installed), **jax_cache(session)},
    )


@nox.session(python=PYTHON)
def torchrl(session: nox.Session) -> None:
    """TorchRL's GymWrapper on gym (classic control, MuJoCo) and brax envs; torchrl is a test-only
    dependency, installed here only."""
    install_packages(session, (CORE, GYM, JAX, BRAX), "torchrl", editable=True)
    session.run("pytest", *session.posargs, "tests/test_torchrl.py")


def alone_with_the_gym_backend(session: nox.Session, readme: str, *examples: str) -> None:
    """A package as its README installs it (with the gym backend its tests evaluate on), non-editable in a
    fresh env: the smoke check, the README's blocks and the examples' commands, then its own tests and what
    must be absent."""
    package = Path(readme).parent.name
    packages = readme_blocks.packages_installed_by(ROOT / readme)
    installed = install_and_check(session, packages, (readme, *examples))
    install(session, *TEST_TOOLS, *TEST_EXTRAS[GYM], "matplotlib")  # matplotlib: the examples' plots
    session.run(
        "pytest",
        *session.posargs,
        *test_paths((package,)),
        "tests/test_install_isolation.py",
        env={"VECRL_ISOLATION": ",".join(installed), **RAY_LOCAL_ONLY},
    )


@nox.session(python=PYTHON, reuse_venv=False)
def ray(session: nox.Session) -> None:
    """vecrl-ray as a Ray user installs it: its tests on a local Ray and a head and two worker nodes started
    with ray.cluster_utils.Cluster (listening on 127.0.0.1 only), and the example."""
    alone_with_the_gym_backend(session, "packages/vecrl-ray/README.md")


@nox.session(python=PYTHON, reuse_venv=False)
def evotorch(session: nox.Session) -> None:
    """vecrl-evotorch as an EvoTorch user installs it: EvoTorch's searchers on VecrlNE."""
    alone_with_the_gym_backend(session, "packages/vecrl-evotorch/README.md")


@nox.session(python=PYTHON, reuse_venv=False, tags=["ci"])
def plugins(session: nox.Session) -> None:
    """Wheels of our packages and of a third-party plugin, installed as a user's machine sees them."""
    wheels = Path(session.create_tmp()) / "wheels"
    fixtures = ROOT / "tests" / "fixtures"
    sources = [path_of(CORE), path_of(GYM), str(fixtures / "vecrl-toy")]
    session.run("python", "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), *sources)
    install(session, TORCH)
    install(session, *sorted(str(w) for w in wheels.glob("*.whl")), *TEST_TOOLS)
    session.run(
        "pytest",
        *session.posargs,
        "tests/test_installed_plugins.py",
        "tests/test_third_party_plugin.py",
        env={"VECRL_WHEELS_INSTALLED": "1"},
    )


# The dependency matrix: explicit rows (oldest, API break, newest), never a cartesian product, each declared by
# the package whose dependency it pins. Every row runs on Python 3.11 with torch from constraints.txt.
MATRIX_ROWS = [
    nox.param(tuple(row["packages"]), tuple(row["pins"]), id=row["id"])
    for package in PACKAGES.values()
    for row in package.get("matrix-rows")
]


@nox.session(python=PYTHON)
@nox.parametrize(("packages", "pins"), MATRIX_ROWS)
def matrix(session: nox.Session, packages: tuple[str, ...], pins: tuple[str, ...]) -> None:
    """The package tests against one row of pinned dependency versions, with the repository's tests that its
    packages declare (``matrix-tests``: gymnasium's version decides their branches)."""
    install_packages(session, packages, *pins, editable=True)
    session.run(
        "python",
        "-c",
        "import gymnasium, numpy; print('gymnasium', gymnasium.__version__, 'numpy', numpy.__version__)",
    )
    version_tests = dict.fromkeys(test for p in packages for test in PACKAGES[p].get("matrix-tests"))
    session.run(
        "pytest",
        *NOT_SLOW,
        *session.posargs,
        *test_paths(packages),
        *version_tests,
        CONFORMANCE,
        env=jax_cache(session),
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole repo."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy on every package's src, then deptry on each package: everything it imports is declared in its own
    pyproject (transitive imports included); each pyproject's [tool.deptry] names the imports that are
    optional by design. One venv for both (deptry reads editable installs as well), holding the packages
    `tests` installs: a package kept apart is checked against those (its own dependencies' imports are
    untyped to mypy here, and deptry reads their names from its pyproject)."""
    install_packages(session, TOGETHER, "mypy", "deptry>=0.25", editable=True)
    session.run("mypy", *[f"{path_of(p)}/src" for p in ALL_PACKAGES])
    for package in ALL_PACKAGES:
        with session.chdir(path_of(package)):
            session.run("deptry", "src")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation site into site/: mkdocs-material, pages made of the READMEs (docs/hooks.py) and
    the API reference that mkdocstrings reads from the docstrings; warnings are errors (strict), and
    docs/check_reference.py fails the session where a public name or a cited one has no entry."""
    # ruff formats the signatures on the API pages
    install(session, "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26", "ruff")
    session.run("mkdocs", "build", "--strict", env={"NO_MKDOCS_2_WARNING": "1"})
    session.run("python", "docs/check_reference.py", "site")  # every public name, with its signature


@nox.session(python=PYTHON, reuse_venv=True)
def demo(session: nox.Session) -> None:
    """The main job: `vecrl evolve` on CartPole-v1 until it is solved, its folder runs/cartpole (state,
    results, plot, champion). Its venv is kept between runs (the packages are installed editable, so it runs
    this tree's code), and pip runs only where something it needs is missing: `-- --resume runs/cartpole`
    (words after `--` replace the command's) starts at once."""
    needed = ("vecrl_evotorch", "vecrl_gym", "matplotlib", "imageio_ffmpeg", "torch")
    if not has_modules(session, needed):
        install_packages(session, (CORE, GYM, POLICY, EVALUATE, EVOTORCH), editable=True, for_tests=False)
    demo = [
        "gym::CartPole-v1",
        "--until",
        "475",
        "--generations",
        "200",
        "--out",
        "runs/cartpole",
        "--overwrite",
    ]
    # (after Ctrl-C the command says how to go on: in the nox form, as no vecrl is on the user's PATH)
    resume = {"VECRL_EVOLVE_COMMAND": f"python3.11 -m nox -s {session.name} --"}
    session.run("vecrl", "evolve", *(session.posargs or demo), env=resume)


def has_modules(session: nox.Session, modules: tuple[str, ...]) -> bool:
    """Whether the session's venv can import every one of ``modules`` (found without importing them)."""
    code = f"import importlib.util as u; print(all(u.find_spec(m) for m in {modules!r}))"
    return str(session.run("python", "-c", code, silent=True)).strip().endswith("True")


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Every benchmark in bench/, with EvoTorch 0.6.1 installed for the comparisons (benchmark only)."""
    install_packages(session, TOGETHER, "evotorch==0.6.1", editable=True)
    for script in sorted((ROOT / "bench").glob("*.py")):
        session.run("python", str(script), *session.posargs)
