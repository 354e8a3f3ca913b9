"""vecrl_evotorch: EvoTorch's searchers on vecrl's engines, through the ``VecrlNE`` problem, and the
``vecrl evolve`` and ``vecrl record`` commands.

Its names are imported on first use (EvoTorch and torch with them), so that the ``vecrl`` command, which
loads this package's subcommands, answers at once.

Examples:
    >>> from vecrl_evotorch import VecrlNE
    >>> problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)")
    >>> problem.solution_length
    10
"""

import os

from vecrl.lazy import attach_stub

# MuJoCo picks its GL backend once, when it is imported, and EvoTorch imports it (through brax) where it is
# installed: without a display, draw through EGL (videos of runs), unless the user chose a backend
if "DISPLAY" not in os.environ:
    os.environ.setdefault("MUJOCO_GL", "egl")

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
