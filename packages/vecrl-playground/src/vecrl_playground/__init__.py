"""vecrl-playground: the ``playground`` backend of vecrl, MuJoCo Playground's MJX envs batched and jitted.

jax and playground are imported on first use of ``PlaygroundVectorEnv`` or ``make_playground_env``, not by
``import vecrl_playground``.
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
