"""The vecrl plugin of this package, serving ``brax::`` (jax and brax are imported when an env is made)."""

from __future__ import annotations

from vecrl_jax.plugin import jax_backend, serving

DESCRIPTION = "brax environments, batched and jitted on the jax device, with fresh-state autoreset"
vecrl_backends = serving(jax_backend("brax", DESCRIPTION, check_name="vecrl_brax.names:check_brax_name"))
