"""For every test process, and the subprocesses the tests start:

- torch's intra-op threads are 1 (``OMP_NUM_THREADS``), unless the caller chose: the tests' matmuls are
  tiny, and with a thread per core they wait on each other when another process holds a core (the SB3
  README block took 870 s at load 10, against 9.6 s with one thread). The README blocks run the same way.
- MuJoCo draws through EGL (``MUJOCO_GL``, unless the caller chose), as on a headless machine that records
  videos: MuJoCo picks its GL backend once, when the first test imports it, and GLFW has no display here.
- the Ctrl-C a test sends to a subprocess (a run interrupted, a worker pool stopped) reaches it even when
  the suite itself runs in the background, where the shell starts it with SIGINT ignored, which its
  subprocesses would inherit (they would then never stop).
- stable-baselines3's models write their logs in pytest's temporary folder (``SB3_LOGDIR``), not in a new
  folder of the system's that nothing removes (one for each model trained).

And, when pytest-xdist runs the tests in several processes (``nox -s tests`` does): each file's tests run in
one process (its module fixtures are made once), and every Ray test in the same one, since the Ray tests of
one file find the Ray another file started (``--dist loadgroup``; ``xdist_group`` below).
"""

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MUJOCO_GL", "egl")
signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path)
        group = "ray" if "vecrl-ray" in path.parts else str(path)
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield
