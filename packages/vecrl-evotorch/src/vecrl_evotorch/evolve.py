"""What ``vecrl evolve`` does once its arguments are parsed (``vecrl_evotorch.cli``): a whole EvoTorch run on
``VecrlNE``, its folder written every generation (``vecrl_evotorch.runs``), resumable after Ctrl-C, a crash or
SIGKILL with the same result as a run never stopped.

Each generation: the searcher steps (one ``evaluate`` call for the population), the center is scored on
fresh episodes (``VecrlNE.score``: the policy as ``to_policy`` gives it, no shaping), and the folder gets the
state (searcher, random generators, histories, champion), the results table, the champion (the center of
best score so far, as ``VecrlNE.save_solution`` writes it) and, at the end, the plot. The pieces are
importable: ``Evolution`` runs generations for a script with its own loop.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from vecrl.command import CommandError, checked_device_option, first_line
from vecrl.interrupts import raise_if_ctrl_c_pressed
from vecrl.randomize import scale
from vecrl_evaluate.command_options import evaluate_options
from vecrl_evaluate.fused import compile_seconds
from vecrl_evotorch import archive
from vecrl_evotorch.problem import VecrlNE
from vecrl_evotorch.run_log import RunLogger, close_loggers, open_loggers, remove_logs, status_scalars
from vecrl_evotorch.run_settings import (
    CHAMPION,
    EVOLVE_FILES,
    SEARCHER_KNOBS,
    against_first_center,
    center_column,
    fixed_settings,
)
from vecrl_evotorch.runs import SETTINGS, STATE, RunError, RunFolder

#: The history's curves of the population's shaped fitness, which a shaped run records beside its returns.
FITNESS = ("mean_fitness", "best_fitness")
#: How the user starts ``vecrl evolve``, where it is not by that name (``nox -s demo``'s venv is not on the
#: user's PATH): the line after Ctrl-C says how to go on in that form.
EVOLVE_COMMAND_ENV = "VECRL_EVOLVE_COMMAND"
#: The history's curves of a MAP-Elites run's archive: the share of its cells filled, and its QD-score.
ARCHIVE = ("coverage", "qd_score")
#: Fresh episodes the center is scored on each generation.
CENTER_EPISODES = 4


#: The smallest population each searcher can rank and update from (CMA-ES and CEM weigh the better half;
#: PGPE samples in symmetric pairs).
MIN_POPSIZE = {"cmaes": 2, "cem": 2, "pgpe": 2}
#: The copies of the population (as float32) a generation holds at once: the samples, their noise, the
#: searcher's own working copies and the evaluated rows.
POPULATION_COPIES = 4


def shaped(settings: Mapping[str, Any]) -> bool:
    """Whether the searcher of a run of ``settings`` ranks a shaped fitness (``--decrease-rewards-by``,
    ``--alive-bonus-schedule``) rather than the env's own return."""
    return settings["decrease_rewards_by"] is not None or settings["alive_bonus_schedule"] is not None


def map_elites(settings: Mapping[str, Any]) -> bool:
    """Whether a run of ``settings`` fills a MAP-Elites archive (it has no center: its best elite stands for one)."""
    return settings["algorithm"] == "map-elites"


def check_population_fits(popsize: int, solution_length: int, *, grid: bool = False) -> None:
    """A ValueError naming the memory a population of ``popsize`` solutions of ``solution_length`` numbers
    needs, where this machine has less available: before the searcher allocates it. With ``grid``, the
    population is a MAP-Elites archive of ``popsize`` cells, which EvoTorch's ``MAPElites`` fills by
    comparing every candidate (parents and children) with every cell at once, over their parameters.

    Examples:
        >>> check_population_fits(64, 100)
    """
    from vecrl.checks import available_memory

    per_row = 4 * solution_length * (2 * popsize if grid else POPULATION_COPIES)
    needed, available = per_row * popsize, available_memory()
    if available is None or needed <= available:
        return
    gib = f"need about {needed / 2**30:,.1f} GiB, and this machine has {available / 2**30:,.1f} GiB available"
    if grid:
        most = math.isqrt(available // (8 * solution_length))
        raise ValueError(
            f"--measure: MAP-Elites over a grid of {popsize:,} cells with solutions of {solution_length:,}"
            f" parameters would {gib}; give fewer BINS (a grid of at most about {most:,} cells)"
        )
    raise ValueError(
        f"--popsize {popsize}: {popsize:,} solutions of {solution_length:,} parameters {gib}; give a"
        f" smaller --popsize (at most about {available // per_row:,})"
    )


def make_searcher(
    problem: VecrlNE,
    algorithm: str,
    popsize: int,
    stdev_init: float,
    measures: Any = None,
    knobs: Mapping[str, Any] | None = None,
) -> Any:
    """EvoTorch's ``algorithm`` on ``problem``, with the settings EvoTorch's own examples use (PGPE: ClipUp and
    centered ranking; MAP-Elites: a Gaussian mutation of ``stdev_init`` over the grid of ``measures``), but
    for the ``knobs`` given (``vecrl_evotorch.run_settings.SEARCHER_KNOBS``' settings; None: that default)."""
    knobs = {key: value for key, value in (knobs or {}).items() if value is not None}
    from evotorch.algorithms import CEM, CMAES, PGPE, SNES

    if algorithm == "map-elites":
        return archive.make_map_elites(problem, measures, stdev_init)
    least = MIN_POPSIZE.get(algorithm, 1)
    if popsize < least:
        raise ValueError(f"--popsize {popsize}: {algorithm} needs a population of at least {least}")
    if algorithm == "pgpe":
        return PGPE(
            problem,
            popsize=popsize,
            center_learning_rate=knobs.get("center_learning_rate", 0.075),
            stdev_learning_rate=knobs.get("stdev_learning_rate", 0.1),
            stdev_init=stdev_init,
            optimizer="clipup",
            optimizer_config={"max_speed": knobs.get("max_speed", 0.15)},
            ranking_method=knobs.get("ranking_method", "centered"),
        )
    if algorithm == "snes":
        given = ("center_learning_rate", "stdev_learning_rate", "ranking_method")
        return SNES(
            problem,
            popsize=popsize,
            stdev_init=stdev_init,
            **{key: knobs[key] for key in given if key in knobs},
        )
    if algorithm == "cem":
        parents = knobs.get("parenthood_ratio", 0.5)
        return CEM(problem, popsize=popsize, parenthood_ratio=parents, stdev_init=stdev_init)
    if algorithm == "cmaes":
        return CMAES(problem, popsize=popsize, stdev_init=stdev_init)
    raise ValueError(f"unknown algorithm {algorithm!r}: expected one of pgpe, snes, cem, cmaes, map-elites")


class Evolution:
    """A run's searcher, histories and champion, advanced one generation at a time and saved in its folder.

    Examples:
        >>> import tempfile
        >>> from vecrl_evotorch.run_settings import DEFAULTS
        >>> settings = {**DEFAULTS, "env": "gym::CartPole-v1", "popsize": 8, "generations": 1}
        >>> run = Evolution.start(settings, RunFolder.create(tempfile.mkdtemp(), settings))  # doctest: +SKIP
        >>> run.step(); run.generation  # doctest: +SKIP
        1
    """

    def __init__(self, folder: RunFolder, settings: Mapping[str, Any], state: dict[str, Any]) -> None:
        self.folder, self.settings, self.state = folder, dict(settings), state
        #: The last generation whose state is on disk (an interrupted save leaves the one before).
        self.saved_generation = int(state["generation"])
        self.searcher: Any = state["searcher"]
        self.problem: VecrlNE = self.searcher.problem
        #: Where each generation's row goes too (``vecrl_evotorch.run_log``: ``vecrl evolve --log``).
        self.loggers: Sequence[RunLogger] = ()

    @classmethod
    def start(cls, settings: Mapping[str, Any], folder: RunFolder, executor: Any = None) -> Evolution:
        """A new run of ``settings`` (seeded: the same settings give the same run) in ``folder``."""
        seed = settings["seed"]
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)
        problem = VecrlNE(
            settings["env"],
            settings["policy"],
            num_envs=settings["num_envs"],
            observation_normalization=settings["obs_norm"],
            randomize=None if not settings["randomize"] else scale(dict(settings["randomize"])),
            num_workers=None if settings["ray"] is not None else settings["workers"],  # (with Ray: actors)
            executor=executor,
            measures=archive.measures_of(settings["measures"]) if settings["measures"] else None,
            device=settings.get("device"),
            opponents=settings["opponents"],
            matches=settings["matches"],
            **evaluate_options(settings),  # (the seed among them)
        )
        popsize = archive.cells(settings["measures"]) if map_elites(settings) else settings["popsize"]
        check_population_fits(popsize, problem.solution_length, grid=map_elites(settings))
        knobs = {key: settings.get(key) for key in SEARCHER_KNOBS}
        searcher = make_searcher(
            problem, settings["algorithm"], popsize, settings["stdev_init"], settings["measures"], knobs
        )
        history: dict[str, list[float]] = {
            "mean": [],
            "best": [],
            "center": [],
            **{name: [] for name in FITNESS if shaped(settings)},
            **{name: [] for name in ARCHIVE if map_elites(settings)},
            "env_steps": [],
            "seconds": [],
        }
        state = {"searcher": searcher, "generation": 0, "history": history, "champion": None}
        return cls(folder, settings, state)

    @classmethod
    def resume(
        cls,
        folder: RunFolder,
        settings: Mapping[str, Any],
        executor: Any = None,
        state: dict[str, Any] | None = None,
    ) -> Evolution:
        """The run saved in ``folder`` (its ``state``, where already loaded), its random generators as they were
        after its last saved generation."""
        state = checked_state(folder, settings, folder.load_state() if state is None else state)
        try:
            torch.set_rng_state(state["rng"]["torch"])
            np.random.set_state(state["rng"]["numpy"])
            random.setstate(state["rng"]["python"])
        except (TypeError, ValueError, KeyError, RuntimeError) as error:
            raise RunError(
                f"{folder.path / STATE}'s random generator states are damaged ({first_line(error)}): the run"
                " cannot go on as it would have; start it again with --overwrite."
            ) from error
        history = state["history"]
        if (
            shaped(settings) and "mean_fitness" not in history
        ):  # saved when "mean" and "best" were the fitness
            history["mean_fitness"], history["best_fitness"] = history["mean"], history["best"]
            history["mean"] = history["best"] = [math.nan] * len(history["center"])
        run = cls(folder, settings, state)
        if executor is not None:  # an executor does not pickle: the resumed problem takes this one
            run.problem.with_executor(executor)
        return run

    @property
    def generation(self) -> int:
        return int(self.state["generation"])

    @property
    def history(self) -> dict[str, list[float]]:
        return self.state["history"]

    def center(self) -> torch.Tensor:
        """The search distribution's center (every searcher of ``make_searcher`` but MAP-Elites reports one), as
        a plain tensor; MAP-Elites' best elite."""
        if map_elites(self.settings):
            elite = archive.best_elite(self.searcher)
            assert (
                elite is not None
            )  # (a step fills a cell: every solution falls in one, the outer ones open)
            return elite
        return torch.as_tensor(self.searcher.status["center"]).detach().clone().as_subclass(torch.Tensor)

    def finished(self) -> bool:
        """Whether the run has reached ``generations`` or its center scored ``until``."""
        limit, target = self.settings["generations"], self.settings["until"]
        if limit is not None and self.generation >= limit:
            return True
        scores = self.history["center"]
        return target is not None and bool(scores) and scores[-1] >= target

    def step(self) -> None:
        """One generation: the searcher's step, the center scored, everything saved."""
        start, compiled_before = time.perf_counter(), compile_seconds()
        steps_before = self.problem.interaction_count
        generation = self.generation + 1
        with self.problem.progress_to(_WithinGeneration(generation, start)):
            self.searcher.step()
        center = self.center()
        seed = (self.settings["seed"] + 2**31 + generation) % 2**32
        score = self.problem.score(center, num_episodes=CENTER_EPISODES, seed=seed)
        status = self.searcher.status
        history = self.history
        history["mean"].append(float(status["mean_raw_return"]))
        # MAP-Elites' best is its archive's best elite (archive.csv's), not the best of its last evaluation:
        # the archive's fitness, which is the return where nothing shapes it
        elite = archive.best_fitness(self.searcher) if "coverage" in history else None
        shaped_run = "mean_fitness" in history
        history["best"].append(float(status["pop_best_raw_return"]) if elite is None or shaped_run else elite)
        if shaped_run:
            history["mean_fitness"].append(float(status["mean_eval"]))
            history["best_fitness"].append(float(status["pop_best_eval"]) if elite is None else elite)
        history["center"].append(score)
        history["env_steps"].append(float(self.problem.interaction_count - steps_before))
        if "coverage" in history:
            coverage, qd_score = archive.coverage_and_qd_score(self.searcher)
            history["coverage"].append(coverage)
            history["qd_score"].append(qd_score)
        # (a jax engine's compile, said as it happens, is left out of the generation's time and the rates)
        history["seconds"].append(time.perf_counter() - start - (compile_seconds() - compiled_before))
        champion = self.state["champion"]
        if champion is None or score > champion[0]:
            self.state["champion"] = (score, center)
            self._save_champion(center)
        self.state["generation"] = generation
        # logged before it is saved: a run stopped between the two runs this generation again, and the loggers
        # that can replace what they logged after the last saved generation do (the others log it twice)
        for logger in self.loggers:
            logger.generation(generation, self.logged_row())
        self.save()

    def save(self) -> None:
        """The state (with the settings it was made for, checked when it is resumed), then the results table
        made from it (so the table never runs ahead of the state)."""
        self.state["settings"] = fixed_settings(self.settings)
        self.state["rng"] = {
            "torch": torch.get_rng_state(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
        }
        self.folder.save_state(self.state)
        self.saved_generation = self.generation
        self.folder.write_results(self.results())
        if "coverage" in self.history:
            archive.save_archive(self.folder, self.searcher, self.settings["measures"], self._title())

    def results(self) -> dict[str, list[float]]:
        """The results table (results.csv): a column per curve, a row per generation."""
        history = self.history
        return {
            "mean_return": history["mean"],
            "best_return": history["best"],
            center_column(self.settings): history["center"],
            **{name: history[name] for name in FITNESS if name in history},
            **{name: history[name] for name in ARCHIVE if name in history},
            "env_steps": [int(steps) for steps in history["env_steps"]],
            "seconds": [round(seconds, 3) for seconds in history["seconds"]],
        }

    def logged_row(self) -> dict[str, float]:
        """The last generation's row of the results table, with the searcher's status beside it: what
        ``--log`` sends."""
        return {
            **{name: float(column[-1]) for name, column in self.results().items()},
            **status_scalars(self.searcher.status),
        }

    def _title(self) -> str:
        return f"{self.settings['algorithm'].upper()} on {self.settings['env']} with vecrl"

    def save_plot(self) -> Path | None:
        history = self.history
        curves = {"population mean": history["mean"], "best of population": history["best"]}
        center = "center against the first center" if against_first_center(self.settings) else "center"
        curves[("best elite" if "coverage" in history else center) + ", fresh episodes"] = history["center"]
        if "mean_fitness" in history:
            curves["population mean, shaped fitness"] = history["mean_fitness"]
            curves["best of population, shaped fitness"] = history["best_fitness"]
        return self.folder.save_plot(curves, self._title(), self.settings["until"])

    def progress(self) -> str:
        """The last generation's line: returns, speed and (with a generation limit) the time left."""
        history, generation = self.history, self.generation
        rate = history["env_steps"][-1] / max(history["seconds"][-1], 1e-9)
        line = f"gen {generation:4d}  mean {history['mean'][-1]:8.1f}  best {history['best'][-1]:8.1f}"
        if "coverage" in history:
            line += (
                f"  elite {history['center'][-1]:8.1f}  coverage {history['coverage'][-1]:6.1%}"
                f"  qd-score {history['qd_score'][-1]:10.1f}"
            )
        else:
            line += f"  {'vs first' if against_first_center(self.settings) else 'center'} {history['center'][-1]:8.1f}"
        line += f"  {rate:10,.0f} env-steps/s"
        limit = self.settings["generations"]
        if limit is not None:
            # in env-steps: the last generation's, at the recent speed (as episodes lengthen, a generation's
            # seconds grow with its env-steps, not with the mean of the generations before)
            recent_rate = sum(history["env_steps"][-10:]) / max(sum(history["seconds"][-10:]), 1e-9)
            left = _duration((limit - generation) * history["env_steps"][-1] / max(recent_rate, 1e-9))
            # an estimate, not a bound; with --until the run may stop sooner than the last generation
            line += f"  ~{left} left" if self.settings["until"] is None else f"  ~{left} to gen {limit}"
        return line

    def _save_champion(self, center: torch.Tensor) -> None:
        path = self.folder.path / CHAMPION
        partial = path.with_name(path.name + ".partial")
        self.problem.save_solution(center, partial)
        os.replace(partial, path)


def run_command(args: argparse.Namespace, settings: dict[str, Any], folder: RunFolder | None) -> int:
    """``vecrl evolve`` with the parsed ``args`` and the run's ``settings`` (``vecrl_evotorch.run_settings``'s),
    in ``folder`` (held) when it resumes one; its exit status. Every mistake is a CommandError before any
    generation runs."""
    logging.getLogger("evotorch").setLevel(logging.WARNING)  # its INFO lines on every problem made
    checked_device_option(settings.get("device"))  # (before the folder is made)
    state = None if folder is None else _resumed_state(args, folder, settings)
    executor = _executor(settings)
    try:
        if folder is None:
            try:
                run = Evolution.start(settings, RunFolder(args.out), executor)
            except (ValueError, TypeError, ImportError, LookupError, NotImplementedError) as error:
                raise CommandError(f"cannot start the run: {first_line(error)}") from error
            settings["policy"] = run.problem.network_string
            run.folder = folder = _created(args.out, settings, args.overwrite)
            run.settings = settings
            print(f"vecrl evolve: the run's files go to {run.folder.path}", file=sys.stderr, flush=True)
        else:
            try:
                run = Evolution.resume(folder, settings, executor, state)
            except RunError as error:
                raise CommandError(f"--resume: {error}") from error
            print(f"vecrl evolve: resumed {folder.path} after generation {run.generation}", flush=True)
        loggers: list[RunLogger] = []
        try:
            run.loggers = loggers = _loggers(run)
            _evolve(run, loggers)
        except (ValueError, TypeError) as error:
            if run.saved_generation > 0:
                raise
            # (a setting the first generation refuses, such as a measure's info key: nothing to keep)
            close_loggers(loggers)
            loggers = []
            remove_logs(run.folder.path)
            run.folder.discard()
            raise CommandError(f"generation 1 failed: {first_line(error)}") from error
        finally:
            try:
                close_loggers(loggers)
            finally:
                run.problem.close()
    finally:
        if executor is not None:
            executor.close()
        if folder is not None:
            folder.release()
    return 0


def _loggers(run: Evolution) -> list[RunLogger]:
    """``--log``'s loggers of ``run``, a CommandError (before any generation) where one cannot start."""
    names = run.settings.get("log") or []
    try:
        return open_loggers(
            names, run.folder.path, run.settings, run.state.setdefault("log_ids", {}), run.saved_generation
        )
    except RuntimeError as error:  # (open_loggers' line, naming the backend and where it logs)
        if run.saved_generation == 0:
            remove_logs(run.folder.path)
            run.folder.discard()
        raise CommandError(str(error)) from error


def _evolve(run: Evolution, loggers: Sequence[RunLogger] = ()) -> None:
    every = run.settings["video_every"]
    try:
        while not run.finished():
            run.step()
            print(run.progress(), flush=True)
            raise_if_ctrl_c_pressed()
            if every and run.generation % every == 0:
                _record_champion(run, f"videos/generation-{run.generation}.mp4", loggers)
    except KeyboardInterrupt:
        saved = run.saved_generation
        done = {0: "no generation was saved", 1: "generation 1 is saved"}.get(
            saved, f"generations 1-{saved} are saved"
        )
        command = os.environ.get(EVOLVE_COMMAND_ENV, "vecrl evolve")
        raise KeyboardInterrupt(f"after {done}: {command} --resume {run.folder.path} goes on") from None
    center = run.history["center"]
    target = run.settings["until"]
    if target is not None and center and center[-1] >= target:
        print(f"reached {target:g}: the center scored {center[-1]:.1f} at generation {run.generation}")
    elif target is not None and center:
        best = max(range(len(center)), key=center.__getitem__)
        print(
            f"did not reach --until {target:g} in {run.generation} generation{'s' * (run.generation > 1)}: the"
            f" center's best score was"
            f" {center[best]:.1f}, at generation {best + 1} (--resume {run.folder.path} --generations N goes on)"
        )
    plot = run.save_plot()
    if plot is not None:
        print(f"plot saved to {plot}")
    print(
        f"champion ({'the best elite' if map_elites(run.settings) else 'center of best score'},"
        f" {run.state['champion'][0]:.1f}) saved to {run.folder.path / CHAMPION}"
    )
    for logger in loggers:
        for path in (plot, run.folder.path / CHAMPION):
            if path is not None:
                logger.file(path)
    if run.settings["video"]:
        _record_champion(run, "champion.mp4", loggers)


def _record_champion(run: Evolution, name: str, loggers: Sequence[RunLogger] = ()) -> None:
    from vecrl_evotorch.record import RecordError, record_video

    path = run.folder.path / name
    path.parent.mkdir(exist_ok=True)
    # (said before and timed: a video takes minutes on some engines, outside the generations' seconds)
    print(f"recording the champion's video to {path} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    try:
        recording = record_video(run.settings["env"], run.problem.to_policy(run.state["champion"][1]), path)
    except RecordError as error:
        print(f"vecrl evolve: no video: {error}", file=sys.stderr)
        return
    took = time.perf_counter() - start
    print(f"video of the champion ({recording}) saved to {path} in {_duration(took)}")
    for logger in loggers:
        logger.file(path)


def _created(out: str, settings: Mapping[str, Any], overwrite: bool) -> RunFolder:
    try:
        return RunFolder.create(out, settings, overwrite=overwrite, also=EVOLVE_FILES)
    except RunError as error:
        raise CommandError(str(error)) from error


def _resumed_state(
    args: argparse.Namespace, folder: RunFolder, settings: Mapping[str, Any]
) -> dict[str, Any]:
    """The state of the run in ``folder``, checked to be its own and to have generations left."""
    try:
        state = folder.load_state()
    except RunError as error:
        raise CommandError(f"--resume: {error}") from error
    if (
        settings["until"] is None
        and settings["generations"] is not None
        and settings["generations"] <= int(state.get("generation", 0))
    ):
        raise CommandError(
            f"--resume {args.resume}: the run already has its {settings['generations']} generations; give"
            " --generations N (more) to go on"
        )
    try:
        return checked_state(folder, folder.settings(), state)
    except RunError as error:
        raise CommandError(f"--resume: {error}") from error


def checked_state(folder: RunFolder, settings: Mapping[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """``state`` if it is a ``vecrl evolve`` state made for the run of ``settings`` (its ``settings.json``); a
    ``RunError`` saying what is wrong otherwise, before anything is written."""
    where = folder.path / STATE
    if "env" not in settings:
        raise RunError(
            f"{folder.path / SETTINGS} holds no settings of vecrl evolve (no env): the folder was not written by"
            " vecrl evolve, or was changed by hand; start a run with --out."
        )
    searcher = state.get("searcher")
    problem = getattr(searcher, "problem", None)
    if not isinstance(problem, VecrlNE) or not isinstance(state.get("history"), dict) or "rng" not in state:
        raise RunError(
            f"{where} is no state of vecrl evolve (a searcher on a VecrlNE, its histories and random generator"
            " states), e.g. one written by a script of your own: resume it with that script."
        )
    made_for = state.get("settings", {"env": getattr(problem, "_env_name", None)})
    kept = fixed_settings(settings)
    differing = [
        f"{key} {value!r} in the state, {kept[key]!r} in settings.json"
        for key, value in made_for.items()
        if key in kept and value != kept[key]
    ]
    if differing:
        raise RunError(
            f"{where} belongs to another run than {folder.path / SETTINGS} ({'; '.join(differing)}): it was"
            " copied or moved here. Put the run's own state back, or start a new run with --out."
        )
    return state


def _executor(settings: Mapping[str, Any]) -> Any:
    if settings["ray"] is None:
        return None
    from vecrl_evaluate.command_options import ray_executor

    return ray_executor(settings["ray"] or None, settings["workers"])


#: The seconds between the lines said within a long generation.
WITHIN_GENERATION_EVERY = 30.0


class _WithinGeneration:
    """The line within a long generation: the rows done so far, every ``WITHIN_GENERATION_EVERY`` seconds
    (on stderr: the generations' own lines are stdout's)."""

    def __init__(self, generation: int, start: float) -> None:
        self.generation, self.start, self.said = generation, start, start

    def __call__(self, done: int, rows: int) -> None:
        now = time.perf_counter()
        if now - self.said >= WITHIN_GENERATION_EVERY:
            self.said = now
            print(
                f"  ... generation {self.generation}: {done:,} of {rows:,} solutions evaluated,"
                f" {_duration(now - self.start)} so far",
                file=sys.stderr,
                flush=True,
            )


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"
