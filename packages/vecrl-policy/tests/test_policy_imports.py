"""vecrl_policy needs no environment package, never imports JAX or brax, and nothing of the engine that stands
on it (vecrl-evaluate) or above."""

import subprocess
import sys


def test_importing_and_using_the_package_leaves_jax_brax_env_backends_and_the_engine_unimported():
    code = (
        "import sys, torch, vecrl_policy\n"
        "p = vecrl_policy.Policy('LSTM(3, 2)')\n"
        "p.set_parameters(torch.zeros(4, p.parameter_length))\n"
        "p(torch.zeros(4, 3))\n"
        "heavy = ('jax', 'brax', 'vecrl_gym', 'vecrl_brax', 'mujoco')\n"
        "above = ('vecrl_evaluate', 'vecrl_evotorch', 'vecrl_ray')\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.startswith(above)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
