"""``vecrl evolve`` on a jax engine compiles one program for its population and keeps it (the center is scored by
it too): the compile is said, with its duration, once."""

from __future__ import annotations

import csv

import pytest

from vecrl.cli import main

pytest.importorskip("vecrl_brax")


@pytest.mark.slow
def test_ten_generations_on_brax_compile_one_program_said_once(tmp_path, capsys):
    from vecrl_evaluate import fused

    fused.PROGRAMS.clear()
    out = tmp_path / "run"
    assert main(["evolve", "brax::inverted_pendulum", "--generations", "10", "--out", str(out)]) == 0
    said = capsys.readouterr()
    announced = said.err.count("vecrl: compiling the rollout of 64 rows as one jax program")
    assert announced == 1 and said.err.count("vecrl: compiled in ") == 1, said.err
    assert len(fused.PROGRAMS) == 1  # the population's, which scored the center too
    with (out / "results.csv").open() as file:
        assert [int(row["generation"]) for row in csv.DictReader(file)] == list(range(1, 11))
