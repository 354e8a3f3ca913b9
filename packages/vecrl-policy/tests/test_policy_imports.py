"""vecrl_policy needs no environment package and never imports JAX or brax."""

import subprocess
import sys


def test_importing_and_using_the_package_leaves_jax_brax_and_env_backends_unimported():
    code = (
        "import sys, torch, vecrl_policy\n"
        "p = vecrl_policy.Policy('LSTM(3, 2)')\n"
        "p.set_parameters(torch.zeros(4, p.parameter_length))\n"
        "p(torch.zeros(4, 3))\n"
        "print(sorted(m for m in ('jax', 'brax', 'vecrl_gym', 'vecrl_brax', 'mujoco') if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
