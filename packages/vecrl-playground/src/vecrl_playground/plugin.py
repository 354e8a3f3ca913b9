"""The vecrl plugin of this package, serving ``playground::`` (jax and MuJoCo Playground are imported when an env is made)."""

from __future__ import annotations

from vecrl_jax.plugin import jax_backend, serving

DESCRIPTION = "MuJoCo Playground (MJX) environments, batched and jitted like brax's, fresh-state autoreset"
vecrl_backends = serving(
    jax_backend("playground", DESCRIPTION, check_name="vecrl_playground.names:check_playground_name")
)
