"""vecrl-pettingzoo: the ``pettingzoo`` backend of vecrl, PettingZoo's parallel envs as a vector env of seats
(a row per agent of each world).

PettingZoo is imported when an env is made, not by ``import vecrl_pettingzoo``.
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
