"""vecrl-evaluate's place in the house: it stands on vecrl-policy and vecrl-core, and the old paths under
vecrl_policy give its objects for one release, with a warning naming the new path."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize(
    ("old", "moved", "new", "message"),
    [
        (
            "from vecrl_policy import evaluate",
            "evaluate",
            "vecrl_evaluate.evaluate",
            "vecrl_policy.evaluate moved to vecrl_evaluate.evaluate",
        ),
        (
            "from vecrl_policy.options import EvaluateOptions",
            "EvaluateOptions",
            "vecrl_evaluate.options.EvaluateOptions",
            "vecrl_policy.options moved to vecrl_evaluate.options",
        ),
        (
            "import vecrl_policy.measures",
            "vecrl_policy.measures",
            "vecrl_evaluate.measures",
            "vecrl_policy.measures moved to vecrl_evaluate.measures",
        ),
    ],
)
def test_the_old_paths_give_the_moved_objects_and_warn_with_the_new_one(old, moved, new, message):
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    {old}\n"
        "import vecrl_evaluate, vecrl_evaluate.options, vecrl_evaluate.measures\n"
        "print([str(w.message) for w in caught if w.category is DeprecationWarning])\n"
        "print([w.filename for w in caught if w.category is DeprecationWarning])\n"
        f"print({moved} is {new})\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    messages, filenames, same = result.stdout.splitlines()
    assert message in messages and "comes with the package vecrl-evaluate" in messages
    assert filenames == "['<string>']"  # the warning points at the user's import line
    assert same == "True"
