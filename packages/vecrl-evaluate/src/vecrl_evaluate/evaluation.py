"""evaluate: score every row of a parameter batch on its own sub-environment, in one vectorized loop."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from vecrl.checks import listed
from vecrl.randomize import Sampler
from vecrl_evaluate.executor import Evaluation, Executor, split_population
from vecrl_evaluate.fused import compile_seconds
from vecrl_evaluate.matches import (
    MatchTable,
    checked_opponents,
    own_rows,
    seated_parameters,
    seating,
    seats_per_world,
)
from vecrl_evaluate.measures import Measure, Measures
from vecrl_evaluate.options import EvaluateOptions
from vecrl_evaluate.plan import checked_plan
from vecrl_evaluate.runners import InThisProcess, run_part
from vecrl_evaluate.threads import one_torch_thread
from vecrl_policy.normalization import ObsNorm
from vecrl_policy.policy import Policy


@dataclass(frozen=True)
class EvaluationResult:
    """Per-row results of ``evaluate``: ``total_return`` summed over the row's episodes, the number of
    ``episodes`` it finished, the env ``steps`` it took, and with ``measures=``, each measure.

    Examples:
        >>> result.mean_return  # total_return / episodes  # doctest: +SKIP
        >>> result.measures["speed"]  # one value per row  # doctest: +SKIP
    """

    total_return: torch.Tensor
    """Each row's return summed over its episodes (float64; shaped, where evaluate shaped the rewards)."""
    episodes: torch.Tensor
    """The episodes each row finished (int64)."""
    steps: torch.Tensor
    """The env steps each row took, over all its episodes (int64)."""
    path: str = "stepped"
    """How the call ran: ``"fused"`` (one compiled jax program, ``vecrl_evaluate.fused``) or ``"stepped"``."""
    compile_seconds: float = 0.0
    """The seconds this call spent compiling its fused program in this process (0 when a compiled one was
    at hand, as for every call of a configuration after its first), so a rate can leave it out."""
    raw_return: torch.Tensor | None = None
    """Each row's return summed over its episodes, of the env's own rewards: ``total_return`` before
    ``decrease_rewards_by`` and ``alive_bonus_schedule`` (equal to it where nothing shaped the rewards)."""
    measures: dict[str, torch.Tensor] = field(default_factory=dict)
    """Each measure of ``evaluate(measures=...)`` by name: one value per row (float64), the mean of its
    episodes' values (``vecrl_evaluate.measures``)."""
    episode_measures: dict[str, torch.Tensor] = field(default_factory=dict)
    """Each measure's value in each of the row's episodes: ``(rows, num_episodes)`` (float64); with
    ``opponents=``, in each episode of each of its matches."""
    matches: MatchTable | None = None
    """With ``opponents=``: who sat where in each world played, and each seat's mean return
    (``vecrl_evaluate.matches``)."""

    @property
    def mean_return(self) -> torch.Tensor:
        """Average return per finished episode, per row."""
        return self.total_return / self.episodes.clamp(min=1)

    @property
    def mean_raw_return(self) -> torch.Tensor:
        """Average return per finished episode, per row, of the env's own rewards (``raw_return``)."""
        raw = self.total_return if self.raw_return is None else self.raw_return
        return raw / self.episodes.clamp(min=1)


def evaluate(
    policy: Policy,
    env: Any,
    parameters: torch.Tensor,
    *,
    num_episodes: int = 1,
    seed: int | None = None,
    num_workers: int | None = None,
    executor: Executor | None = None,
    obs_norm: ObsNorm | None = None,
    decrease_rewards_by: float | None = None,
    alive_bonus_schedule: tuple[int, float] | tuple[int, int, float] | None = None,
    action_noise_stdev: float | None = None,
    fused: bool | None = None,
    common_random_numbers: bool = False,
    devices: Sequence[Any] | None = None,
    randomize: Sampler | Mapping[str, Any] | None = None,
    steps_per_check: int | None = None,
    select_restarts: bool | None = None,
    measures: Mapping[str, str | Callable[..., Any] | tuple[Any, str] | Measure] | None = None,
    options: EvaluateOptions | None = None,
    progress: Callable[[int], None] | None = None,
    opponents: str | torch.Tensor | None = None,
    matches: int = 1,
) -> EvaluationResult:
    """Run every row of ``parameters`` for ``num_episodes`` episodes, ``env.num_envs`` rows at a time, in
    one vectorized loop; no loop over rows.

    ``env`` is a vector env made by ``vecrl.make_vector_env`` (``gym::``, ``brax::`` or any backend). The
    first rows start on the sub-envs together; when a row is done, its sub-env takes the next row at once
    (a masked reset), so the loop's cost follows the rows still running (see
    ``vecrl_evaluate.row_loop``). Every random thing of row ``r`` is a function of ``(seed, r, episode,
    step)`` alone (``vecrl_evaluate.randomness``): its first episode starts from a reset with the row's
    seed (word ``r`` of ``numpy.random.SeedSequence(seed)``, modulo 2**31 - 1), each later episode from a
    seed hashed from it and the episode's number (or the sub-env's own autoreset, where that continues the
    seeded stream, as gym's does), and its action noise from a hash of its seed and step. So a row's result
    does not depend on ``num_envs``, ``num_workers``, the executor or the fused path.
    ``common_random_numbers=True`` gives every row row 0's seed instead: each row then starts its episodes
    from the same states and gets the same noise, so rows are ranked on equal terms (evosax's common random
    numbers; less noise in the ranking, less variety in what a generation is scored on). Recurrent
    state is reset for exactly the rows whose episode ended. When the env was made with
    ``num_episodes=``, its budget stops finished sub-envs from stepping; rewards past a row's last
    episode (NaN under a budget) are never counted. Discrete action spaces take the argmax of the
    policy's output.

    The policy sees each observation flattened as ``gymnasium.spaces.flatten`` does, in the dtype and on
    the device of ``parameters``: float64 observations (MuJoCo) reach a float32 policy as float32, and a
    ``Discrete(n)`` observation (FrozenLake) as a one-hot vector of length n. Size the network's input
    with ``gymnasium.spaces.flatdim(env.single_observation_space)``.

    ``num_workers=K`` evaluates the population in K processes at once: this one and K - 1 worker
    processes that make their own env (from ``env.recipe``, so ``env`` must come from
    ``make_vector_env``, with a ``gym::`` env) and policy once. Each process's free sub-envs take the
    rows not yet started (``vecrl_evaluate.evaluate_workers``), so a process whose rows run longer takes
    fewer; workers send back only the results, which equal those of ``num_workers=None`` for the same
    ``seed``. Workers are spawned, so a script must guard its entry point with
    ``if __name__ == "__main__":``.

    The neuroevolution options, named and meant as in EvoTorch's ``VecGymNE``:

    - ``obs_norm=stats`` (a ``vecrl_policy.ObsNorm`` kept across calls): the policy sees each flat
      observation as ``stats`` normalized it when the call began (every row alike), and once the call is
      done, ``stats`` holds every observation a counted row saw (parts run elsewhere send theirs back).
      A policy that carries its own (``policy.obs_norm``) normalizes by itself and is not updated.
    - ``decrease_rewards_by`` and ``alive_bonus_schedule`` change each step's reward before it is summed
      (``total_return`` is the shaped return); ``action_noise_stdev`` adds Gaussian noise to continuous
      actions, drawn by each row's seed and step (a row gets the same noise wherever it runs). See
      ``vecrl_evaluate.shaping.Shaping``.

    On a jax env (``brax::``, ``playground::``, ``gymnax::``) without gymnasium wrappers, with a network
    whose layers have jax twins (``vecrl_policy.layer_table``) and float32 parameters, the whole loop
    runs as one compiled jax program (``vecrl_evaluate.fused``; each Ray actor runs its part so): the
    same results within float tolerance, at the speed of an EvoJAX-style rollout and without a host round
    trip per step, compiled once per configuration. ``fused=False`` steps the env from Python instead,
    ``fused=True`` insists (a ValueError says why it cannot). ``result.path`` says which ran. The program
    splits the rows over every local jax device of the env's platform (``devices=[...]`` names them; one
    program, each device running a contiguous share), with each row's results those of one device. The loop
    takes ``steps_per_check`` env steps between two checks of whether rows are left (a ``lax.scan`` inside
    its ``lax.while_loop``) and, with ``select_restarts=True``, restarts finished slots by selection rather
    than under a ``lax.cond``: the shape a GPU needs, which is the default there (16 steps, selection; on a
    CPU 1 step and ``cond``); the results are the same, bit for bit, for every ``steps_per_check`` (and the
    same to float rounding with or without selection, which XLA compiles apart). The program polls the
    host about every quarter second, where a Ctrl-C stops the call and ``progress`` hears how many rows are
    done (a short call is not polled). ``vecrl_evaluate.rollout_function`` is the same loop as a pure jax
    function, for a searcher that compiles its whole generation itself. The checks and the choice of path
    are ``vecrl_evaluate.plan.checked_plan``'s; ``vecrl_evaluate.runners`` runs the rows.

    ``randomize`` varies the env's parameters (``env.default_params``: MuJoCo model fields, classic-control
    constants, gymnax's ``EnvParams``; ``vecrl.params``) per row and episode, for domain randomization: a
    sampler ``(generator, default_params) -> params`` (such as ``vecrl.randomize.scale({"body_mass": (0.8,
    1.2)})``), called for each row's every episode with a generator seeded by the row's seed and the
    episode's number, or fixed parameters per row (name -> array with a row each). The parameters are drawn
    once, before anything runs (``vecrl.randomize.params_table``), so a row's result stays independent of
    ``num_envs``, workers, the executor and the fused path. Without it, every sub-env runs with the env's
    defaults.

    ``measures`` names quantities each row is measured by besides its return, for quality-diversity and
    multi-objective search: name -> an info key (``"x_velocity"``; brax's and Playground's metrics), a
    function ``f(observation, action, reward)`` of the step's batch giving one number per row (written with
    array operators, it runs fused too), a ``(source, per_episode)`` pair or a ``vecrl_evaluate.Measure``.
    Each is reduced over every episode (``"mean"`` unless named: ``"sum"``, ``"last"``, ``"max"``, ``"min"``)
    and over the row's episodes (their mean), over the steps the return counts, the same on every path:
    ``result.measures[name]`` (one per row), ``result.episode_measures[name]`` (one per episode). See
    ``vecrl_evaluate.measures``.

    The loop runs on one torch thread (see ``vecrl_evaluate.threads.one_torch_thread`` for why); the
    count is restored when the call returns.

    The options can come as one value instead, ``options=vecrl_evaluate.EvaluateOptions(...)`` (the same
    names; checked once, when made: a caller that evaluates many populations alike makes it once), and then
    no option is given as a keyword.

    ``progress``, if given, is called with the number of rows done so far: every few dozen steps in one
    process, once all parts are back with an executor, and on the fused path once compiled (0) and at each
    poll of the program.

    On a multi-agent env, whose rows are the seats of worlds (``pettingzoo::``), ``opponents`` seats the
    population in its worlds (``vecrl_evaluate.matches``): ``"self"``, each row plays ``matches`` matches in
    every seat against rows drawn by the seed; a tensor of opponents' parameters, against those; ``"team"``,
    each row takes every seat of ``matches`` worlds. A row's result is then over the seats it played (its
    mean return per match), and ``result.matches`` is the match table. With ``common_random_numbers`` every
    world starts alike and every row meets the same opponents in a seat's k-th match. A world's rows stay
    together in worker processes and executors (``vecrl.worlds``), with the same results.

    Args:
        policy: the network, batched over rows (``vecrl_policy.Policy``).
        env: a vector env of ``vecrl.make_vector_env``; its sub-envs take the rows in turn.
        parameters: ``(rows, policy.parameter_length)``: one policy's parameters per row.
        num_episodes: episodes per row (their returns averaged).
        seed: the seed the rows' seeds come from; None: a fresh one.
        num_workers: processes evaluating at once (this one and ``num_workers - 1`` more; a ``gym::`` env).
        executor: runs parts of the population elsewhere (``vecrl_ray.RayExecutor``).
        obs_norm: observation-normalization statistics, used and then updated by the call.
        decrease_rewards_by: subtracted from every step's reward (EvoTorch's).
        alive_bonus_schedule: ``(t, bonus)`` or ``(t0, t1, bonus)``: EvoTorch's alive bonus.
        action_noise_stdev: Gaussian noise added to continuous actions.
        fused: True: the fused jax program or an error; False: stepped from Python; None: the fastest.
        common_random_numbers: every row gets row 0's seed.
        devices: the jax devices the fused program splits the rows over.
        randomize: per row and episode env parameters: a sampler, or a table of them.
        steps_per_check: the fused program's env steps between two checks for rows left.
        select_restarts: the fused program restarts finished slots by selection.
        measures: name -> what each row is measured by besides its return.
        options: all of the above as one ``EvaluateOptions`` (then none given as keywords).
        progress: called with the number of rows done so far.
        opponents: ``"self"``, ``"team"`` or opponents' parameters, on a multi-agent env.
        matches: matches per row and seat with ``opponents``.

    Returns:
        An ``EvaluationResult``: per row ``total_return``, ``steps``, ``episodes``, ``mean_return``, the
            ``measures`` asked for, and the path that ran (``result.path``).

    Raises:
        TypeError: ``options`` not an ``EvaluateOptions``, or given with keywords; an option of a wrong type.
        ValueError: parameters whose shape does not fit the policy, a policy that does not fit the env
            (``PolicyMismatch``), an option out of range, ``fused=True`` where the fused path cannot run
            (saying why), non-finite actions.

    Examples:
        >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=64, num_episodes=1)  # doctest: +SKIP
        >>> policy = Policy("Linear(4, 2)")  # doctest: +SKIP
        >>> evaluate(policy, env, torch.randn(256, policy.parameter_length)).mean_return.shape  # doctest: +SKIP
        torch.Size([256])
    """
    given = EvaluateOptions(
        num_episodes=num_episodes,
        seed=seed,
        num_workers=num_workers,
        executor=executor,
        obs_norm=obs_norm,
        decrease_rewards_by=decrease_rewards_by,
        alive_bonus_schedule=alive_bonus_schedule,
        action_noise_stdev=action_noise_stdev,
        fused=fused,
        common_random_numbers=common_random_numbers,
        devices=devices,
        randomize=randomize,
        steps_per_check=steps_per_check,
        select_restarts=select_restarts,
        measures=measures,
    )
    if options is None:
        options = given
    elif not isinstance(options, EvaluateOptions):
        raise TypeError(
            f"options must be a vecrl_evaluate.EvaluateOptions, got {type(options).__qualname__}."
        )
    elif given != EvaluateOptions():
        raise TypeError(
            "evaluate() got options= and options as keywords too; give them all in one place:"
            " dataclasses.replace(options, name=value) changes some of an options value."
        )
    if opponents is not None:
        return played(policy, env, parameters, options, progress, opponents, matches)
    return evaluated(policy, env, parameters, options, progress)


def played(
    policy: Policy,
    env: Any,
    parameters: torch.Tensor,
    options: EvaluateOptions,
    progress: Callable[[int], None] | None,
    opponents: Any,
    matches: int,
) -> EvaluationResult:
    """``evaluate`` with ``opponents``: the population seated (``vecrl_evaluate.matches``), run, and each row's
    result gathered from the seats it played."""
    seats = seats_per_world(env)
    opponents = checked_opponents(opponents, parameters)
    table = seating(
        parameters,
        opponents,
        matches=matches,
        seats=seats,
        seed=options.seed,
        common=options.common_random_numbers,
    )
    seated = evaluated(policy, env, seated_parameters(parameters, opponents, table), options, progress)
    own = own_rows(table, len(parameters), seats)

    def summed(values: torch.Tensor) -> torch.Tensor:
        return values[own].sum(dim=1)

    per_episode = {name: values[own].flatten(1) for name, values in seated.episode_measures.items()}
    episodes = summed(seated.episodes)
    returns = seated.mean_return.reshape(-1, seats)
    return EvaluationResult(
        summed(seated.total_return),
        episodes,
        summed(seated.steps),
        seated.path,
        seated.compile_seconds,
        None if seated.raw_return is None else summed(seated.raw_return),
        {name: values.sum(dim=1) / episodes.clamp(min=1) for name, values in per_episode.items()},
        per_episode,
        MatchTable(table.members, table.player, table.seat, returns),
    )


def evaluated(
    policy: Policy,
    env: Any,
    parameters: torch.Tensor,
    options: EvaluateOptions,
    progress: Callable[[int], None] | None = None,
) -> EvaluationResult:
    """What ``evaluate(policy, env, parameters, options=options, progress=progress)`` returns."""
    with one_torch_thread():  # (the checks' and conversions' small tensors too: threads.py says why)
        return _evaluated(policy, env, parameters, options, progress)


def _evaluated(
    policy: Policy,
    env: Any,
    parameters: torch.Tensor,
    options: EvaluateOptions,
    progress: Callable[[int], None] | None,
) -> EvaluationResult:
    plan = checked_plan(policy, env, parameters, options)
    compiled_before = compile_seconds()
    runner = InThisProcess(progress) if plan.executor is None else plan.executor
    parts = split_population(env, len(parameters), plan.seeds, runner.num_parts, plan.params)
    evaluation = Evaluation(env, policy, functools.partial(run_part, settings=plan.settings), parameters)
    results = runner.run(evaluation, parts)
    if plan.executor is not None and progress is not None:
        progress(len(parameters))
    total_return, episode_counts, steps, raw_return, measured, *observed = (
        results[0] if len(results) == 1 else (torch.cat(column) for column in zip(*results, strict=True))
    )
    per_episode = _measures(plan.settings.measures, measured)
    if plan.obs_norm is not None:  # each part's (count, sum, sum of squares), merged once the call is done
        plan.obs_norm.add_partial(*(column.sum(dim=0) for column in observed))
    compiled = compile_seconds() - compiled_before
    means = {name: values.sum(dim=1) / episode_counts.clamp(min=1) for name, values in per_episode.items()}
    return EvaluationResult(
        total_return, episode_counts, steps, plan.path, compiled, raw_return, means, per_episode
    )


def _measures(measures: Measures | None, measured: torch.Tensor) -> dict[str, torch.Tensor]:
    """Each measure's ``(rows, episodes)`` values, from the call's ``(rows, episodes, measures)``; a ValueError
    naming the rows where one is NaN or inf (as the env's rewards, it would rank them without meaning)."""
    if measures is None:
        return {}
    for index, name in enumerate(measures.names):
        bad = (~torch.isfinite(measured[:, :, index])).any(dim=1).nonzero().flatten().tolist()
        if bad:
            raise ValueError(
                f"The measure {name!r} is NaN or inf for parameter rows {listed(bad)}; no result is returned. Look"
                " for where its values stop being finite (the env's info, or the function's arithmetic)."
            )
    return {name: measured[:, :, index] for index, name in enumerate(measures.names)}
