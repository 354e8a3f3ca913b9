"""A run's folder: what a long evolution keeps so that Ctrl-C, a crash or SIGKILL loses at most one generation.

``RunFolder.create(path, settings)`` starts a run (refusing to replace another run's files unless told to),
``RunFolder.open(path)`` finds one to resume; either holds the folder (``run.lock``) until ``release`` or
the process ends, so a second process cannot write into a run in progress. Each generation, ``save_state``
writes the state (anything
picklable: a searcher, random generator states, histories) beside its final name and renames it over it, so
an interruption, even during the write, leaves the previous state whole; ``write_results`` rewrites the
results table (CSV, one row per generation) the same way, from the histories the state holds, so the table
never runs ahead of the state. ``save_plot`` draws the returns per generation. ``contradictions`` says which
settings of a resumed run a new call contradicts.

Examples:
    >>> import tempfile
    >>> folder = RunFolder.create(tempfile.mkdtemp() + "/run", {"env": "gym::CartPole-v1", "popsize": 16})
    >>> folder.save_state({"generation": 1, "history": {"mean": [9.5]}})
    >>> RunFolder.open(folder.path).load_state()["generation"], folder.settings()["popsize"]
    (1, 16)
    >>> contradictions({"popsize": 16, "seed": 0}, {"popsize": 32, "seed": 0})
    ['--popsize 32 (the run was started with 16)']
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import pickle
import sys
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vecrl.errors import VecrlError

SETTINGS = "settings.json"
STATE = "state.pickle"
RESULTS = "results.csv"
PLOT = "plot.png"
LOCK = "run.lock"
#: What marks a folder as a run's: a new run refuses to write over these without ``overwrite``. A caller that
#: writes more names its files (glob patterns) as ``also``: an overwrite removes those too, and nothing else.
RUN_FILES = (SETTINGS, STATE, RESULTS, PLOT)


class RunError(VecrlError, ValueError):
    """A run's folder cannot be used as asked; the message says why and what to do, in one line."""


class RunFolder:
    """The folder of one run (see the module): its settings, state, results table and plot."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._release: weakref.finalize | None = (
            None  # closes the lock file, while this object holds the folder
        )

    @classmethod
    def create(
        cls,
        path: str | os.PathLike[str],
        settings: Mapping[str, Any],
        *,
        overwrite: bool = False,
        also: Sequence[str] = (),
    ) -> RunFolder:
        """A new run in ``path`` (made if missing, then held), its ``settings`` written; a ``RunError`` before
        anything is written where ``check_new`` refuses ``path``, another process holds it, or it cannot be
        written. With ``overwrite``, an earlier run's files there (``RUN_FILES`` and ``also``) are removed
        first, and the folders they leave empty."""
        folder = cls(path)
        existing = cls.check_new(path, overwrite=overwrite, also=also)
        try:
            folder.path.mkdir(parents=True, exist_ok=True)
            folder.hold()
            for name in existing:
                (folder.path / name).unlink()
                for parent in (folder.path / name).parents:
                    if parent == folder.path or any(parent.iterdir()):
                        break
                    parent.rmdir()
            _write_atomically(folder.path / SETTINGS, json.dumps(dict(settings), indent=2).encode())
        except OSError as error:
            raise RunError(
                f"cannot write the run's files in {str(folder.path)!r}: {error.strerror or error}. Give --out a"
                " folder you can write to."
            ) from error
        return folder

    @staticmethod
    def check_new(
        path: str | os.PathLike[str], *, overwrite: bool = False, also: Sequence[str] = ()
    ) -> list[str]:
        """The run files already in ``path`` (``RUN_FILES`` and the patterns ``also``, for ``overwrite`` to
        replace); a ``RunError`` where ``path`` is a file, lies under one, cannot be written (a file is made
        and removed in the nearest folder there is: permissions alone do not say, for root, on /proc), or holds
        a run's files and ``overwrite`` is False. Leaves nothing behind.

        Examples:
            >>> RunFolder.check_new("/dev/null/run")
            Traceback (most recent call last):
            ...
            vecrl_evotorch.runs.RunError: '/dev/null' is a file, not a folder: give --out a folder for the run's files.
        """
        folder = Path(path)
        for place in (folder, *folder.parents):
            if place.exists():
                if not place.is_dir():
                    raise RunError(
                        f"{str(place)!r} is a file, not a folder: give --out a folder for the run's files."
                    )
                _check_writable(place)
                break
        if (folder / LOCK).is_dir():
            raise RunError(
                f"{str(folder / LOCK)!r} is a folder, where a run keeps its lock file: remove it, or give --out"
                " another folder."
            )
        existing = sorted(
            {
                str(found.relative_to(folder))
                for pattern in (*RUN_FILES, *also)
                for found in folder.glob(pattern)
                if found.is_file()
            }
        )
        if existing and not overwrite:
            raise RunError(
                f"{str(folder)!r} already holds a run ({', '.join(existing)}): go on with it with --resume"
                f" {folder}, give another --out, or pass --overwrite to start again there."
            )
        return existing

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> RunFolder:
        """The run in ``path``, to resume; a ``RunError`` where ``path`` holds no run's settings and state."""
        folder = cls(path)
        if not folder.path.is_dir():
            raise RunError(f"there is no run at {str(folder.path)!r} (no such folder); start one with --out.")
        if not (folder.path / SETTINGS).is_file() or not (folder.path / STATE).is_file():
            what = (
                "no generation was saved yet"
                if (folder.path / SETTINGS).is_file()
                else "it has no settings.json"
            )
            raise RunError(
                f"{str(folder.path)!r} is no run to resume ({what}); start one there with --out {folder.path}"
                " --overwrite."
            )
        folder.settings()  # read now: a damaged file is refused before any work
        folder.hold()
        return folder

    def hold(self) -> None:
        """Hold the folder for this process until ``release`` (or the process ends, however it ends): a
        ``RunError`` naming the holder where another live process holds it. A lock left by a process that
        ended without releasing it (SIGKILL) is taken over, with a line on stderr saying so."""
        if self._release is not None:
            return
        try:
            import fcntl
        except ImportError:  # (Windows: no advisory locks here; the folder is not held)
            return
        path = self.path / LOCK
        while True:
            try:
                descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as error:
                raise RunError(
                    f"cannot write the run's files in {str(self.path)!r}: {error.strerror or error}. Give a"
                    " folder you can write to."
                ) from error
            holder = os.read(descriptor, 64).decode(errors="replace").strip()
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(descriptor)
                if holder == str(os.getpid()):  # held by this process already (another RunFolder of it)
                    return
                raise RunError(
                    f"{str(self.path)!r} is in use by another process (pid {holder or '?'}, {path}): one process"
                    " at a time writes a run; wait for it to end or stop it, then --resume."
                ) from None
            if path.exists() and os.stat(path).st_ino == os.fstat(descriptor).st_ino:
                break
            os.close(descriptor)  # (its holder released it, removing the file, as this one opened it: again)
        if holder and holder != str(os.getpid()):
            print(
                f"note: {path} was left by process {holder}, which has ended: this process holds the run now",
                file=sys.stderr,
            )
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, str(os.getpid()).encode(), 0)
        self._release = weakref.finalize(self, _released, descriptor, path, os.getpid())

    def release(self) -> None:
        """Let another process have the folder (the lock file goes); nothing where it is not held."""
        if self._release is not None:
            self._release()
            self._release = None

    def discard(self) -> None:
        """Undo ``create`` for a run that saved no generation: its settings go, the folder is released and
        removed where that leaves it empty."""
        (self.path / SETTINGS).unlink(missing_ok=True)
        self.release()
        with contextlib.suppress(OSError):  # (not empty: the user's files stay)
            self.path.rmdir()

    def settings(self) -> dict[str, Any]:
        """The settings the run was started with."""
        try:
            settings = json.loads((self.path / SETTINGS).read_text())
        except (OSError, ValueError) as error:
            raise RunError(f"cannot read the run's settings, {self.path / SETTINGS}: {error}") from error
        if not isinstance(settings, dict):
            raise RunError(f"{self.path / SETTINGS} holds no run's settings (a JSON object was expected).")
        return settings

    def save_state(self, state: Mapping[str, Any]) -> None:
        """Write ``state`` so that an interruption at any moment leaves either it or the previous state whole."""
        _write_atomically(self.path / STATE, pickle.dumps(dict(state), protocol=pickle.HIGHEST_PROTOCOL))

    def load_state(self) -> dict[str, Any]:
        """The last state saved (a pickle: open only runs you trust); a ``RunError`` saying why where it cannot
        be read."""
        try:
            with open(self.path / STATE, "rb") as file:
                state = pickle.load(file)
        except Exception as error:  # unpickling a file that is no pickle raises whatever its bytes lead to
            raise RunError(
                f"cannot read the run's state, {self.path / STATE}: {type(error).__name__}: {error}"
            ) from error
        if not isinstance(state, dict):
            raise RunError(f"{self.path / STATE} holds no run's state.")
        return state

    def write_results(self, columns: Mapping[str, Sequence[Any]]) -> Path:
        """Write the results table, one column per entry of ``columns`` (equal lengths, one row per
        generation, numbered from 1), replacing the previous table at once."""
        return self.write_table(RESULTS, columns, "generation")

    def write_table(self, name: str, columns: Mapping[str, Sequence[Any]], index: str) -> Path:
        """Write the CSV table ``name`` in the folder: a column ``index`` numbering the rows from 1, then one
        column per entry of ``columns`` (of equal lengths), replacing the previous table at once."""
        lengths = {len(values) for values in columns.values()}
        if len(lengths) > 1:
            raise ValueError(
                f"the table's columns differ in length: { {k: len(v) for k, v in columns.items()} }"
            )
        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerow([index, *columns])
        for row, values in enumerate(zip(*columns.values(), strict=True), start=1):
            writer.writerow([row, *values])
        _write_atomically(self.path / name, text.getvalue().encode())
        return self.path / name

    def save_plot(
        self, curves: Mapping[str, Sequence[float]], title: str, threshold: float | None = None
    ) -> Path | None:
        """The returns per generation (one line per entry of ``curves``, a dashed line at ``threshold``) as
        ``plot.png``; None, having said why on stderr once, where matplotlib is not installed."""
        return save_plot(curves, self.path / PLOT, title, threshold)


def contradictions(saved: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    """The settings of ``given`` (those a user passed) that differ from the ``saved`` ones, each as the option
    and both values, for a resumed run's one-line refusal."""
    return [
        f"--{key.replace('_', '-')} {_shown(value)} (the run was started with {_shown(saved.get(key))})"
        for key, value in given.items()
        if saved.get(key) != value
    ]


def save_plot(
    curves: Mapping[str, Sequence[float]],
    path: str | os.PathLike[str],
    title: str,
    threshold: float | None = None,
) -> Path | None:
    """Draw ``curves`` (label: return per generation) to the PNG ``path``, with a dashed line at
    ``threshold`` where given; None, saying so on stderr, where matplotlib is not installed."""
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(8.5, 3.5))
    for label, values in curves.items():
        ax.plot(range(1, len(values) + 1), values, label=label)
    if threshold is not None:
        ax.axhline(threshold, color="gray", linestyle="--", linewidth=1, label=f"target ({threshold:g})")
    ax.set_xlabel("generation")
    ax.set_ylabel("episode return")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)  # beside the curves, not on them
    fig.tight_layout()
    return saved_figure(fig, path)


def pyplot() -> Any:
    """matplotlib's pyplot, drawing to files (Agg); None, saying on stderr that no plot is saved, where
    matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        print("note: no plot saved: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def saved_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """``fig`` written to the PNG ``path`` through a file beside it (a reader finds the old plot or the new), and
    closed."""
    import matplotlib.pyplot as plt

    partial = Path(path).with_name(Path(path).name + ".partial.png")
    fig.savefig(partial, dpi=100)
    plt.close(fig)
    os.replace(partial, path)
    return Path(path)


def _released(descriptor: int, path: Path, holder: int) -> None:
    if os.getpid() != holder:  # a forked child ending: the lock is its parent's
        return
    path.unlink(missing_ok=True)  # (before the lock goes: a process that takes it next finds no stale pid)
    os.close(descriptor)


def _shown(value: Any) -> str:
    return "(not given)" if value is None else str(value)


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a file beside it, synced, then renamed over it: a reader (or a
    resumed run) finds the old file or the new one, never a part."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)


def _check_writable(place: Path) -> None:
    """A RunError unless a file can be made in the folder ``place`` (it is removed at once)."""
    try:
        descriptor, probe = tempfile.mkstemp(dir=place, prefix=".vecrl-probe-")
    except OSError as error:
        raise RunError(
            f"cannot write in {str(place)!r} ({error.strerror or error}): give --out a folder you can write to."
        ) from None
    os.close(descriptor)
    os.unlink(probe)
