"""The README's goal example as its reader runs it: SB3's SAC with HerReplayBuffer on a vecrl.GoalEnvWrapper
through SB3VecEnv, no glue, learns (its success rate well above a random policy's); HER's relabelling reaches
the wrapper's GoalEnv compute_reward."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def goal_example() -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.MULTILINE | re.DOTALL)
    (block,) = [block for block in blocks if "HerReplayBuffer" in block]
    return block


def test_the_readme_s_her_example_learns_with_no_glue():
    # the wrapper's compute_reward counts HER's calls: numpy batches of stored steps, relabelled
    counting = (
        "import numpy, vecrl\n"
        "calls = []\n"
        "relabel = vecrl.GoalEnvWrapper.compute_reward\n"
        "def counted(self, achieved, desired, info, *more):\n"
        "    calls.append(type(achieved).__name__ + str(len(achieved)))\n"
        "    return relabel(self, achieved, desired, info, *more)\n"
        "vecrl.GoalEnvWrapper.compute_reward = counted\n"
    )
    report = "\nprint('HER relabelled', sorted(set(calls)), len(calls))\n"
    result = subprocess.run(
        [sys.executable, "-c", counting + goal_example() + report], capture_output=True, text=True
    )
    said = result.stdout.strip().splitlines()
    # SAC's success rate, over 100 episodes of fixed starts and goals, against a random policy's on the same
    rates = re.fullmatch(r"success rate: (\S+) acting at random, (\S+) trained", said[0]) if said else None
    assert rates, result.stdout + result.stderr[-3000:]
    at_random, trained = map(float, rates.groups())
    assert trained >= 0.25 and trained >= 5 * at_random, (at_random, trained)
    assert result.returncode == 0, result.stderr[-3000:]
    assert re.fullmatch(r"HER relabelled \['ndarray\d+'\] \d+", said[1]) and int(said[1].split()[-1]) > 100
