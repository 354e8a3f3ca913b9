"""The env protocol of vecrl's jax engine: what a jax backend gives, and all that the engine (``JaxVectorEnv``)
and evaluate's fused rollout read of an env.

A ``JaxEnv`` is a batch of functional envs as three pure jax functions, traced inside jitted programs and
never called on their own, and one sub-env's action space:

- ``reset(keys)``: a batch of fresh states, state ``i`` started from the PRNG key ``keys[i]`` alone (so
  that a sub-env's start depends on its own key wherever in the batch it is);
- ``step(state, action)``: the batch stepped with ``action`` (one row per state: float32 for a Box, int32
  for a Discrete), without autoreset (the engine restarts ended episodes itself);
- ``outcome(state)``: an ``Outcome``, what a state shows: the observation, the reward of the step that led
  to it, and whether its episode terminated or was truncated (a time limit).

Any batch size works (the engine resets more states at once than it steps, for its pool of fresh states).

An env that lets parameters vary per sub-env (``vecrl.params``: MuJoCo model fields, gymnax's ``EnvParams``)
gives two more members: ``default_params``, a dict of name -> numpy array of one sub-env's shape, and
``with_params(state, params)``, the batch of states made to step with ``params`` (every declared name, each
with the batch first) from then on; the state carries them, so a fresh state from ``reset`` has the defaults.
The engine calls it where a sub-env's params are set and where it restarts from a fresh state, inside its
jitted functions: params are data, and setting them compiles nothing.
An env that can draw itself gives ``render(states)``: the RGB frames (arrays of shape (height, width, 3)) of a
list of single-sub-env states (each a state of the batch with its first axis taken away, as
``JaxVectorEnv.render_snapshot`` keeps them), drawn on the host, outside any jitted program
(``vecrl.rendering``: what ``vecrl record`` calls).
An env object is hashable: it keys the caches of compiled programs (``JaxVectorEnv`` makes one env object per
configuration and shares it, so identity will do).

Examples:
    >>> import jax, jax.numpy as jnp
    >>> from gymnasium.spaces import Box
    >>> class Drift:  # the position drifts by the action; the episode ends past 1.0
    ...     action_space = Box(-1.0, 1.0, (1,))
    ...     def reset(self, keys):
    ...         return jax.vmap(lambda key: jax.random.uniform(key, (1,), maxval=0.1))(keys)
    ...     def step(self, state, action):
    ...         return state + action
    ...     def outcome(self, state):
    ...         over = state[:, 0] > 1.0
    ...         return Outcome(state, -jnp.abs(state[:, 0]), over, jnp.zeros_like(over))
    >>> env = Drift()
    >>> state = env.step(env.reset(jax.random.split(jax.random.PRNGKey(0), 3)), jnp.ones((3, 1)))
    >>> env.outcome(state).terminated.tolist()
    [True, True, True]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np


class Outcome(NamedTuple):
    """What a batch of states shows: ``observation`` (float arrays with the batch first, or a dict of them),
    ``reward`` (float32, one per state), ``terminated`` and ``truncated`` (bool, one per state; a time limit
    is a truncation, and an episode that ends on both counts as terminated), and ``info``, more per-state
    float arrays the host env hands out in its step's info (brax's metrics)."""

    observation: Any
    reward: Any
    terminated: Any
    truncated: Any
    info: Mapping[str, Any] = {}


class JaxEnv(Protocol):
    """A batch of functional jax envs (this module says what each function does)."""

    @property
    def action_space(self) -> Any:
        """One sub-env's action space: a gymnasium ``Box`` (stepped as float32) or ``Discrete`` (as int32)."""

    def reset(self, keys: Any) -> Any: ...

    def step(self, state: Any, action: Any) -> Any: ...

    def outcome(self, state: Any) -> Outcome: ...


def default_params(env: Any) -> dict[str, np.ndarray]:
    """The parameters ``env`` (a ``JaxEnv``) lets vary per sub-env, with their defaults: {} where it declares
    none (``default_params`` and ``with_params`` are optional members).

    Examples:
        >>> default_params(object())
        {}
    """
    return dict(getattr(env, "default_params", None) or {})


def check_outcome(outcome: Outcome, num_envs: int, owner: str) -> None:
    """A ``BackendCheckError`` naming what is wrong where the ``outcome`` of ``num_envs`` states (arrays or
    their shapes, from ``jax.eval_shape``) breaks the contract above: a reward, terminated or truncated that
    is not one value per state, or an info entry without the batch first.

    Examples:
        >>> import jax
        >>> shape = lambda *s: jax.ShapeDtypeStruct(s, np.float32)
        >>> check_outcome(Outcome(shape(4, 3), shape(4, 1), shape(4), shape(4)), 4, "MyEnv")
        Traceback (most recent call last):
        ...
        vecrl.errors.BackendCheckError: MyEnv's outcome(states).reward has shape (4, 1) for 4 states; expected (4,): one value per state.
    """
    from vecrl.errors import BackendCheckError

    for name in ("reward", "terminated", "truncated"):
        got = tuple(getattr(outcome, name).shape)
        if got != (num_envs,):
            raise BackendCheckError(
                f"{owner}'s outcome(states).{name} has shape {got} for {num_envs} states; expected"
                f" ({num_envs},): one value per state."
            )
    for name, value in dict(outcome.info).items():
        if tuple(value.shape[:1]) != (num_envs,):
            raise BackendCheckError(
                f"{owner}'s outcome(states).info[{name!r}] has shape {tuple(value.shape)} for {num_envs} states;"
                " expected the states first."
            )
