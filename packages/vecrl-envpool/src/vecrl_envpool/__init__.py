"""vecrl-envpool: the ``envpool`` backend of vecrl, envpool's C++ environments with vecrl's episode rules.

envpool is imported on first use of ``EnvpoolVectorEnv`` or ``make_envpool_env``, not by
``import vecrl_envpool``.
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
