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


def test_no_module_imports_a_package_that_stands_on_this_one():
    """The dependency arrows run down: vecrl-ray and vecrl-evotorch stand on vecrl-policy, so vecrl-policy
    names neither (executors are found by name: vecrl_policy.executor.executor_named)."""
    import ast
    from pathlib import Path

    import vecrl_policy

    above = {"vecrl_ray", "vecrl_evotorch", "vecrl_sb3"}
    imported = set()
    for path in Path(vecrl_policy.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add((path.name, node.module.split(".")[0]))
            elif isinstance(node, ast.Import):
                imported.update((path.name, alias.name.split(".")[0]) for alias in node.names)
    assert [(name, module) for name, module in sorted(imported) if module in above] == []
