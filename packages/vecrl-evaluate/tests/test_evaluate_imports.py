"""vecrl-evaluate's place in the house: it stands on vecrl-policy and vecrl-core, and the old paths under
vecrl_policy give its objects for one release, with a warning naming the new path."""

import importlib.util
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


def test_the_default_sub_env_count_comes_from_the_backend():
    """A jax engine (vecrl.Backend(whole_population=True)) runs every row of a population at once; a host engine
    refills at most 256 sub-envs; a cap given (VecGymNE's max_num_envs) holds on both."""
    from vecrl_evaluate.options import default_num_envs

    assert default_num_envs(1000, env_name="gym::CartPole-v1") == 256
    assert default_num_envs(100, env_name="gym::CartPole-v1") == 100
    if importlib.util.find_spec("vecrl_brax") is not None:
        assert default_num_envs(1000, env_name="brax::ant") == 1000
        assert default_num_envs(1000, 64, env_name="brax::ant") == 64
