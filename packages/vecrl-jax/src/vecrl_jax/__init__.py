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

from vecrl.lazy import attach_stub

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
