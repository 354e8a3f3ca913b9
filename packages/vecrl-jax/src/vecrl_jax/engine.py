"""The pure jax functions that ``JaxVectorEnv`` jits: fresh states, and step with fresh-state autoreset.

A ``JaxEnv`` (``vecrl_jax.protocol``) of ``n`` states is stepped as is; every sub-env whose episode ends is
then replaced, inside the same jitted call, by a fresh random initial state (a new key per episode, where
brax's ``AutoResetWrapper`` restarts from the first state it cached).

Fresh states come from a pool of two halves of ``h`` initial states each (``h = pool_half(n)``: ``n``,
at least ``MIN_POOL_HALF``), handed out in order (first come, first served) to the sub-envs that restart. A step restarts at most ``n <= h`` sub-envs, so it never runs out as long as the
``h`` rows from the pool's cursor on are fresh: when a step's restarts use up a half, it says which
(``StepOutput.refill``), and the caller puts a new batch in that half before the next step, made by the
same compiled function that makes the states of ``reset()``. Each new episode thus gets a state of its
own; a batched reset of 512 states costs about four times one of 64 (much of it is fixed cost at small
batches), so making ``h`` at a time halves its share; and
the env's reset is compiled into that one function only, not into the step. The pool is an argument of the
step, not part of what it carries, so no step copies it.

``reset()`` makes one batch of ``h``: the episodes start from its first ``n`` rows and the rest of it is
the pool's first half (the cursor starts at ``n``). The second half is made when a step could reach it
(``n`` or fewer unused rows left before it; ``refill`` says so), at reset already when ``h <= 2n``
(``second_half_at_reset``), and then after the observation is out, so that jax computes it while the
caller goes on. Some resets are costly (MuJoCo Playground's CheetahRun settles the physics for 200 steps,
7 ms a state on a CPU core): the first call used to make three batches before it returned an observation,
and now makes one.

With an episode budget, a sub-env that used it up is frozen and reports NaN until ``reset()``.

Where the env lets parameters vary (``vecrl_jax.protocol``), the carry holds each sub-env's (``Carry.params``)
and every state restarted from the pool or a fresh batch gets its sub-env's params at once
(``with_params``), so they hold across autoresets; ``set_params`` gives new ones to chosen sub-envs.

The autoreset mode (``vecrl.autoreset``'s names) picks the step function once, at trace time:
``same_step`` (above), ``next_step`` (the step after an end restarts the sub-env from the pool, ignoring
its action) and ``disabled`` (no restart, no pool; ``make_masked_reset`` restarts chosen sub-envs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from vecrl.autoreset import AutoresetModeName
from vecrl.episodes import spent_fill, step_ends
from vecrl_jax.packing import Packed, Packer, take_rows, where_rows
from vecrl_jax.protocol import JaxEnv, Outcome, check_outcome, default_params

#: The smallest half of the pool of fresh states (in states).
MIN_POOL_HALF = 512


def pool_half(num_envs: int) -> int:
    """The number of fresh states per half of the pool: ``num_envs``, at least ``MIN_POOL_HALF``.

    Examples:
        >>> pool_half(64), pool_half(1000)
        (512, 1000)
    """
    return max(num_envs, MIN_POOL_HALF)


def second_half_at_reset(num_envs: int) -> bool:
    """Whether ``reset()`` makes the pool's second half too: only if the first step could reach it, when
    the first half has fewer than ``num_envs`` rows left after the ``num_envs`` the episodes start from.

    Examples:
        >>> second_half_at_reset(64), second_half_at_reset(512)
        (False, True)
    """
    return _second_half_due(pool_half(num_envs), num_envs, num_envs)


def _second_half_due(half_size: int, pool_next: Any, num_envs: int) -> Any:
    """Whether the next step could restart a sub-env from the pool's second half (cursor in the first)."""
    return half_size - pool_next <= num_envs


class Carry(NamedTuple):
    """What the jitted step carries from one call to the next.

    ``state`` is the batched env state, packed (``vecrl_jax.packing``). ``episodes_left`` counts, per
    sub-env, the episodes it may still start (its current one included); it is only read when an episode
    budget is set. ``params`` holds each sub-env's parameters (name -> array with the batch first; None
    where the env declares none). ``pool_next`` is the pool's cursor: the ``h`` rows of the pool from there on
    (cyclically, over its ``2 * h`` rows) are unused (None without autoreset), except while
    ``second_half_pending`` (the pool's second half is not made yet; only the rows up to it are).
    ``needs_reset`` marks the sub-envs whose episode ended at the previous step (``next_step`` mode only,
    None otherwise).
    """

    state: Packed
    episodes_left: jax.Array
    pool_next: Any = None  # a 0-d int32 jax.Array, or None
    needs_reset: Any = None  # a bool jax.Array of shape (num_envs,), or None
    second_half_pending: Any = None  # a 0-d bool jax.Array, or None
    params: Any = None  # a dict of jax.Arrays, or None


class StepOutput(NamedTuple):
    """What one jitted step reports; ``observation`` is that of the carried state unless the budget is spent.

    ``final_observation`` and ``episode_ended`` are None except in ``same_step`` mode (the only mode whose
    info carries the finished episode's last observation, as in gymnasium). ``refill`` (a 0-d int32, None
    without autoreset) is the half of the pool (0 or 1) that must get fresh states before the next step
    (the half this step used up, or the pending second half), or -1.
    """

    observation: Any
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_observation: Any
    episode_ended: jax.Array | None
    metrics: dict[str, jax.Array]
    refill: jax.Array | None = None


def _spent_where(mask: jax.Array, tree: Any) -> Any:
    """``tree`` (batched observations) with the rows where ``mask`` is True what a spent sub-env reports."""
    return jax.tree_util.tree_map(
        lambda x: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), spent_fill(x.dtype), x), tree
    )


def _flags(outcome: Outcome) -> tuple[jax.Array, jax.Array]:
    """``(terminated, truncated)`` of an outcome as bools, an episode that ends on both counts terminated."""
    terminated = outcome.terminated.astype(bool)
    return terminated, outcome.truncated.astype(bool) & ~terminated


#: ``(packed states, params) -> packed states`` with those params (one row each); None without params.
ParamsApplier = Callable[[Packed, Any], Packed] | None


def params_applier(env: JaxEnv, packer: Packer) -> ParamsApplier:
    """The env's ``with_params`` on packed states, or None where it declares no params."""
    if not default_params(env):
        return None

    def apply(packed: Packed, params: Any) -> Packed:
        return packer.pack(env.with_params(packer.unpack(packed), params))  # type: ignore[attr-defined]

    return apply


def make_fresh(env: JaxEnv, packer: Packer, size: int) -> Callable[[Any], Packed]:
    """The function ``seed -> packed states``: ``size`` fresh initial states of ``env``, from keys split
    off ``jax.random.PRNGKey(seed)`` (to be jitted; with ``make_fresh_rows``, the only functions that
    contain the env's reset), packed by ``packer`` (the step's layout: its dtypes, strongly typed). Making
    the key inside saves a jax call (a quarter millisecond) per batch.
    """

    def fresh(seed: Any) -> Packed:
        return packer.pack(env.reset(jax.random.split(jax.random.PRNGKey(seed), size)))

    return fresh


def make_fresh_rows(env: JaxEnv, packer: Packer) -> Callable[[Any], Packed]:
    """The function ``seeds -> packed states`` whose row ``i`` is the fresh state of seed ``seeds[i]``
    alone, started from ``jax.random.PRNGKey(seeds[i])`` (to be jitted), so that a sub-env's start depends
    on its own seed only."""

    def fresh_rows(seeds: Any) -> Packed:
        return packer.pack(env.reset(jax.vmap(jax.random.PRNGKey)(seeds)))

    return fresh_rows


def make_start(
    num_envs: int,
    num_episodes: int | None,
    mode: AutoresetModeName = "same_step",
    defaults: dict[str, np.ndarray] | None = None,
) -> Callable[[Packed], Carry]:
    """The function ``fresh -> Carry`` starting a batch of episodes from the first ``num_envs`` rows of
    ``fresh``, a batch of fresh states that becomes the pool's first half (to be jitted); its sub-envs have
    the env's ``defaults`` params (those of fresh states)."""

    def start(fresh: Packed) -> Carry:
        budget = 0 if num_episodes is None else num_episodes
        episodes_left = jnp.full((num_envs,), budget, dtype=jnp.int32)
        state = take_rows(fresh, slice(0, num_envs))
        params = None
        if defaults:
            params = {
                name: jnp.broadcast_to(value, (num_envs, *value.shape)) for name, value in defaults.items()
            }
        if mode == "disabled":
            return Carry(state, episodes_left, params=params)
        needs_reset = jnp.zeros((num_envs,), dtype=bool) if mode == "next_step" else None
        pending = jnp.bool_(not second_half_at_reset(num_envs))
        return Carry(state, episodes_left, jnp.int32(num_envs), needs_reset, pending, params)

    return start


def make_masked_reset(
    num_episodes: int | None, apply_params: ParamsApplier = None
) -> Callable[[Carry, Packed, jax.Array], Carry]:
    """The function ``(carry, fresh, mask) -> carry`` restarting only the sub-envs where ``mask`` is True.

    Their new states are the first rows of ``fresh``, a batch of fresh states (those a full reset with
    the same seed starts from, so that a seed gives a masked row the state a full reset with that seed
    would give it), with their sub-env's params; their budgets restart; other rows are untouched.
    """

    def masked_reset(carry: Carry, fresh: Packed, mask: jax.Array) -> Carry:
        budget = 0 if num_episodes is None else num_episodes
        fresh = take_rows(fresh, slice(0, mask.shape[0]))
        if apply_params is not None:
            fresh = apply_params(fresh, carry.params)
        return carry._replace(
            state=where_rows(mask, fresh, carry.state),
            episodes_left=jnp.where(mask, jnp.int32(budget), carry.episodes_left),
            needs_reset=None if carry.needs_reset is None else carry.needs_reset & ~mask,
        )

    return masked_reset


def make_set_params(apply_params: ParamsApplier) -> Callable[[Carry, Any, jax.Array], Carry] | None:
    """The function ``(carry, params, mask) -> carry`` giving the sub-envs where ``mask`` is True the
    ``params`` of their row (to be jitted; the other rows keep theirs), None without params."""
    if apply_params is None:
        return None

    def set_params(carry: Carry, params: Any, mask: jax.Array) -> Carry:
        chosen = {
            name: jnp.where(mask.reshape(mask.shape + (1,) * (value.ndim - 1)), params[name], value)
            for name, value in carry.params.items()
        }
        return carry._replace(state=apply_params(carry.state, chosen), params=chosen)

    return set_params


#: A step: ``(carry, action, pool) -> (carry, output)``; ``pool`` (two packed batches of
#: ``pool_half(num_envs)`` fresh states end to end) is None without autoreset.
Step = Callable[[Carry, jax.Array, Packed | None], tuple[Carry, StepOutput]]


def make_step(
    env: JaxEnv,
    packer: Packer,
    num_envs: int,
    num_episodes: int | None,
    mode: AutoresetModeName = "same_step",
    apply_params: ParamsApplier = None,
) -> Step:
    """One step with ``mode`` autoreset, restarting from the pool (to be jitted), by the episode rules of
    ``vecrl.episodes.step_ends``. ``packer`` packs the env's states; ``apply_params`` (``params_applier``'s)
    gives restarted states their sub-env's params."""
    if mode == "disabled":
        return _make_disabled_step(env, packer)
    budget, same_step = num_episodes is not None, mode == "same_step"

    def step(carry: Carry, action: jax.Array, pool: Packed | None) -> tuple[Carry, StepOutput]:
        stepped_rows = packer.pack(env.step(packer.unpack(carry.state), action))
        terminated, truncated = _flags(env.outcome(packer.unpack(stepped_rows)))
        ends = step_ends(mode, budget, carry.episodes_left, carry.needs_reset, terminated, truncated)
        if budget:  # a spent sub-env stays frozen: stepping a finished physics state only risks NaNs
            stepped_rows = where_rows(ends.spent, carry.state, stepped_rows)
        stepped = env.outcome(packer.unpack(stepped_rows))
        state, pool_use = _restart_from_pool(num_envs, carry, pool, ends.restart, stepped_rows, apply_params)
        new = env.outcome(packer.unpack(state))
        observation, reward = new.observation, stepped.reward
        if ends.zero_reward is not None:
            reward = jnp.where(ends.zero_reward, jnp.zeros_like(reward), reward)
        if budget:
            observation = _spent_where(ends.spent, observation)
            reward = jnp.where(ends.spent, spent_fill(reward.dtype), reward)
        output = StepOutput(
            observation=observation,
            reward=reward,
            terminated=ends.terminated,
            truncated=ends.truncated,
            # same_step's info holds the finished episodes' last observations and infos, as gymnasium's
            final_observation=stepped.observation if same_step else None,
            episode_ended=ends.ended if same_step else None,
            metrics=dict(stepped.info if same_step else new.info),
            refill=pool_use.refill,
        )
        carried = Carry(
            state,
            ends.episodes_left,
            pool_use.next,
            ends.needs_reset,
            pool_use.second_half_pending,
            carry.params,
        )
        return carried, output

    return step


class _PoolUse(NamedTuple):
    """The pool's cursor after a step, the half to make before the next step (or -1), and whether the
    second half is still to be made."""

    next: jax.Array
    refill: jax.Array
    second_half_pending: jax.Array


def _restart_from_pool(
    num_envs: int,
    carry: Carry,
    pool: Packed | None,
    restart: jax.Array,
    stepped: Packed,
    apply_params: ParamsApplier,
) -> tuple[Packed, _PoolUse]:
    """``stepped`` (packed states) with the rows where ``restart`` is True replaced by fresh states from
    the pool (with their sub-env's params), and how the pool was used."""
    assert pool is not None  # only the autoreset modes restart
    half_size = pool_half(num_envs)
    # the i-th restarting sub-env takes the i-th unused row of the pool (cyclically)
    rank = jnp.cumsum(restart.astype(jnp.int32)) - 1
    rows = (carry.pool_next + rank) % (2 * half_size)
    pool_next = (carry.pool_next + jnp.sum(restart.astype(jnp.int32))) % (2 * half_size)

    def restarted() -> Packed:
        fresh = take_rows(pool, rows)
        if apply_params is not None:
            fresh = apply_params(fresh, carry.params)
        return where_rows(restart, fresh, stepped)

    # most steps restart no sub-env: skip the gather and select then
    state = jax.lax.cond(jnp.any(restart), restarted, lambda: stepped)
    half, new_half = carry.pool_next // half_size, pool_next // half_size
    # while the second half is pending the cursor stays in the first: it is made before a step could reach it
    due = carry.second_half_pending & _second_half_due(half_size, pool_next, num_envs)
    refill = jnp.where(half != new_half, half, jnp.where(due, 1, -1)).astype(jnp.int32)
    return state, _PoolUse(pool_next, refill, carry.second_half_pending & ~due)


def _make_disabled_step(env: JaxEnv, packer: Packer) -> Step:
    """One step without autoreset (finished sub-envs are the caller's to reset; the pool is unused)."""

    def step(carry: Carry, action: jax.Array, pool: Packed | None) -> tuple[Carry, StepOutput]:
        state = packer.pack(env.step(packer.unpack(carry.state), action))
        new = env.outcome(packer.unpack(state))  # the step's dtypes, strongly typed
        terminated, truncated = _flags(new)
        output = StepOutput(new.observation, new.reward, terminated, truncated, None, None, dict(new.info))
        return carry._replace(state=state), output

    return step


class _Traced(NamedTuple):
    """An env whose reset and step are jitted (each traced once, then served from jax's cache)."""

    env: JaxEnv
    reset: Callable[[Any], Any]
    step: Callable[[Any, Any], Any]

    @property
    def action_space(self) -> Any:
        return self.env.action_space

    def outcome(self, state: Any) -> Outcome:
        return self.env.outcome(state)

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        return default_params(self.env)

    def with_params(self, state: Any, params: Any) -> Any:
        return self.env.with_params(state, params)  # type: ignore[attr-defined]


class PackedEnv(NamedTuple):
    """The functions JaxVectorEnv jits, over carries whose states are packed by ``packer``, and packed
    batches of fresh states (``vecrl_jax.packing``):

    - ``fresh(seed)``: a batch of fresh initial states, ``pool_half(num_envs)`` with autoreset (with
      ``fresh_rows``, the only functions with the env's reset in them);
    - ``fresh_rows(seeds)``: ``num_envs`` fresh states, row ``i`` from ``seeds[i]`` alone;
    - ``start(fresh)``: a carry starting episodes from the first ``num_envs`` of them;
    - ``pool(a, b)``: a pool of two such batches; ``refill(pool, fresh, half)`` puts ``fresh`` in its
      ``half`` (0 or 1);
    - ``step(carry, action, pool)``: one step (the pool is read, not carried);
    - ``masked_reset(carry, fresh, mask)``: restarts the masked rows from the first rows of ``fresh``;
    - ``set_params(carry, params, mask)``: the masked rows' params (None where the env declares none);
    - ``observe(carry)``: the observation and metrics of the state in a carry;

    and ``step_args``, the shapes and dtypes of step's arguments (to compile it before it is first called).
    """

    packer: Packer  # of the env's states (num_envs rows of the step's shapes and dtypes)
    fresh: Callable[[Any], Packed]
    fresh_rows: Callable[[Any], Packed]
    start: Callable[[Packed], Carry]
    pool: Callable[[Packed, Packed], Packed]
    refill: Callable[[Packed, Packed, int], Packed]
    step: Callable[[Carry, jax.Array, Packed | None], tuple[Carry, Any]]
    masked_reset: Callable[[Carry, Packed, Any], Carry]
    set_params: Callable[[Carry, Any, Any], Carry] | None
    observe: Callable[[Carry], tuple[Any, dict[str, jax.Array]]]
    step_args: tuple[Any, jax.ShapeDtypeStruct, Any]  # (carry, action, pool or None)


def make_packed(
    env: JaxEnv,
    num_envs: int,
    num_episodes: int | None,
    *,
    action_spec: jax.ShapeDtypeStruct,
    pack_outputs: bool,
    mode: AutoresetModeName = "same_step",
) -> PackedEnv:
    """The functions of ``PackedEnv`` for ``num_envs`` sub-envs of ``env``, with the step's results packed
    into two buffers by ``pack_output`` when ``pack_outputs``; ``action_spec`` is the shape and dtype of a
    step's batched actions."""
    fresh_size = num_envs if mode == "disabled" else pool_half(num_envs)
    # Jitted, the env's reset and step are traced once each (seconds for an MJX env), for their shapes
    # here: fresh and step below call them and reuse those traces from jax's cache.
    env = _Traced(env, jax.jit(env.reset), jax.jit(env.step))
    state_shape = jax.eval_shape(env.reset, jax.random.split(jax.random.PRNGKey(0), num_envs))
    # states are packed in the step's dtypes (strongly typed), which the step is then fed
    packer = Packer(jax.eval_shape(env.step, state_shape, action_spec))
    check_outcome(jax.eval_shape(env.outcome, state_shape), num_envs, type(env.env).__name__)
    start = make_start(num_envs, num_episodes, mode, default_params(env))
    apply_params = params_applier(env, packer)
    step = make_step(env, packer, num_envs, num_episodes, mode, apply_params)

    def pool(a: Packed, b: Packed) -> Packed:
        return {name: jnp.concatenate([a[name], b[name]]) for name in packer.dtypes}

    def refill(pool: Packed, fresh: Packed, half: int) -> Packed:
        return {
            name: jax.lax.dynamic_update_slice_in_dim(pool[name], fresh[name], half * fresh_size, 0)
            for name in packer.dtypes
        }

    def packed_step(carry: Carry, action: jax.Array, pool: Packed | None) -> tuple[Carry, Any]:
        carry, output = step(carry, action, pool)
        return carry, pack_output(output) if pack_outputs else output

    def observe(carry: Carry) -> tuple[Any, dict[str, jax.Array]]:
        outcome = env.outcome(packer.unpack(carry.state))
        return outcome.observation, dict(outcome.info)

    carry_shape = jax.eval_shape(start, packer.shapes(fresh_size))
    pool_shape = None if mode == "disabled" else packer.shapes(2 * fresh_size)
    return PackedEnv(
        packer,
        make_fresh(env, packer, fresh_size),
        make_fresh_rows(env, packer),
        start,
        pool,
        refill,
        packed_step,
        make_masked_reset(num_episodes, apply_params),
        make_set_params(apply_params),
        observe,
        (carry_shape, action_spec, pool_shape),
    )


def pack_output(output: StepOutput) -> tuple[jax.Array, jax.Array]:
    """The step's results as two flat buffers, so that torch imports two arrays per step instead of ~10.

    ``floats`` is ``[observation | reward | final_observation | each metric (sorted by name)]`` and
    ``flags`` is ``[terminated | truncated | episode_ended | refill half 0 | refill half 1]``
    (``final_observation`` and ``episode_ended`` only in ``same_step`` mode, the last two, one element
    each, only with autoreset); ``JaxVectorEnv`` splits them again.
    """
    metrics = [jnp.ravel(output.metrics[name]).astype(jnp.float32) for name in sorted(output.metrics)]
    final = [] if output.final_observation is None else _raveled(output.final_observation)
    floats = jnp.concatenate(
        [*_raveled(output.observation), output.reward.astype(jnp.float32), *final, *metrics]
    )
    ended = [] if output.episode_ended is None else [output.episode_ended]
    refill = [] if output.refill is None else [output.refill.reshape(1) == 0, output.refill.reshape(1) == 1]
    flags = jnp.concatenate([output.terminated, output.truncated, *ended, *refill])
    return floats, flags


def _raveled(observation: Any) -> list[jax.Array]:
    """The leaves of a (flat or dict) batched observation, each raveled to 1-D float32."""
    return [jnp.ravel(leaf).astype(jnp.float32) for leaf in jax.tree_util.tree_leaves(observation)]
