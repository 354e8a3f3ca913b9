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

The autoreset mode (``vecrl.autoreset``'s names) picks the step function once, at trace time:
``same_step`` (above), ``next_step`` (the step after an end restarts the sub-env from the pool, ignoring
its action) and ``disabled`` (no restart; ``make_masked_reset`` restarts chosen sub-envs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from vecrl.autoreset import AutoresetModeName
from vecrl_brax.packing import Packer


class Carry(NamedTuple):
    """What the jitted step carries from one call to the next.

    ``episodes_left`` counts, per sub-env, the episodes it may still start (its current one included);
    it is only read when an episode budget is set. ``pool`` is a batch of fresh initial states whose
    rows from ``pool_next`` on are still unused (None without autoreset). ``needs_reset`` marks the
    sub-envs whose episode ended at the previous step (``next_step`` mode only, None otherwise).
    """

    state: Any
    key: jax.Array
    episodes_left: jax.Array
    pool: Any
    pool_next: Any  # a 0-d int32 jax.Array, or None
    needs_reset: Any = None  # a bool jax.Array of shape (num_envs,), or None


class StepOutput(NamedTuple):
    """What one jitted step reports; ``observation`` is ``carry.state.obs`` unless the budget is spent.

    ``final_observation`` and ``episode_ended`` are None except in ``same_step`` mode (the only mode whose
    info carries the finished episode's last observation, as in gymnasium).
    """

    observation: Any
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_observation: Any
    episode_ended: jax.Array | None
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


def _nan_where(mask: jax.Array, tree: Any) -> Any:
    """``tree`` (batched observations) with the rows where ``mask`` is True set to NaN."""
    return jax.tree_util.tree_map(
        lambda x: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), jnp.nan, x), tree
    )


def _split_done(stepped: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(done, terminated, truncated)`` of a stepped brax state: a time-limit end is a truncation."""
    done = stepped.done.astype(bool)
    truncation = stepped.info.get("truncation") if isinstance(stepped.info, dict) else None
    time_limit = jnp.zeros_like(done) if truncation is None else truncation.astype(bool)
    return done, done & ~time_limit, done & time_limit


def make_reset(
    env: Any,
    num_envs: int,
    num_episodes: int | None,
    step_shape: Any,
    mode: AutoresetModeName = "same_step",
) -> Callable[[jax.Array], Carry]:
    """The function ``key -> Carry`` that starts a fresh batch of episodes (to be jitted).

    ``step_shape`` is ``jax.eval_shape`` of ``env.step``: the state is cast to the dtypes step returns.
    """

    def reset(key: jax.Array) -> Carry:
        reset_key, carry_key = jax.random.split(key)
        state = cast_like(env.reset(reset_key), step_shape)
        budget = 0 if num_episodes is None else num_episodes
        episodes_left = jnp.full((num_envs,), budget, dtype=jnp.int32)
        if mode == "disabled":
            return Carry(state, carry_key, episodes_left, None, None)
        # the pool starts used up (pool_next == num_envs): the first restart fills it from a fresh key
        needs_reset = jnp.zeros((num_envs,), dtype=bool) if mode == "next_step" else None
        return Carry(state, carry_key, episodes_left, state, jnp.int32(num_envs), needs_reset)

    return reset


def make_masked_reset(env: Any, num_episodes: int | None) -> Callable[[Carry, jax.Array, jax.Array], Carry]:
    """The function ``(carry, key, mask) -> carry`` restarting only the sub-envs where ``mask`` is True.

    Their new states are the rows of the full ``reset(key)``'s batch (so a seed gives a masked row the
    state a full reset with that seed would give it); their budgets restart; other rows are untouched.
    """

    def masked_reset(carry: Carry, key: jax.Array, mask: jax.Array) -> Carry:
        reset_key, _ = jax.random.split(key)
        fresh = cast_like(env.reset(reset_key), carry.state)
        budget = 0 if num_episodes is None else num_episodes
        return carry._replace(
            state=cast_like(_select_rows(mask, fresh, carry.state), carry.state),
            episodes_left=jnp.where(mask, jnp.int32(budget), carry.episodes_left),
            needs_reset=None if carry.needs_reset is None else carry.needs_reset & ~mask,
        )

    return masked_reset


def make_step(
    env: Any, num_envs: int, num_episodes: int | None, mode: AutoresetModeName = "same_step"
) -> Callable[[Carry, jax.Array], tuple[Carry, StepOutput]]:
    """The function ``(carry, action) -> (carry, output)``: one step with ``mode`` autoreset (to be jitted)."""
    if mode == "next_step":
        return _make_next_step(env, num_envs, num_episodes)
    if mode == "disabled":
        return _make_disabled_step(env)

    def step(carry: Carry, action: jax.Array) -> tuple[Carry, StepOutput]:
        stepped = env.step(carry.state, action)
        done, terminated, truncated = _split_done(stepped)

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

        state, key, pool, pool_next = _restart_from_pool(env, num_envs, carry, restart, stepped)
        observation, reward = state.obs, stepped.reward
        if num_episodes is not None:
            spent = ~active
            observation = _nan_where(spent, observation)
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
        return Carry(state, key, episodes_left, pool, pool_next), output

    return step


def _restart_from_pool(
    env: Any, num_envs: int, carry: Carry, restart: jax.Array, stepped: Any
) -> tuple[Any, jax.Array, Any, jax.Array]:
    """``stepped`` with the rows where ``restart`` is True replaced by fresh states from the pool; also
    the carry's next key, pool and ``pool_next``."""
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
    return state, key, pool, pool_next + num_restarts


def _make_next_step(
    env: Any, num_envs: int, num_episodes: int | None
) -> Callable[[Carry, jax.Array], tuple[Carry, StepOutput]]:
    """One step with next-step autoreset: a sub-env whose episode ended at the previous step restarts from
    a fresh state instead of stepping (its action is ignored) and reports reward 0 and no end."""

    def step(carry: Carry, action: jax.Array) -> tuple[Carry, StepOutput]:
        stepped = env.step(carry.state, action)
        done, terminated, truncated = _split_done(stepped)
        resetting = carry.needs_reset
        ended = done & ~resetting
        episodes_left = carry.episodes_left
        if num_episodes is None:
            restart = resetting
        else:
            # a sub-env whose last episode ended stays frozen: it would start one episode too many
            spent = resetting & (carry.episodes_left == 0)
            restart = resetting & ~spent
            episodes_left = episodes_left - ended.astype(jnp.int32)
            stepped = _select_rows(spent, carry.state, stepped)
        state, key, pool, pool_next = _restart_from_pool(env, num_envs, carry, restart, stepped)
        observation = state.obs
        reward = jnp.where(resetting, jnp.zeros_like(stepped.reward), stepped.reward)
        terminated, truncated = terminated & ended, truncated & ended
        needs_reset = ended
        if num_episodes is not None:
            observation = _nan_where(spent, observation)
            reward = jnp.where(spent, jnp.nan, reward)
            terminated, truncated = terminated | spent, truncated | spent
            needs_reset = ended | spent
        output = StepOutput(observation, reward, terminated, truncated, None, None, dict(state.metrics))
        return Carry(state, key, episodes_left, pool, pool_next, needs_reset), output

    return step


def _make_disabled_step(env: Any) -> Callable[[Carry, jax.Array], tuple[Carry, StepOutput]]:
    """One step without autoreset (finished sub-envs are the caller's to reset)."""

    def step(carry: Carry, action: jax.Array) -> tuple[Carry, StepOutput]:
        stepped = env.step(carry.state, action)
        _, terminated, truncated = _split_done(stepped)
        state = cast_like(stepped, stepped)
        output = StepOutput(
            state.obs, stepped.reward, terminated, truncated, None, None, dict(stepped.metrics)
        )
        return carry._replace(state=state), output

    return step


class PackedEnv(NamedTuple):
    """reset, step and masked_reset over a packed carry (see ``vecrl_brax.packing``), ready to be jitted."""

    packer: Packer
    reset: Callable[[jax.Array], dict[str, jax.Array]]
    step: Callable[[dict[str, jax.Array], jax.Array], tuple[dict[str, jax.Array], Any]]
    masked_reset: Callable[[dict[str, jax.Array], jax.Array, jax.Array], dict[str, jax.Array]]


def make_packed(
    env: Any,
    num_envs: int,
    num_episodes: int | None,
    *,
    pack_outputs: bool,
    mode: AutoresetModeName = "same_step",
) -> PackedEnv:
    """``make_reset``, ``make_step`` and ``make_masked_reset`` with the carry packed into one flat buffer
    per dtype (and the step's results too, by ``pack_output``, when ``pack_outputs``)."""
    key = jax.random.PRNGKey(0)
    zero_action = jax.ShapeDtypeStruct((num_envs, env.action_size), jnp.float32)
    step_shape = jax.eval_shape(env.step, jax.eval_shape(env.reset, key), zero_action)  # traced once, here
    reset = make_reset(env, num_envs, num_episodes, step_shape, mode)
    step = make_step(env, num_envs, num_episodes, mode)
    masked_reset = make_masked_reset(env, num_episodes)
    packer = Packer(jax.eval_shape(reset, key))

    def packed_reset(key: jax.Array) -> dict[str, jax.Array]:
        return packer.pack(reset(key))

    def packed_step(packed: dict[str, jax.Array], action: jax.Array) -> tuple[dict[str, jax.Array], Any]:
        carry, output = step(packer.unpack(packed), action)
        return packer.pack(carry), pack_output(output) if pack_outputs else output

    def packed_masked_reset(
        packed: dict[str, jax.Array], key: jax.Array, mask: jax.Array
    ) -> dict[str, jax.Array]:
        return packer.pack(masked_reset(packer.unpack(packed), key, mask))

    return PackedEnv(packer, packed_reset, packed_step, packed_masked_reset)


def pack_output(output: StepOutput) -> tuple[jax.Array, jax.Array]:
    """The step's results as two flat buffers, so that torch imports two arrays per step instead of ~10.

    ``floats`` is ``[observation | reward | final_observation | each metric (sorted by name)]`` and
    ``flags`` is ``[terminated | truncated | episode_ended]`` (``final_observation`` and
    ``episode_ended`` only in ``same_step`` mode); ``VectorEnvFromBrax`` splits them again.
    """
    metrics = [jnp.ravel(output.metrics[name]).astype(jnp.float32) for name in sorted(output.metrics)]
    final = [] if output.final_observation is None else _raveled(output.final_observation)
    floats = jnp.concatenate(
        [*_raveled(output.observation), output.reward.astype(jnp.float32), *final, *metrics]
    )
    ended = [] if output.episode_ended is None else [output.episode_ended]
    flags = jnp.concatenate([output.terminated, output.truncated, *ended])
    return floats, flags


def _raveled(observation: Any) -> list[jax.Array]:
    """The leaves of a (flat or dict) batched observation, each raveled to 1-D float32."""
    return [jnp.ravel(leaf).astype(jnp.float32) for leaf in jax.tree_util.tree_leaves(observation)]
