"""vecrl-jax: vecrl's jax engine, on which the jax backends (brax, playground, gymnax) and yours run.

A backend gives its env as a ``JaxEnv`` (``reset(keys)``, ``step(state, action)``, ``outcome(state)`` and
an ``action_space``: ``vecrl_jax.protocol``) and subclasses ``JaxVectorEnv`` with a ``make_env``; the engine
does the rest in one jitted step (autoreset modes, masked resets, episode budgets, seeding, torch views of
the results), and evaluate's fused rollout steps the same ``JaxEnv`` inside its compiled program.
``import vecrl_jax`` imports no env library, and jax only on first use of these names.

Examples:
    >>> import vecrl_jax
    >>> sorted(vecrl_jax.__all__)[:3]
    ['BraxStyleEnv', 'JaxEnv', 'JaxVectorEnv']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vecrl.lazy import lazy_attributes

if TYPE_CHECKING:
    from vecrl_jax.brax_style import BraxStyleEnv
    from vecrl_jax.make import make_jax_vector_env
    from vecrl_jax.protocol import JaxEnv, Outcome
    from vecrl_jax.vector_env import JaxVectorEnv

__version__ = "0.1.0"

__all__ = ["BraxStyleEnv", "JaxEnv", "JaxVectorEnv", "Outcome", "make_jax_vector_env"]

_LAZY = {
    "BraxStyleEnv": "vecrl_jax.brax_style",
    "JaxEnv": "vecrl_jax.protocol",
    "JaxVectorEnv": "vecrl_jax.vector_env",
    "Outcome": "vecrl_jax.protocol",
    "make_jax_vector_env": "vecrl_jax.make",
}


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
