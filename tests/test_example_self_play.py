"""``examples/self_play.py`` as a user runs it, on small budgets: self-play with a hall of fame on MPE's push
raises the center's return against the first generation's center, and a team evolved on MPE's spread beats a
team acting at random."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mpe2")
pytest.importorskip("evotorch")

SCRIPT = Path(__file__).parent.parent / "examples" / "self_play.py"


def run(*arguments: str) -> str:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *arguments], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def numbers(line: str) -> list[float]:
    return [float(number) for number in re.findall(r"-?\d+\.\d+", line)]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_self_play_raises_the_return_against_the_first_center():
    out = run("self-play", "--generations", "8")
    start, end = numbers(out.splitlines()[-1])
    assert end > start + 10, out
    assert "hall of fame 8" in out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_an_evolved_team_beats_a_random_team():
    out = run("team", "--generations", "6")
    evolved, random = numbers(out.splitlines()[-1])
    assert evolved > random, out
