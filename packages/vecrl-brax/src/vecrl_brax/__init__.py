"""vecrl-brax: the ``brax`` backend of vecrl, brax environments batched, jitted and handed to torch.

It is a thin adapter onto vecrl's jax engine (vecrl-jax). jax and brax are imported on first use of
``VectorEnvFromBrax`` or ``make_brax_env``, not by ``import vecrl_brax``.
"""

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
