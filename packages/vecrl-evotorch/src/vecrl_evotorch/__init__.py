"""vecrl_evotorch: EvoTorch's searchers on vecrl's engines, through the ``VecrlNE`` problem.

Examples:
    >>> from vecrl_evotorch import VecrlNE
    >>> problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)")
    >>> problem.solution_length
    10
"""

from vecrl_evotorch.problem import ClipActions, VecrlNE

__version__ = "0.1.0"

__all__ = ["ClipActions", "VecrlNE"]
