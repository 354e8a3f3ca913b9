"""The vecrl plugin of this package, serving ``gymnax::`` (jax and gymnax are imported when an env is made).

Examples:
    >>> [backend.prefix for backend in vecrl_backends()]
    ['gymnax']
"""

from __future__ import annotations

from vecrl_jax.plugin import jax_backend, serving

DESCRIPTION = "gymnax environments (classic control, MinAtar, bsuite), batched and jitted like brax's"
vecrl_backends = serving(
    jax_backend("gymnax", DESCRIPTION, check_name="vecrl_gymnax.names:check_gymnax_name")
)
