"""An option of evaluate is one field of ``EvaluateOptions`` (its value, its check and its flag) and the rule
that uses it: this test adds a toy option to a copy of vecrl_evaluate, touching nothing else, and finds it
in ``evaluate``'s options, in ``vecrl evaluate``'s and ``vecrl evolve``'s flags, in a run's settings.json
and in ``VecrlNE``'s keywords."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vecrl_evaluate

FIELD = """
    reward_offset: float = option(
        0.0,
        check=_finite_offset,
        flag=Flag("--reward-offset", "add X to each episode's return", {"type": finite_float, "metavar": "X"}),
    )
"""
CHECK = """

def _finite_offset(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name} must be a number, got {value!r}.")
    return float(value)
"""
RULE = "    total_return = total_return + options.reward_offset * episode_counts  # the toy option's rule\n"


def engine_with_the_toy_option(folder: Path) -> Path:
    """A copy of vecrl_evaluate in ``folder`` with the toy option's field, check and rule; the folder to put
    first on the path."""
    copy = folder / "vecrl_evaluate"
    shutil.copytree(Path(vecrl_evaluate.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for name, anchor, added in (
        (
            "options.py",
            "    shaping: Shaping = field(init=False",
            FIELD.lstrip("\n"),
        ),  # the value (with its flag)
        ("options.py", "\n\n@dataclass(frozen=True)\nclass EvaluateOptions:", CHECK),  # its check
        (
            "evaluation.py",
            "    per_episode = _measures(plan.settings.measures, measured)\n",
            RULE,
        ),  # the rule
    ):
        module = copy / name
        text = module.read_text()
        assert text.count(anchor) == 1, (name, anchor)
        module.write_text(text.replace(anchor, added + anchor))
    return folder


def run(code: str, path: Path, cwd: Path) -> str:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, cwd=cwd, timeout=600
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_new_option_is_a_field_and_its_rule_and_reaches_every_door(tmp_path):
    path = engine_with_the_toy_option(tmp_path / "src")
    said = run(
        """
import torch, vecrl
from vecrl_evaluate import EvaluateOptions, evaluate
from vecrl.cli import main
from vecrl_policy import Policy
import vecrl_evaluate
print("engine:", vecrl_evaluate.__file__)
try:
    EvaluateOptions(reward_offset="a lot")
except ValueError as error:
    print("refused:", error)
env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2)
policy = Policy("Linear(4, 2)")
rows = torch.zeros(3, policy.parameter_length)
plain = evaluate(policy, env, rows, seed=0, num_episodes=2)
offset = evaluate(policy, env, rows, options=EvaluateOptions(seed=0, num_episodes=2, reward_offset=100.0))
print("offset:", (offset.total_return - plain.total_return).tolist())
print("exit", main(["evaluate", "gym::CartPole-v1", "--popsize", "2", "--reward-offset", "1000"]))
""",
        path,
        tmp_path,
    )
    assert f"engine: {path}" in said  # (the copy, not the installed package)
    assert "refused: reward_offset must be a number, got 'a lot'." in said
    assert "offset: [200.0, 200.0, 200.0]" in said  # two episodes a row
    assert "mean return 10" in said and "exit 0" in said  # CartPole's ~10 + 1000


def test_a_new_option_reaches_vecrl_ne_and_vecrl_evolve_s_settings(tmp_path):
    pytest.importorskip("vecrl_evotorch")
    path = engine_with_the_toy_option(tmp_path / "src")
    said = run(
        """
from vecrl.cli import main
from vecrl_evotorch import VecrlNE
from evotorch.algorithms import SNES
problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)", seed=0, reward_offset=1000.0)
searcher = SNES(problem, popsize=4, stdev_init=0.1)
searcher.step()
print("evals at least", float(searcher.population.evals.min()))
print("exit", main(["evolve", "gym::CartPole-v1", "--popsize", "4", "--generations", "1", "--reward-offset",
                    "500", "--out", "run"]))
""",
        path,
        tmp_path,
    )
    assert float(said.split("evals at least ")[1].split()[0]) >= 1000.0
    assert "exit 0" in said
    settings = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert settings["reward_offset"] == 500.0
