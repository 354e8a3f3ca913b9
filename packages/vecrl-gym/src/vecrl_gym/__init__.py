"""vecrl-gym: the ``gym`` backend of vecrl, gymnasium environments batched (same-step autoreset by default).

gymnasium and torch are imported on first use of these names, not by ``import vecrl_gym`` (nor by listing
the backends).
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
