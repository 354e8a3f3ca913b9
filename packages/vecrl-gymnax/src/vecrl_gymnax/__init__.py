"""vecrl-gymnax: the ``gymnax`` backend of vecrl, gymnax's jax envs batched and jitted.

jax and gymnax are imported on first use of ``GymnaxVectorEnv`` or ``make_gymnax_env``, not by
``import vecrl_gymnax``.
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
