"""VecrlNE: an EvoTorch problem whose solutions are policies evaluated by ``vecrl_evaluate.evaluate``."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import torch
from evotorch import Solution, SolutionBatch
from evotorch.neuroevolution.baseneproblem import BaseNEProblem
from gymnasium.spaces import Box, flatdim
from torch import nn

import vecrl
from vecrl.checks import checked_num_envs
from vecrl.randomize import Sampler
from vecrl.worlds import NotWholeWorldsError, rows_per_world, whole_worlds
from vecrl_evaluate import evaluate
from vecrl_evaluate.evaluate_workers import checked_num_workers
from vecrl_evaluate.evaluation import evaluated, played
from vecrl_evaluate.executor import Executor
from vecrl_evaluate.matches import checked_opponents, seated_rows, seats_per_world
from vecrl_evaluate.options import EvaluateOptions, default_num_envs, executor_error
from vecrl_evaluate.plan import checked_plan
from vecrl_evotorch import vecgymne
from vecrl_evotorch.run_settings import OPPONENT_KINDS
from vecrl_policy import ObsNorm, Policy
from vecrl_policy.normalization import NormalizedNet

#: The network made where none is given: one Tanh layer, wider for continuous actions (EvoTorch's examples).
DEFAULT_NETWORKS = {
    "discrete": "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)",
    "continuous": "Linear(obs_length, 32) >> Tanh() >> Linear(32, act_length)",
}


def default_network(action_space: Any) -> str:
    """The network string ``VecrlNE`` uses where none is given, for a sub-env's ``action_space``.

    Examples:
        >>> from gymnasium.spaces import Discrete
        >>> default_network(Discrete(2))
        'Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)'
    """
    return DEFAULT_NETWORKS["continuous" if isinstance(action_space, Box) else "discrete"]


class VecrlNE(BaseNEProblem):
    """Neuroevolution on any vecrl backend, in the shape of EvoTorch's ``VecGymNE``: EvoTorch's searchers
    (PGPE, SNES, CMA-ES, CEM, ...) maximize the mean return of policies evaluated by
    ``vecrl_evaluate.evaluate``, on one process, worker processes (``num_workers``) or any executor
    (``executor=vecrl_ray.RayExecutor(...)``).

    ``env`` is a name for ``vecrl.make_vector_env`` (``"gym::Hopper-v5"``, ``"brax::ant"``,
    ``"envpool::Hopper-v5"``, a plugin's prefix) and ``env_config`` its keyword arguments. ``network`` is a
    network string (its constants ``obs_length`` and ``act_length``, or ``obs`` and ``act``, come from the env, more from
    ``network_args``), an ``nn.Module`` or a callable making one, given the env's sizes it takes by name
    (default: ``default_network``, by the action space). VecGymNE's own keywords and methods work as there
    (``vecrl_evotorch.vecgymne``: ``max_num_envs``, ``device``, ``num_actors`` as worker processes, an env
    callable, ...). ``observation_normalization``,
    ``decrease_rewards_by``, ``alive_bonus_schedule`` and ``action_noise_stdev`` mean what they mean in
    VecGymNE (see ``vecrl_evaluate.evaluate``); the statistics are updated after each population, from every
    observation a row saw, and normalize the whole next population alike. ``num_envs`` sub-envs run
    the population, each taking the next solution as soon as its own is done (default: the population
    size, at most 256 on a host engine; every row at once on a jax engine).

    Evaluation ``i`` (from 0) resets its envs with ``seed + i`` when ``seed`` is given, so a run
    reproduces; without one, evaluations are unseeded, as VecGymNE's are (on envpool that spares
    building the pool again for each evaluation: see the README). ``common_random_numbers=True`` scores
    every solution of a population from the same start states and noise, as evosax does (see
    ``vecrl_evaluate.evaluate``). ``randomize`` (a sampler, such as ``vecrl.randomize.scale({"body_mass": (0.8,
    1.2)})``) scores each solution under env parameters drawn for its every episode (domain randomization:
    ``vecrl_evaluate.evaluate``'s ``randomize``). Each evaluation adds to
    ``interaction_count`` and ``episode_count``, which a searcher's status shows as
    ``total_interaction_count`` and ``total_episode_count`` (and ``obs_norm_count`` with
    normalization); ``mean_raw_return`` and ``pop_best_raw_return`` are the population's returns of the
    env's own rewards, which ``mean_eval`` and ``pop_best_eval`` are not where rewards are shaped.

    ``measures`` (``vecrl_evaluate.evaluate``'s: name -> an info key or a function, each reduced over episodes)
    become every solution's evaluation data, in order: the features EvoTorch's ``MAPElites`` reads (give it a
    grid over them). ``objectives`` (default ``[("return", "max")]``) names what is optimized, each
    ``"return"`` or a measure with ``"max"`` or ``"min"``: two or more make a multi-objective problem
    (``objective_sense`` a list) for EvoTorch's multi-objective searchers (``GeneticAlgorithm``'s ranking).

    On a multi-agent env (rows are the seats of worlds: ``pettingzoo::``), ``opponents`` seats each population
    in its worlds as ``vecrl_evaluate.evaluate`` does, ``matches`` matches a solution and seat: ``"self"`` (the
    population plays itself), ``"team"`` (a solution takes every seat of its worlds), a tensor of fixed
    opponents' parameters, or ``"hall-of-fame"``: against past centers (each population's mean: the center
    that sampled it, exactly so for PGPE's symmetric sampling), at most ``hall_of_fame_size`` of them, kept
    as a uniform sample of every generation's (reservoir sampling), the first population playing itself.
    Where every opponent improves too (``"self"``, ``"hall-of-fame"``), ``score`` plays a solution against the
    first population's center, a fixed reference, so progress shows (``vecrl evolve``'s center column).

    The problem pickles (the env and the executor are made or given again, see
    ``with_executor``); EvoTorch's own Ray actors (``num_actors``) are not used: give ``num_workers`` or
    an ``executor``.

    Args:
        env: a name for ``vecrl.make_vector_env``, or a callable making a gymnasium env (VecGymNE's).
        network: a network string, an ``nn.Module`` or a callable making one (default: ``default_network``).
        network_args: more constants of the network string, or arguments of the callable.
        env_config: keywords of ``make_vector_env`` (not ``num_envs``, ``num_episodes``).
        num_envs: sub-envs running the population (default: the population, capped on a host engine).
        num_episodes: episodes per solution, their returns averaged.
        observation_normalization: running observation statistics, shared by the population.
        decrease_rewards_by: subtracted from every reward (VecGymNE's).
        alive_bonus_schedule: ``(t, bonus)`` or ``(t0, t1, bonus)`` (VecGymNE's).
        action_noise_stdev: Gaussian noise on continuous actions (VecGymNE's).
        num_workers: processes evaluating at once (``vecrl_evaluate.evaluate``'s).
        executor: where parts of the population run (``vecrl_ray.RayExecutor``).
        initial_bounds: the range EvoTorch's searchers draw first solutions from.
        seed: evaluation ``i`` resets its envs with ``seed + i``; None: unseeded.
        common_random_numbers: every solution of a population scored from the same starts and noise.
        randomize: env parameters drawn per solution and episode (domain randomization).
        measures: name -> an info key or a function: every solution's evaluation data.
        objectives: ``[(name, "max" or "min"), ...]``: what is optimized (default ``[("return", "max")]``).
        opponents: ``"self"``, ``"team"``, ``"hall-of-fame"`` or opponents' parameters, on a multi-agent env.
        matches: matches a solution and seat with ``opponents``.
        hall_of_fame_size: the most past centers ``"hall-of-fame"`` keeps.
        max_num_envs: VecGymNE's cap on ``num_envs``.
        device: where the policies run (VecGymNE's).
        num_actors: VecGymNE's actors, taken as worker processes (``"max"``: one per core).
        num_subbatches: VecGymNE's, accepted and changing nothing (sub-envs are refilled as solutions end).
        subbatch_size: as ``num_subbatches``.
        num_gpus_per_actor: VecGymNE's Ray setting, refused naming ``vecrl_ray.RayExecutor``.
        actor_config: as ``num_gpus_per_actor``.
        **options: ``vecrl_evaluate.evaluate``'s other options (``fused``, ``steps_per_check``, ...).

    Raises:
        TypeError: an argument of the wrong type (``env`` neither a name nor a callable, an executor that
            is none), or an option ``evaluate`` does not take.
        ValueError: a network that does not fit the env, a measure named ``return``, an objective that is
            no measure, an ``env_config`` holding ``num_envs``, a VecGymNE setting vecrl does not support,
            ``opponents`` on an env without seats or not one of those above.

    Examples:
        >>> from evotorch.algorithms import PGPE  # doctest: +SKIP
        >>> problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, 16) >> Tanh() >> Linear(16, act_length)")  # doctest: +SKIP
        >>> searcher = PGPE(problem, popsize=64, center_learning_rate=0.1, stdev_learning_rate=0.1,
        ...                 stdev_init=0.1, optimizer="clipup", optimizer_config={"max_speed": 0.2})  # doctest: +SKIP
        >>> searcher.run(10)  # doctest: +SKIP
        >>> searcher.status["mean_eval"], searcher.status["total_interaction_count"]  # doctest: +SKIP
    """

    # Set by __init__; here too for a problem pickled (a saved run) before they existed, unpickled without them.
    _opponents: str | torch.Tensor | None = None
    _matches: int = 1
    _hall_of_fame_size: int = 50
    _hall_of_fame: torch.Tensor | None = None
    _centers_seen: int = 0
    _reference: torch.Tensor | None = None
    _world: int = 1

    def __init__(
        self,
        env: str | Callable[..., Any],
        network: str | nn.Module | Callable[..., nn.Module] | None = None,
        *,
        network_args: Mapping[str, Any] | None = None,
        env_config: Mapping[str, Any] | None = None,
        num_envs: int | None = None,
        num_episodes: int = 1,
        observation_normalization: bool = False,
        decrease_rewards_by: float | None = None,
        alive_bonus_schedule: tuple[int, float] | tuple[int, int, float] | None = None,
        action_noise_stdev: float | None = None,
        num_workers: int | None = None,
        executor: Executor | None = None,
        initial_bounds: tuple[float, float] = (-0.00001, 0.00001),
        seed: int | None = None,
        common_random_numbers: bool = False,
        randomize: Sampler | None = None,
        measures: Mapping[str, Any] | None = None,
        objectives: Sequence[tuple[str, str]] | None = None,
        opponents: str | torch.Tensor | None = None,
        matches: int = 1,
        hall_of_fame_size: int = 50,
        max_num_envs: int | None = None,
        device: str | torch.device | None = None,
        num_actors: int | str | None = None,
        num_subbatches: int | None = None,
        subbatch_size: int | None = None,
        num_gpus_per_actor: Any = None,
        actor_config: Any = None,
        **options: Any,
    ) -> None:
        num_workers = self._take_vecgymne_settings(
            env,
            num_envs=num_envs,
            max_num_envs=max_num_envs,
            device=device,
            num_workers=num_workers,
            num_actors=num_actors,
            num_subbatches=num_subbatches,
            subbatch_size=subbatch_size,
            num_gpus_per_actor=num_gpus_per_actor,
            actor_config=actor_config,
        )
        if not isinstance(observation_normalization, bool):
            raise TypeError(
                f"observation_normalization must be True or False, got {observation_normalization!r}."
            )
        _check_initial_bounds(initial_bounds)
        if randomize is not None and not callable(randomize):
            raise TypeError(
                "VecrlNE's randomize must be a sampler (a function (generator, default_params) -> params, such as"
                f" vecrl.randomize.scale({{'body_mass': (0.8, 1.2)}})), got {type(randomize).__qualname__}: fixed"
                " params per row are for evaluate(), whose rows a caller knows."
            )
        if seed is not None and not (isinstance(seed, Integral) and 0 <= seed < 2**63):
            raise ValueError(
                f"seed must be None or an int >= 0 and below 2**63 (EvoTorch seeds torch with it), got {seed!r}."
            )
        # evaluate's options, checked once here: every generation passes them (with its seed) to evaluate
        self._options: EvaluateOptions = _evaluate_options(
            options,
            num_episodes=num_episodes,
            seed=seed,
            num_workers=num_workers,
            decrease_rewards_by=decrease_rewards_by,
            alive_bonus_schedule=alive_bonus_schedule,
            action_noise_stdev=action_noise_stdev,
            common_random_numbers=common_random_numbers,
            randomize=randomize,
            measures=measures,
        )
        measured = self._options.checked_measures
        if measured is not None and "return" in measured.names:
            raise ValueError(
                "measures names a measure 'return', which is VecrlNE's name for the mean return (the objective"
                ' "return" in objectives=): give the measure another name'
            )
        self._objectives: tuple[tuple[str, str], ...] = _checked_objectives(
            objectives, () if measured is None else measured.names
        )
        self._env_config: dict[str, Any] = _checked_env_config(env_config)
        self._num_episodes: int = self._options.num_episodes
        self._executor: Executor | None = executor
        self._env_seed: int | None = seed
        self._evaluations: int = 0
        self._interaction_count: int = 0
        self._episode_count: int = 0
        self._raw_returns: torch.Tensor | None = None  # the last population's, per solution
        self._popsize: int | None = None  # the last population's size
        self._popped: tuple[int, torch.Tensor, torch.Tensor] | None = None  # pop_observation_stats's mark
        self._env: Any = None
        self._progress: Callable[[int, int], None] | None = None  # (set within progress_to's block alone)
        self._network: Any = network
        self._opponents: str | torch.Tensor | None = _checked_opponent_kind(opponents)
        for name, value in (("matches", matches), ("hall_of_fame_size", hall_of_fame_size)):
            if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}.")
        if opponents is None and matches != 1:
            raise ValueError(
                f"matches={matches!r} counts the matches a solution plays with opponents=, which is not given:"
                " give opponents='self', 'team' or 'hall-of-fame' on a multi-agent env, or leave matches out."
            )
        self._matches, self._hall_of_fame_size = int(matches), int(hall_of_fame_size)
        self._hall_of_fame: torch.Tensor | None = None  # past centers, a row each
        self._centers_seen = 0  # centers offered to the hall of fame (its reservoir's count)
        self._reference: torch.Tensor | None = None  # the first population's center
        self._make_policy(network, network_args, observation_normalization, num_actors)
        senses = [sense for _, sense in self._objectives]
        super().__init__(
            objective_sense=senses[0] if len(senses) == 1 else senses,
            eval_data_length=0 if measured is None else len(measured.names),
            initial_bounds=initial_bounds,
            solution_length=self._policy.parameter_length,
            dtype=torch.float32,
            seed=seed,
        )
        self.after_eval_hook.append(self._extra_status)

    def _take_vecgymne_settings(
        self,
        env: Any,
        *,
        num_envs: int | None,
        max_num_envs: int | None,
        device: Any,
        num_workers: int | None,
        num_actors: Any,
        **unused: Any,
    ) -> int | None:
        """Check and keep what VecGymNE's scripts give (the env, the sub-envs, the device); the worker
        processes asked for (``num_workers``, or VecGymNE's ``num_actors``)."""
        if not isinstance(env, str) and not callable(env):
            raise TypeError(
                f"VecrlNE expects env as a name for vecrl.make_vector_env, such as 'gym::Hopper-v5' (or, as"
                f" VecGymNE, a callable making a vector env of num_envs sub-envs), got {type(env).__qualname__}."
            )
        if num_envs is not None:
            checked_num_envs(num_envs)
        vecgymne.check_unused(**unused, max_num_envs=max_num_envs)
        if num_envs is not None and max_num_envs is not None:
            raise ValueError(
                f"Give num_envs={num_envs!r} (the sub-envs) or max_num_envs={max_num_envs!r} (VecGymNE's cap on"
                " them: the population size, at most this), not both."
            )
        self._env_name: Any = env
        self._num_envs: int | None = None if num_envs is None else int(num_envs)
        self._max_num_envs: int | None = max_num_envs
        self._device: torch.device | None = vecgymne.checked_device(device)
        workers: int | None = vecgymne.checked_workers(num_actors=num_actors, num_workers=num_workers)
        return workers

    def _make_policy(
        self,
        network: Any,
        network_args: Mapping[str, Any] | None,
        observation_normalization: bool,
        num_actors: Any,
    ) -> None:
        """The policy of ``network`` for the env (made once with one sub-env, or ``num_envs``, and kept), its
        observation statistics, and evaluate's plan checked on them (no worker starts here)."""
        try:
            probe = self._make_env(self._num_envs or 1)
        except NotWholeWorldsError as error:  # rows are seats: a world's worth, where none was asked for
            if self._num_envs is not None:
                raise
            probe = self._make_env(error.seats_per_world)
        try:
            #: A world's rows (``vecrl.worlds``): populations fill whole worlds, or are seated by opponents.
            self._world: int = rows_per_world(probe)
            if self._opponents is not None:
                seats_per_world(probe)  # (a ValueError on an env without seats)
            elif self._world > 1:
                raise ValueError(
                    f"{self._env_name}'s rows are the seats of worlds of {self._world} agents, so a solution needs"
                    " opponents: give opponents='team' (the solution in every seat), 'self' or 'hall-of-fame'"
                    " (solutions playing each other: vecrl evolve --opponents)."
                )
            self._observation_space: Any = probe.single_observation_space
            self._action_space: Any = probe.single_action_space
            if isinstance(network, nn.Module) and network_args:
                raise ValueError(
                    "network_args are for a network string or a callable, not an nn.Module instance."
                )
            if network is None:
                network = self._network = default_network(self._action_space)
            if isinstance(network, (str, nn.Module)):
                self._policy: Policy = Policy.for_env(network, probe, **dict(network_args or {}))
            else:
                self._policy = Policy(vecgymne.network_module(network, probe, dict(network_args or {})))
            self.obs_norm: ObsNorm | None = (
                ObsNorm(flatdim(self._observation_space)) if observation_normalization else None
            )
            workers = self._options.num_workers
            if num_actors is not None and workers is not None:  # (named as the user wrote it)
                try:
                    checked_num_workers(workers, probe, given_as="num_actors")
                except ValueError as error:
                    raise ValueError(
                        f"VecrlNE(num_actors={num_actors!r}) evaluates in {workers} worker processes, and {error}"
                    ) from error
            if isinstance(self._opponents, torch.Tensor):
                self._opponents = checked_opponents(
                    self._opponents, torch.zeros(1, self._policy.parameter_length)
                )
            checked_plan(
                self._policy,
                probe,
                torch.zeros(self._world, self._policy.parameter_length),
                replace(self._options, executor=self._executor, obs_norm=self.obs_norm),
                start_workers=False,
            )
        except BaseException:
            probe.close()
            raise
        if self._num_envs is None:
            probe.close()
        else:
            self._env = probe

    def _make_env(self, num_envs: int) -> Any:
        if not isinstance(self._env_name, str):  # VecGymNE's callable: a vector env of num_envs sub-envs
            made = self._env_name(num_envs=num_envs, **self._env_config)
            return made if isinstance(made, vecrl.TorchWrapper) else vecrl.TorchWrapper(made)
        return vecrl.make_vector_env(
            self._env_name, num_envs=num_envs, num_episodes=self._num_episodes, **self._env_config
        )

    def _env_for(self, popsize: int) -> Any:
        """The env, made on first use (and again after unpickling): ``num_envs`` sub-envs, or one a row of the
        population (on a host engine at most ``vecrl_evaluate.options.MAX_DEFAULT_NUM_ENVS``, or
        ``max_num_envs``: ``default_num_envs``)."""
        if self._env is None:
            name = self._env_name if isinstance(self._env_name, str) else None
            rows = popsize if self._opponents is None else self._seated_rows(popsize)
            self._env = self._make_env(
                self._num_envs
                or whole_worlds(default_num_envs(rows, self._max_num_envs, env_name=name), self._world)
            )
        return self._env

    def _seated_rows(self, popsize: int) -> int:
        """The rows a population of ``popsize`` is seated in (``vecrl_evaluate.matches``)."""
        return seated_rows(popsize, self._opponents, matches=self._matches, seats=self._world)

    @property
    def _nonserialized_attribs(self) -> list[str]:
        return [*super()._nonserialized_attribs, "_env", "_executor"]

    def with_executor(self, executor: Executor | None) -> VecrlNE:
        """Use ``executor`` from now on (after unpickling, say, since an executor does not pickle); returns
        the problem."""
        if executor is not None and not isinstance(executor, Executor):
            raise TypeError(executor_error(executor))
        self._executor, self._options = executor, replace(self._options, num_workers=None)
        return self

    # -- evaluation ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def progress_to(self, callback: Callable[[int, int], None]) -> Iterator[None]:
        """Within the block, ``callback(rows_done, rows)`` hears how each evaluation of a population goes, as
        ``vecrl_evaluate.evaluate``'s ``progress`` does (``vecrl evolve``'s line within a long generation).
        The problem keeps no callback after the block (it pickles without it).

        Examples:
            >>> problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)")  # doctest: +SKIP
            >>> with problem.progress_to(lambda done, rows: print(done, "of", rows)):  # doctest: +SKIP
            ...     searcher.step()
        """
        self._progress = callback
        try:
            yield
        finally:
            self._progress = None

    def _evaluate_batch(self, batch: SolutionBatch) -> None:
        parameters = batch.values.as_subclass(torch.Tensor)
        if self._device is not None:
            parameters = parameters.to(self._device)
        seed = None if self._env_seed is None else self._env_seed + self._evaluations
        options = replace(self._options, seed=seed, executor=self._executor, obs_norm=self.obs_norm)
        popsize = len(parameters)
        env = self._env_for(popsize)
        heard, rows = self._progress, popsize if self._opponents is None else self._seated_rows(popsize)
        progress = None if heard is None else lambda done: heard(done, rows)
        if self._opponents is None:
            result = evaluated(self._policy, env, parameters, options, progress)
        else:
            against = self._opponents
            if isinstance(against, str) and against == "hall-of-fame":
                against = "self" if self._hall_of_fame is None else self._hall_of_fame.to(parameters)
            result = played(self._policy, env, parameters, options, progress, against, self._matches)
            self._remember(parameters.mean(dim=0).detach().cpu())
        self._popsize = len(parameters)
        self._evaluations += 1
        self._interaction_count += int(result.steps.sum())
        self._episode_count += int(result.episodes.sum())
        self._raw_returns = result.mean_raw_return
        columns = {"return": result.mean_return, **result.measures}
        evals = torch.stack([columns[name] for name, _ in self._objectives], dim=1)
        if result.measures:  # the evaluation data: every measure, in order (the features MAPElites reads)
            evals = torch.cat([evals, torch.stack(list(result.measures.values()), dim=1)], dim=1)
        batch.set_evals(evals.to(batch.values.dtype))

    def _remember(self, center: torch.Tensor) -> None:
        """Keep a population's ``center``: the first as the reference ``score`` plays against, and each in the
        hall of fame (a uniform sample of them all, by reservoir sampling seeded by the problem's seed)."""
        if self._reference is None:
            self._reference = center
        if not (isinstance(self._opponents, str) and self._opponents == "hall-of-fame"):
            return
        self._centers_seen += 1
        hall = self._hall_of_fame
        if hall is None or len(hall) < self._hall_of_fame_size:
            self._hall_of_fame = center[None] if hall is None else torch.cat([hall, center[None]])
            return
        draw = torch.Generator().manual_seed(((self._env_seed or 0) * 1_000_003 + self._centers_seen) % 2**63)
        slot = int(torch.randint(self._centers_seen, (), generator=draw))
        if slot < len(hall):
            hall[slot] = center

    @property
    def hall_of_fame(self) -> torch.Tensor | None:
        """The past centers ``opponents="hall-of-fame"`` plays against, a row each (None before the first
        population)."""
        return self._hall_of_fame

    @property
    def reference(self) -> torch.Tensor | None:
        """The first population's center, which ``score`` plays against where opponents improve too."""
        return self._reference

    def _extra_status(self, batch: SolutionBatch) -> dict[str, Any]:
        status: dict[str, Any] = {
            "total_interaction_count": self._interaction_count,
            "total_episode_count": self._episode_count,
        }
        if self.obs_norm is not None:
            status["obs_norm_count"] = self.obs_norm.count
        raw = self._raw_returns
        if raw is not None:  # the env's own returns, where decrease_rewards_by or alive_bonus_schedule shape
            status["mean_raw_return"] = float(raw.mean())
            status["pop_best_raw_return"] = float(raw.max())
        return status

    @property
    def interaction_count(self) -> int:
        """Env steps taken by every evaluation so far."""
        return self._interaction_count

    @property
    def episode_count(self) -> int:
        """Episodes finished by every evaluation so far."""
        return self._episode_count

    @property
    def observation_normalization(self) -> bool:
        return self.obs_norm is not None

    def get_observation_stats(self) -> ObsNorm:
        """The observation statistics, as VecGymNE names it; a ValueError without normalization."""
        return self._statistics()

    def set_observation_stats(self, stats: ObsNorm) -> None:
        """Replace the observation statistics with ``stats`` (of the observation's length)."""
        own = self._statistics()
        if not isinstance(stats, ObsNorm) or stats.size not in (None, own.size):
            raise TypeError(f"set_observation_stats takes an ObsNorm of size {own.size}, got {stats!r}.")
        self.obs_norm = stats

    def update_observation_stats(self, stats: ObsNorm) -> None:
        """Add what ``stats`` saw to the observation statistics (VecGymNE's merge of another's)."""
        self._statistics().update(stats)

    def pop_observation_stats(self) -> ObsNorm:
        """What the statistics gained since the last pop (or since the start), as VecGymNE's actors hand
        theirs over."""
        own = self._statistics()
        count, total, squares = own.count, own.sum.clone(), own.sum_of_squares.clone()
        gained = ObsNorm(own.size, clip=own.clip, min_variance=own.min_variance)
        if self._popped is not None:
            before, before_sum, before_squares = self._popped
            count, total, squares = count - before, total - before_sum, squares - before_squares
        if count:
            gained.add_partial(count, total, squares)
        self._popped = (own.count, own.sum.clone(), own.sum_of_squares.clone())
        return gained

    def _statistics(self) -> ObsNorm:
        if self.obs_norm is None:
            raise ValueError(
                "This problem does not normalize observations, so it has no observation statistics: make it"
                " with observation_normalization=True."
            )
        return self.obs_norm

    def set_interaction_count(self, n: int) -> None:
        """Set ``interaction_count`` (VecGymNE's, for a run resumed elsewhere)."""
        self._interaction_count = int(n)

    def set_episode_count(self, n: int) -> None:
        """Set ``episode_count``."""
        self._episode_count = int(n)

    def get_env(self) -> Any:
        """The env, or None until the first evaluation makes it (VecGymNE's)."""
        return self._env

    @property
    def max_num_envs(self) -> int | None:
        """The cap on the sub-envs made for a population (``max_num_envs``; None: none given)."""
        return self._max_num_envs

    @property
    def network_device(self) -> torch.device | None:
        """The device the networks run on (``device``; None: where the population is, the CPU)."""
        return self._device

    def kill_actors(self) -> None:
        """VecGymNE's end of its Ray actors: here, ``close()`` (the env and its worker processes)."""
        self.close()

    def close(self) -> None:
        """Close the env (and with it any evaluation workers); the next evaluation makes it again."""
        if self._env is not None:
            env, self._env = self._env, None
            env.close()

    # -- solutions as policies ----------------------------------------------------------------------

    def to_policy(
        self, solution: Solution | torch.Tensor | Iterable[float], *, with_wrapper_modules: bool = True
    ) -> nn.Module:
        """The solution as a standalone ``nn.Module``: with ``with_wrapper_modules``, behind the
        observation normalization as it stands and with its actions clipped to a bounded Box, as
        VecGymNE's ``to_policy`` gives it."""
        vector = _vector_of(solution)
        net = self._policy.to_torch_module(vector)
        if not with_wrapper_modules:
            return net
        if self.obs_norm is not None and self.obs_norm.count:
            net = NormalizedNet(self.obs_norm.normalizer(vector.dtype, vector.device), net)
        space = self._action_space
        if isinstance(space, Box) and bool((space.bounded_below & space.bounded_above).all()):
            net = ClipActions(net, torch.as_tensor(space.low), torch.as_tensor(space.high))
        return net

    def make_net(self, solution: Solution | torch.Tensor | Iterable[float]) -> nn.Module:
        """The network of ``solution`` alone (no normalization, no clipping)."""
        return self.to_policy(solution, with_wrapper_modules=False)

    @property
    def network_string(self) -> str:
        """The network as given (a network string), or the ``repr`` of a module or callable."""
        return self._network if isinstance(self._network, str) else repr(self._network)

    def score(
        self,
        solution: Solution | torch.Tensor | Iterable[float],
        *,
        num_episodes: int = 1,
        seed: int | None = None,
    ) -> float:
        """The mean return of ``solution`` over ``num_episodes`` fresh episodes (one row each, seeded by
        ``seed``), as the policy of ``to_policy`` scores them: normalized with the statistics as they stand
        (left unchanged), without reward shaping or action noise, counted apart from ``interaction_count``.
        With ``opponents``, over ``num_episodes`` matches in each seat against the first population's center
        (``reference``; the solution itself before any population), against the fixed opponents given, or as
        a team.

        Examples:
            >>> problem = VecrlNE("gym::CartPole-v1", "Linear(obs_length, act_length)")  # doctest: +SKIP
            >>> problem.score(torch.zeros(10), num_episodes=4, seed=0)  # doctest: +SKIP
            9.25
        """
        vector = _vector_of(solution).to(torch.float32)
        episodes, copies = 1, int(num_episodes)
        if self._opponents is not None:
            return self._score_in_matches(vector, int(num_episodes), seed)
        env = self._env_for(copies)
        if getattr(env.unwrapped, "jax_env", None) is not None and self._popsize is not None:
            # a jax engine runs the population's compiled program: the population's shape (and episodes), so
            # that a run compiles once; the solution is scored on at least as many episodes
            episodes, copies = self._options.num_episodes, max(copies, self._popsize)
        rows = vector.expand(copies, -1).contiguous().to(self._device or "cpu")
        result = evaluate(
            self._policy,
            env,
            rows,
            seed=seed,
            num_episodes=episodes,
            num_workers=self._options.num_workers,
            executor=self._executor,
            obs_norm=None if self.obs_norm is None else copy.deepcopy(self.obs_norm),
            randomize=self._options.randomize,  # (the parameters it is evolved under)
        )
        return float(result.mean_return.mean())

    def _score_in_matches(self, vector: torch.Tensor, matches: int, seed: int | None) -> float:
        """``score`` with opponents: ``matches`` matches in each seat (see ``score``)."""
        against: str | torch.Tensor
        if isinstance(self._opponents, torch.Tensor) or self._opponents == "team":
            against = self._opponents
        else:
            against = (vector if self._reference is None else self._reference)[None]
        device = self._device or "cpu"
        result = evaluate(
            self._policy,
            self._env_for(1),
            vector[None].to(device),
            seed=seed,
            num_workers=self._options.num_workers,
            executor=self._executor,
            obs_norm=None if self.obs_norm is None else copy.deepcopy(self.obs_norm),
            randomize=self._options.randomize,
            opponents=against if isinstance(against, str) else against.to(device),
            matches=matches,
        )
        return float(result.mean_return[0])

    def save_solution(self, solution: Solution | torch.Tensor | Iterable[float], fname: str | Path) -> None:
        """Pickle the solution, its policy (``to_policy``), the observation statistics and the counts to
        ``fname``, with the keys VecGymNE's ``save_solution`` writes."""
        vector = _vector_of(solution)
        saved: dict[str, Any] = {
            "solution": vector,
            "policy": self.to_policy(vector),
            "interaction_count": self._interaction_count,
            "episode_count": self._episode_count,
            "time": datetime.now(),
            "env": self._env_name,
            "architecture": self.network_string,
        }
        if self.obs_norm is not None and self.obs_norm.count:
            saved["obs_mean"], saved["obs_stdev"] = self.obs_norm.mean, self.obs_norm.std
            saved["obs_norm"] = self.obs_norm.state_dict()
        with open(fname, "wb") as file:
            pickle.dump(saved, file)


class ClipActions(nn.Module):
    """A network whose (first) output is clipped to ``[low, high]``."""

    low: torch.Tensor
    high: torch.Tensor

    def __init__(self, net: nn.Module, low: torch.Tensor, high: torch.Tensor) -> None:
        super().__init__()
        self.net = net
        self.register_buffer("low", low)
        self.register_buffer("high", high)

    def forward(self, x: torch.Tensor, *args: Any) -> Any:
        result = self.net(x, *args)
        if isinstance(result, tuple):  # a recurrent network: (output, state)
            return (self._clip(result[0]), *result[1:])
        return self._clip(result)

    def _clip(self, y: torch.Tensor) -> torch.Tensor:
        return torch.maximum(torch.minimum(y, self.high.to(y)), self.low.to(y))


def _checked_opponent_kind(opponents: Any) -> str | torch.Tensor | None:
    """``opponents`` if it is None, a name of ``OPPONENT_KINDS`` or a tensor (checked against the policy once
    it is made); else a ValueError or TypeError naming them."""
    if opponents is None or isinstance(opponents, torch.Tensor):
        return opponents
    if isinstance(opponents, str) and opponents in OPPONENT_KINDS:
        return opponents
    raise (ValueError if isinstance(opponents, str) else TypeError)(
        f"opponents must be None, {', '.join(map(repr, OPPONENT_KINDS))} or a tensor of opponents' parameters,"
        f" got {opponents!r}."
    )


def _checked_objectives(objectives: Any, measures: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``objectives`` as ``((name, "max" or "min"), ...)``, each name ``"return"`` or one of ``measures``;
    ``(("return", "max"),)`` for None. A ValueError names the first that does not fit."""
    if objectives is None:
        return (("return", "max"),)
    usage = (
        'objectives must be a list of (name, "max" or "min") pairs, each name "return" or one of the measures'
        f" ({', '.join(map(repr, measures)) or 'none given: pass measures={...}'})"
    )
    if isinstance(objectives, (str, bytes)) or not isinstance(objectives, Sequence) or not objectives:
        raise ValueError(f"{usage}; got {objectives!r}.")
    checked = []
    for item in objectives:
        if not (isinstance(item, Sequence) and not isinstance(item, str) and len(item) == 2):
            raise ValueError(f"{usage}; got {item!r} among them.")
        name, sense = item
        if name != "return" and name not in measures:
            raise ValueError(f"{usage}; got {name!r}, which is neither.")
        if sense not in ("max", "min"):
            raise ValueError(f"{usage}; got {sense!r} for {name!r}.")
        checked.append((str(name), str(sense)))
    if len({name for name, _ in checked}) < len(checked):
        raise ValueError(f"{usage}; got a name twice in {objectives!r}.")
    return tuple(checked)


def _checked_env_config(env_config: Any) -> dict[str, Any]:
    """``env_config`` as a dict of keyword arguments for ``vecrl.make_vector_env``; a clear error for what is
    not a mapping of names, or names the keywords VecrlNE sets itself."""
    if env_config is None:
        return {}
    if not isinstance(env_config, Mapping) or not all(isinstance(key, str) for key in env_config):
        raise TypeError(
            f"env_config must be a dict of keyword arguments for vecrl.make_vector_env (such as"
            f" {{'max_episode_steps': 500}}), got {env_config!r}."
        )
    own = sorted(set(env_config) & {"num_envs", "num_episodes"})
    if own:
        raise ValueError(
            f"env_config holds {', '.join(own)}, which VecrlNE sets itself: pass"
            f" {', '.join(f'VecrlNE(..., {key}=...)' for key in own)} instead."
        )
    return dict(env_config)


def _check_initial_bounds(bounds: Any) -> None:
    """A ValueError unless ``bounds`` is ``(low, high)``: finite numbers, ``low <= high`` (EvoTorch's
    ``initial_bounds`` also takes per-variable sequences, which VecrlNE leaves to it)."""
    if isinstance(bounds, Sequence) and not isinstance(bounds, str) and len(bounds) == 2:
        low, high = bounds
        if not all(isinstance(v, Real) and not isinstance(v, bool) for v in (low, high)):
            return  # per-variable bounds: EvoTorch's to check
        if math.isfinite(low) and math.isfinite(high) and low <= high:
            return
    raise ValueError(
        f"initial_bounds must be (low, high), the range the first solutions are drawn from (finite numbers,"
        f" low <= high), got {bounds!r}."
    )


def _vector_of(solution: Any) -> torch.Tensor:
    if isinstance(solution, Solution):
        return solution.values.as_subclass(torch.Tensor).detach().clone().cpu()
    if isinstance(solution, torch.Tensor):
        return solution.as_subclass(torch.Tensor).detach().cpu()
    return torch.as_tensor(list(solution), dtype=torch.float32)


#: evaluate's options that VecrlNE takes in VecGymNE's words (not as ``**options``).
_OWN_WORDS = {"obs_norm": "observation_normalization=True"}


def _evaluate_options(extra: Mapping[str, Any], **named: Any) -> EvaluateOptions:
    """evaluate's options of a ``VecrlNE``: those it names as VecGymNE does, and ``extra``, any other field of
    ``EvaluateOptions`` (``fused``, ``steps_per_check``, ...); a TypeError names a keyword that is neither."""
    fields = {f.name for f in dataclasses.fields(EvaluateOptions) if f.init}
    for name in extra:
        if name in _OWN_WORDS:
            raise TypeError(f"VecrlNE takes {name} as {_OWN_WORDS[name]}: give it so.")
        if name not in fields:
            raise TypeError(
                f"VecrlNE got an unexpected keyword argument {name!r}: it takes VecGymNE's keywords and"
                f" evaluate's options ({', '.join(sorted(fields - set(_OWN_WORDS)))})."
            )
    return EvaluateOptions(**named, **extra)
