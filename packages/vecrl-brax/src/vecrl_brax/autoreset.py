"""The pure jax functions that VectorEnvFromBrax jits: reset, and step with fresh-state autoreset.

A brax env built with ``batch_size=n`` and without brax's own ``auto_reset`` is stepped as is; every
sub-env whose episode ends is then replaced, inside the same jitted call, by a fresh random initial
state (brax's ``AutoResetWrapper`` instead restarts from the first state it cached).

Fresh states come from a pool: one batch of ``n`` initial states made by a single batched reset with a
new key, handed out in order (first come, first served) to the sub-envs that restart, and made anew
only when the restarts of a step would need more than it has left. Each new episode still gets a state
of its own, but the batched reset runs about once per ``n`` restarts instead of at every step where
any sub-env restarts, which would cost about a third of a physics step each time.

With an episode budget, a sub-env that used it up is frozen and reports NaN until ``reset()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from vecrl_brax.packing import Packer


class Carry(NamedTuple):
    """What the jitted step carries from one call to the next.

    ``episodes_left`` counts, per sub-env, the episodes it may still start (its current one included);
    it is only read when an episode budget is set. ``pool`` is a batch of fresh initial states whose
    rows from ``pool_next`` on are still unused.
    """

    state: Any
    key: jax.Array
    episodes_left: jax.Array
    pool: Any
    pool_next: jax.Array


class StepOutput(NamedTuple):
    """What one jitted step reports; ``observation`` is ``carry.state.obs`` unless the budget is spent."""

    observation: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_observation: jax.Array
    episode_ended: jax.Array
    metrics: dict[str, jax.Array]


def cast_like(tree: Any, like: Any) -> Any:
    """``tree`` with every leaf converted to the dtype of the matching leaf of ``like``, as a strong type.

    brax's reset and step can return states that differ in dtype or in jax's "weak type" flag (brax
    0.14's step makes ``done`` weakly typed); a jitted step fed both would compile twice. Both the reset
    and the step here return strongly typed states with the step's dtypes.
    """
    return jax.tree_util.tree_map(lambda x, y: jax.lax.convert_element_type(x, y.dtype), tree, like)


def _select_rows(mask: jax.Array, on_true: Any, on_false: Any) -> Any:
    """Row-wise ``where`` over two pytrees of batched arrays (leaves without the batch axis: ``on_false``)."""
    num_envs = mask.shape[0]

    def select(x: jax.Array, y: jax.Array) -> jax.Array:
        if x.ndim == 0 or x.shape[0] != num_envs:
            return y
        return jnp.where(mask.reshape((num_envs,) + (1,) * (x.ndim - 1)), x, y)

    return jax.tree_util.tree_map(select, on_true, on_false)


def make_reset(
    env: Any, num_envs: int, num_episodes: int | None, step_shape: Any
) -> Callable[[jax.Array], Carry]:
    """The function ``key -> Carry`` that starts a fresh batch of episodes (to be jitted).

    ``step_shape`` is ``jax.eval_shape`` of ``env.step``: the state is cast to the dtypes step returns.
    """

    def reset(key: jax.Array) -> Carry:
        reset_key, carry_key = jax.random.split(key)
        state = cast_like(env.reset(reset_key), step_shape)
        budget = 0 if num_episodes is None else num_episodes
        # the pool starts used up (pool_next == num_envs): the first restart fills it from a fresh key
        return Carry(
            state, carry_key, jnp.full((num_envs,), budget, dtype=jnp.int32), state, jnp.int32(num_envs)
        )

    return reset


def make_step(
    env: Any, num_envs: int, num_episodes: int | None
) -> Callable[[Carry, jax.Array], tuple[Carry, StepOutput]]:
    """The function ``(carry, action) -> (carry, output)``: one step with same-step autoreset (to be jitted)."""

    def step(carry: Carry, action: jax.Array) -> tuple[Carry, StepOutput]:
        stepped = env.step(carry.state, action)
        done = stepped.done.astype(bool)
        truncation = stepped.info.get("truncation") if isinstance(stepped.info, dict) else None
        time_limit = jnp.zeros_like(done) if truncation is None else truncation.astype(bool)
        terminated = done & ~time_limit
        truncated = done & time_limit

        if num_episodes is None:
            active = jnp.ones_like(done)
            episodes_left = carry.episodes_left
            restart = done
        else:
            active = carry.episodes_left > 0
            episodes_left = carry.episodes_left - (done & active).astype(jnp.int32)
            restart = done & active & (episodes_left > 0)
            # a sub-env past its budget stays frozen: stepping a finished physics state only risks NaNs
            stepped = _select_rows(active, stepped, carry.state)

        key, pool_key = jax.random.split(carry.key)
        # the i-th restarting sub-env takes the i-th free row of the pool
        rank = jnp.cumsum(restart.astype(jnp.int32)) - 1
        num_restarts = jnp.sum(restart.astype(jnp.int32))
        pool, pool_next = jax.lax.cond(
            carry.pool_next + num_restarts > num_envs,
            lambda: (cast_like(env.reset(pool_key), carry.pool), jnp.int32(0)),
            lambda: (carry.pool, carry.pool_next),
        )
        rows = jnp.clip(pool_next + rank, 0, num_envs - 1)

        def restart_rows() -> Any:
            fresh = jax.tree_util.tree_map(lambda x: x[rows], pool)
            return cast_like(_select_rows(restart, fresh, stepped), stepped)

        # most steps restart no sub-env: skip the gather and select over the whole state then
        state = jax.lax.cond(jnp.any(restart), restart_rows, lambda: cast_like(stepped, stepped))
        observation, reward = state.obs, stepped.reward
        if num_episodes is not None:
            spent = ~active
            observation = jnp.where(spent[:, None], jnp.nan, observation)
            reward = jnp.where(spent, jnp.nan, reward)
            terminated = terminated | spent
            truncated = truncated | spent
        output = StepOutput(
            observation=observation,
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            final_observation=stepped.obs,
            episode_ended=done & active,
            metrics=dict(stepped.metrics),
        )
        return Carry(state, key, episodes_left, pool, pool_next + num_restarts), output

    return step


class PackedEnv(NamedTuple):
    """reset and step over a packed carry (see ``vecrl_brax.packing``), ready to be jitted."""

    packer: Packer
    reset: Callable[[jax.Array], dict[str, jax.Array]]
    step: Callable[[dict[str, jax.Array], jax.Array], tuple[dict[str, jax.Array], Any]]


def make_packed(env: Any, num_envs: int, num_episodes: int | None, *, pack_outputs: bool) -> PackedEnv:
    """``make_reset`` and ``make_step`` with the carry packed into one flat buffer per dtype (and the
    step's results too, by ``pack_output``, when ``pack_outputs``)."""
    key = jax.random.PRNGKey(0)
    zero_action = jax.ShapeDtypeStruct((num_envs, env.action_size), jnp.float32)
    step_shape = jax.eval_shape(env.step, jax.eval_shape(env.reset, key), zero_action)  # traced once, here
    reset, step = make_reset(env, num_envs, num_episodes, step_shape), make_step(env, num_envs, num_episodes)
    packer = Packer(jax.eval_shape(reset, key))

    def packed_reset(key: jax.Array) -> dict[str, jax.Array]:
        return packer.pack(reset(key))

    def packed_step(packed: dict[str, jax.Array], action: jax.Array) -> tuple[dict[str, jax.Array], Any]:
        carry, output = step(packer.unpack(packed), action)
        return packer.pack(carry), pack_output(output) if pack_outputs else output

    return PackedEnv(packer, packed_reset, packed_step)


def pack_output(output: StepOutput) -> tuple[jax.Array, jax.Array]:
    """The step's results as two flat buffers, so that torch imports two arrays per step instead of ~10.

    ``floats`` is ``[observation | reward | final_observation | each metric (sorted by name)]`` and
    ``flags`` is ``[terminated | truncated | episode_ended]``; ``unpack_output_torch`` splits them again.
    """
    metrics = [jnp.ravel(output.metrics[name]).astype(jnp.float32) for name in sorted(output.metrics)]
    floats = jnp.concatenate(
        [
            jnp.ravel(output.observation),
            output.reward.astype(jnp.float32),
            jnp.ravel(output.final_observation),
            *metrics,
        ]
    )
    flags = jnp.concatenate([output.terminated, output.truncated, output.episode_ended])
    return floats, flags
