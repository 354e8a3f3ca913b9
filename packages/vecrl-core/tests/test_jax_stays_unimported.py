import subprocess
import sys
import textwrap


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_and_numpy_torch_round_trip_never_import_jax():
    out = run_python(
        """
        import sys, numpy as np, torch, vecrl
        t = vecrl.convert_to_torch(np.zeros(3))
        vecrl.convert_from_torch(t, "numpy")
        vecrl.array_type(t); vecrl.convert_to_torch_bool(t)
        vecrl.reset_tensors([t], [0])
        print("jax" in sys.modules, "brax" in sys.modules)
        """
    )
    assert out == "False False"
