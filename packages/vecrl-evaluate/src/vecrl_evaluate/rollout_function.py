"""vecrl's rollout as a pure jax function, for a searcher that compiles its whole generation itself (evosax,
EvoJAX, QDax): ``rollout_function(env, policy, **options)`` returns ``f(parameters, key, state=None) ->
(result, state)``, which jits, runs inside ``lax.scan`` and under ``jax.vmap``.

``f`` runs the loop of ``evaluate``'s fused program (``vecrl_evaluate.fused``: the same start, step, refill
and bookkeeping functions, so every rule is the one ``evaluate`` follows: autoreset, budgets, several
episodes, refills when rows exceed the env's sub-envs, shaping, action noise, common random numbers,
measures, env parameters per row) from the first step to the last, without returning to the host.

- ``parameters``: a ``(rows, policy.parameter_length)`` float32 jax array, one policy per row.
- ``key``: a jax PRNG key, from which the rows' seeds are drawn (``key_row_seeds``), or the rows' seeds
  themselves, an integer array of shape ``(rows,)``: ``vecrl_evaluate.randomness.row_seeds(seed, rows)``
  gives the seeds of ``evaluate(..., seed=seed)``, and with them ``f``'s results equal ``evaluate``'s fused
  results bit for bit.
- ``state``: what carries over between generations: the observation statistics (``ObsStatistics``) where
  ``obs_norm`` is asked for (None: ``rollout.initial_state``), else None. The call normalizes with the
  statistics it is given and returns them with what it saw added, as ``evaluate(obs_norm=...)`` does (in
  float32 on the device: a later generation's normalization can differ from ``ObsNorm``'s float64 one in
  the last bits).

Examples:
    >>> import jax, vecrl  # doctest: +SKIP
    >>> env = vecrl.make_vector_env("gymnax::Pendulum-v1", num_envs=64)  # doctest: +SKIP
    >>> rollout = rollout_function(env, Policy("Linear(3, 16) >> Tanh() >> Linear(16, 1)"))  # doctest: +SKIP
    >>> result, _ = jax.jit(rollout)(parameters, jax.random.key(0))  # doctest: +SKIP
    >>> result.total_return.shape  # doctest: +SKIP
    (64,)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import torch

from vecrl_evaluate.fused import (
    Inputs,
    _loop,
    _Settings,
    _start,
    fused_episodes,
    local_devices,
    program_options,
)
from vecrl_evaluate.options import EvaluateOptions
from vecrl_evaluate.plan import checked_plan
from vecrl_evaluate.randomness import SEED_MODULUS
from vecrl_policy.normalization import ObsNorm, mean_and_std
from vecrl_policy.policy import Policy

#: The checks of the loop's predicate ``f`` allows: enough for every row to end.
UNBOUNDED = 2**30


class ObsStatistics(NamedTuple):
    """The observation statistics ``f`` carries between generations: a ``count`` and the ``total`` and
    ``squares`` (sum and sum of squares) of that many flat observations, float32 on the device."""

    count: Any
    total: Any
    squares: Any


class RolloutResult(NamedTuple):
    """Per-row results of ``f``, as jax arrays: the (shaped) ``total_return`` summed over the row's episodes,
    the env's own ``raw_return``, the ``episodes`` finished and ``steps`` taken, each measure's mean over
    the row's episodes (``measures``) and its value per episode (``episode_measures``), and ``non_finite``,
    the steps whose action held NaN or inf (``evaluate`` refuses such rows; here they are counted)."""

    total_return: Any
    raw_return: Any
    episodes: Any
    steps: Any
    measures: dict[str, Any]
    episode_measures: dict[str, Any]
    non_finite: Any

    @property
    def mean_return(self) -> Any:
        """Average return per finished episode, per row."""
        return self.total_return / self.episodes.clip(1, None)


#: evaluate's options that make no sense inside a compiled generation, each with why.
REFUSED = {
    "seed": "f takes the key (or the rows' seeds) at each call: f(parameters, key)",
    "num_workers": "f runs inside the caller's compiled program, on its device",
    "executor": "f runs inside the caller's compiled program, on its device",
    "devices": "f runs on the caller's device; shard the caller's program to split rows over devices",
}


@dataclasses.dataclass(frozen=True, eq=False)  # (hashed by identity: jax.jit keys its cache on it)
class Rollout:
    """``f`` of ``rollout_function``: call it with ``(parameters, key, state=None)``."""

    settings: _Settings
    num_slots: int
    params: Mapping[str, Any] | None
    obs_norm: ObsNorm | None
    initial_state: ObsStatistics | None
    measure_names: tuple[str, ...]
    common_random_numbers: bool

    def __call__(
        self, parameters: Any, key: Any, state: ObsStatistics | None = None
    ) -> tuple[RolloutResult, Any]:
        import jax.numpy as jnp

        rows = parameters.shape[0]
        seeds = key_row_seeds(key, rows)
        if self.common_random_numbers:
            seeds = jnp.broadcast_to(seeds[:1], (rows,))
        mean = std = normalizing = None
        statistics = self.initial_state if state is None else state
        if self.obs_norm is not None and statistics is not None:
            count, total, squares = statistics
            mean, std = mean_and_std(count, total, squares, self.obs_norm.min_variance)
            normalizing = count > 0
        params = None
        if self.params is not None:
            params = {name: jnp.asarray(value) for name, value in self.params.items()}
            wrong = {name: value.shape[0] for name, value in params.items() if value.shape[0] != rows}
            if wrong:
                raise ValueError(
                    f"randomize holds env parameters for {sorted(set(wrong.values()))} rows, but f was given {rows}"
                    " rows of parameters: give one row of env parameters per policy."
                )
        settings = self.settings._replace(width=min(self.num_slots, rows))
        inputs = Inputs(parameters, seeds, mean, std, normalizing, jnp.asarray([rows], jnp.int32), params)
        carry, _ = _loop(settings, _start(settings, inputs), inputs, jnp.int32(UNBOUNDED))
        r = carry.results
        names, num_episodes = self.measure_names, settings.options.num_episodes
        per_episode = {}
        if names:
            table = r.measured.reshape(rows, num_episodes, len(names))
            per_episode = {name: table[:, :, index] for index, name in enumerate(names)}
        finished = r.episodes.clip(1, None)
        result = RolloutResult(
            total_return=r.total,
            raw_return=r.raw if settings.options.shaping.changes_rewards else r.total,
            episodes=r.episodes,
            steps=r.steps,
            measures={name: values.sum(axis=1) / finished for name, values in per_episode.items()},
            episode_measures=per_episode,
            non_finite=r.non_finite,
        )
        if self.obs_norm is None or statistics is None:
            return result, None
        count, total, squares = r.moments.about_zero(mean)
        return result, ObsStatistics(
            statistics.count + count, statistics.total + total, statistics.squares + squares
        )


def key_row_seeds(key: Any, num_rows: int) -> Any:
    """The rows' seeds of ``f`` for ``key``: a jax PRNG key draws them (uniform below 2**31 - 1, as
    ``vecrl_evaluate.randomness`` seeds every backend), an integer array of ``num_rows`` seeds is taken as
    it is (``row_seeds(seed, rows)``: evaluate's for ``seed``)."""
    import jax
    import jax.numpy as jnp

    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.randint(key, (num_rows,), 0, SEED_MODULUS, dtype=jnp.int32).astype(jnp.uint32)
    if key.shape != (num_rows,) or not jnp.issubdtype(key.dtype, jnp.integer):
        raise ValueError(
            f"key must be a jax PRNG key (jax.random.key(0); wrap a raw one with jax.random.wrap_key_data) or the"
            f" rows' seeds (an integer array of shape ({num_rows},)), got {key.dtype} of shape {key.shape}."
        )
    return key.astype(jnp.uint32)


def rollout_function(
    env: Any, policy: Policy, *, options: EvaluateOptions | None = None, **keywords: Any
) -> Rollout:
    """``f(parameters, key, state=None) -> (RolloutResult, state)``: ``env``'s episodes (a jax env, as
    ``evaluate``'s fused path takes) for a population of ``policy``'s rows, as a pure jax function (see the
    module's docstring). ``keywords`` (or ``options``) are ``evaluate``'s options: ``num_episodes``,
    ``obs_norm`` (True, or an ``ObsNorm``: its statistics are the first state, its ``clip`` and ``min_variance``
    apply), shaping, ``action_noise_stdev``, ``common_random_numbers``, ``measures``, ``randomize`` as fixed
    env parameters per row (name -> array, a row each: a sampler draws with numpy on the host, which a
    compiled generation cannot call), ``steps_per_check`` and ``select_restarts``; ``seed``, workers,
    executors and ``devices`` are refused. ``env.num_envs`` slots run the rows (refilled where there are
    more rows).

    A ValueError says why where ``evaluate`` could not run the call fused (a network without jax twins, a
    wrapped env, a host env)."""
    options = EvaluateOptions(**keywords) if options is None else options
    if options.obs_norm is True:
        options = dataclasses.replace(options, obs_norm=ObsNorm())
    for name, why in REFUSED.items():
        if getattr(options, name) is not None:
            raise ValueError(f"rollout_function does not take {name}: {why}.")
    randomize = options.randomize
    if randomize is not None and (callable(randomize) or not isinstance(randomize, Mapping)):
        raise ValueError(
            "rollout_function takes randomize as fixed env parameters per row (name -> array with a row each):"
            " a sampler draws with numpy on the host, which a compiled generation cannot call. Draw the table"
            " once (vecrl.randomize.params_table) or keep the sampler for evaluate()."
        )
    zeros = torch.zeros(1, policy.parameter_length)
    plan = checked_plan(policy, env, zeros, dataclasses.replace(options, randomize=None))
    episodes = fused_episodes(policy, env, zeros, plan.settings)
    if isinstance(episodes, str):
        raise ValueError(f"rollout_function cannot run this env and policy as one jax program: {episodes}")
    obs_norm = plan.obs_norm
    params = None
    if randomize is not None:
        params = _fixed_params(randomize, env, options.num_episodes)
    settings = _Settings(
        episodes,
        policy.layer_specs,  # type: ignore[arg-type]  # (fused_episodes checked it)
        program_options(options.for_rows(), local_devices(None)[:1]),
        None if obs_norm is None else obs_norm.clip,
        obs_norm is not None,
        obs_norm is not None,
        plan.settings.discrete,
        env.num_envs,
        params is not None,
    )
    initial = None
    if obs_norm is not None:
        initial = _statistics_of(obs_norm, math.prod(env.single_observation_space.shape))
    measures = options.checked_measures
    names = () if measures is None else measures.names
    return Rollout(settings, env.num_envs, params, obs_norm, initial, names, options.common_random_numbers)


def _fixed_params(randomize: Mapping[str, Any], env: Any, num_episodes: int) -> dict[str, np.ndarray]:
    """Fixed env parameters per row as the program reads them: each row's for every one of its episodes."""
    from vecrl.randomize import params_table

    defaults = getattr(env.unwrapped, "default_params", None) or {}
    rows = {len(np.asarray(value)) for value in randomize.values()}
    name = type(env.unwrapped).__name__
    return params_table(randomize, defaults, np.zeros(max(rows), np.int64), num_episodes, name)


def _statistics_of(obs_norm: ObsNorm, size: int) -> ObsStatistics:
    """An ObsNorm's statistics as the first state (float32 jax arrays)."""
    import jax.numpy as jnp

    if obs_norm.count:
        total, squares = obs_norm.sum.float().numpy(), obs_norm.sum_of_squares.float().numpy()
    else:
        total = squares = np.zeros(size, np.float32)
    return ObsStatistics(jnp.int32(obs_norm.count), jnp.asarray(total), jnp.asarray(squares))
