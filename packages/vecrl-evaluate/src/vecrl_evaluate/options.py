"""What an ``evaluate`` call is asked to do, as one value: ``EvaluateOptions``, made once by
``evaluate``, ``VecrlNE`` and the ``vecrl`` commands and read by the plan (``vecrl_evaluate.plan``) and
both drivers of the rollout (``vecrl_evaluate.row_loop``, ``vecrl_evaluate.fused``), which read it through
what the plan derives for every row: ``RowSettings`` (its ``options``).

An option is one field here, written with ``option(default, check=..., flag=...)``: its value, its check,
and (with a ``Flag``) how the ``vecrl`` commands take it and what a run's ``settings.json`` calls it. The
commands' parsers (``vecrl_evaluate.command_options``), ``vecrl evolve``'s settings and ``VecrlNE``'s keywords
are made from these fields; the rule that uses an option reads ``options.NAME``. ``evaluate``'s keywords
are written out for its signature (a test holds them equal to the fields).

This module imports no torch: the commands read the flags from it before anything heavy is imported.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import TYPE_CHECKING, Any, cast

from vecrl.checks import checked_flag, checked_seed
from vecrl.command import finite_float, finite_positive_float, positive_int, seed_int

if TYPE_CHECKING:
    from vecrl.randomize import Sampler
    from vecrl_evaluate.executor import Executor
    from vecrl_evaluate.measures import Measure, Measures
    from vecrl_evaluate.shaping import Shaping
    from vecrl_policy.normalization import Normalize, ObsNorm
    from vecrl_policy.observations import Flattener

#: Sub-envs made where a command or ``VecrlNE`` is given no ``num_envs``, on an engine that steps sub-envs
#: one by one (a host engine): the population size, at most this.
MAX_DEFAULT_NUM_ENVS = 256


def default_num_envs(popsize: int, cap: int | None = None, *, env_name: str | None = None) -> int:
    """The sub-envs that run a population of ``popsize`` rows where no ``num_envs`` is given: one a row, at
    most ``cap`` (default ``MAX_DEFAULT_NUM_ENVS``), since more rows than that refill freed sub-envs; every
    row at once where ``env_name``'s backend steps its sub-envs as one program (``vecrl.Backend``'s
    ``whole_population``: the jax engines), unless a ``cap`` is given.

    Examples:
        >>> default_num_envs(64), default_num_envs(1000), default_num_envs(1000, env_name="gym::CartPole-v1")
        (64, 256, 256)
    """
    if cap is None and env_name is not None and _whole_population(env_name):
        return popsize
    return min(popsize, cap or MAX_DEFAULT_NUM_ENVS)


def _whole_population(env_name: str) -> bool:
    from vecrl.env_names import split_env_name
    from vecrl.registry import get_backend

    try:
        return get_backend(split_env_name(env_name)[0]).whole_population
    except (LookupError, ValueError, ImportError, TypeError):  # (the env's own making says what is wrong)
        return False


class _TheFields:
    def __repr__(self) -> str:
        return "the field's default"


#: A ``Flag``'s default where the commands take the field's own.
THE_FIELDS = _TheFields()


@dataclass(frozen=True)
class Flag:
    """How the ``vecrl`` commands take an option: ``name`` (``--episodes``) with argparse's ``keywords``
    (``type``, ``action``, ``metavar``) and ``help``; ``default`` where the commands' differs from the API's
    (``--seed`` 0); ``from_setting`` makes the option's value of what a run's settings hold (JSON: a list for
    a tuple). A run's settings name it ``setting``: the flag without its dashes (``--action-noise``:
    ``action_noise``)."""

    name: str
    help: str
    keywords: Mapping[str, Any] = field(default_factory=dict)
    default: Any = THE_FIELDS
    from_setting: Callable[[Any], Any] | None = None

    @property
    def setting(self) -> str:
        return setting_name(self.name)


def setting_name(flag: str) -> str:
    """What a run's settings call the option of ``flag``: the flag without its dashes, ``_`` for ``-``.

    Examples:
        >>> setting_name("--action-noise")
        'action_noise'
    """
    return flag.removeprefix("--").replace("-", "_")


def option(default: Any, *, check: Callable[[Any, str], Any] | None = None, flag: Flag | None = None) -> Any:
    """A field of ``EvaluateOptions``: its ``default``, its ``check`` (``check(value, name)`` returns the
    value to keep or raises a TypeError or ValueError saying what was expected) and the commands' ``flag``.

    Examples:
        >>> [f.name for f in dataclasses.fields(EvaluateOptions) if "flag" in f.metadata][:2]
        ['num_episodes', 'seed']
    """
    metadata = {"check": check} if flag is None else {"check": check, "flag": flag}
    return field(default=default, metadata=metadata)


def flagged_options() -> Iterator[tuple[dataclasses.Field[Any], Flag]]:
    """The fields of ``EvaluateOptions`` the commands take, each with its ``Flag``, in their order."""
    for option_field in dataclasses.fields(EvaluateOptions):
        if "flag" in option_field.metadata:
            yield option_field, option_field.metadata["flag"]


_INT32_MAX = 2**31 - 1


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}.")
    return int(value)


def _steps_per_check(value: Any, name: str) -> int | None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, Integral) or not 1 <= int(value) <= _INT32_MAX
    ):
        raise ValueError(
            f"{name} must be None (the platform's) or a positive int up to {_INT32_MAX:,} (env steps the fused"
            f" loop takes between two checks of whether rows are left, counted in int32), got {value!r}."
        )
    return None if value is None else int(value)


def _flag(value: Any, name: str) -> bool:
    return checked_flag(value, name)


def _optional_flag(value: Any, name: str) -> bool | None:
    return None if value is None else checked_flag(value, name)


def _seed(value: Any, name: str) -> int | None:
    return checked_seed(value)


def _executor(value: Any, name: str) -> Any:
    from vecrl_evaluate.executor import Executor

    if value is not None and not isinstance(value, Executor):
        raise TypeError(executor_error(value))
    return value


def _measures(value: Any, name: str) -> Measures | None:
    from vecrl_evaluate.measures import Measures

    return Measures.checked(value)


def _schedule_setting(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


def alive_bonus_schedule(text: str) -> list[float]:
    """argparse type: an alive-bonus schedule, ``T,B`` or ``T0,T1,B`` (steps, then the bonus)."""
    import argparse

    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in (2, 3) or any(value < 0 for value in values[:-1]):
        raise argparse.ArgumentTypeError(
            f"expected T,B or T0,T1,B (steps >= 0, then the bonus), got {text!r}"
        )
    return [int(value) for value in values[:-1]] + [values[-1]]


@dataclass(frozen=True)
class EvaluateOptions:
    """The options of one ``evaluate`` call (its keywords, with the same names and meaning), checked when
    made: a TypeError or ValueError names the first that does not fit. What depends on the env or the
    policy (``obs_norm``'s length, ``randomize``'s names, whether ``num_workers`` can make the env again) is
    checked by the plan, which sees them.

    Args:
        num_episodes: episodes per row.
        seed: the population's seed (None: fresh).
        num_workers: processes evaluating at once (not with ``executor``).
        executor: where parts of the population run (not with ``num_workers``).
        obs_norm: observation-normalization statistics, used and updated.
        decrease_rewards_by: subtracted from each reward.
        alive_bonus_schedule: ``(t, bonus)`` or ``(t0, t1, bonus)``.
        action_noise_stdev: Gaussian noise on continuous actions.
        fused: the fused jax program: True insists, False avoids, None picks.
        common_random_numbers: every row on row 0's seed.
        devices: the jax devices of the fused program.
        randomize: a ``vecrl.randomize`` sampler, or fixed params per row (name -> array).
        steps_per_check: the fused program's steps between checks.
        select_restarts: the fused program's restarts by selection.
        measures: name -> an info key, a function, a ``(source, per_episode)`` pair or a ``Measure``
            (kept as the ``Measures`` they are checked into).

    Raises:
        TypeError: an option of the wrong type (an executor that is none, a measure that is no source).
        ValueError: an option out of range, or ``num_workers`` with ``executor``.

    Examples:
        >>> options = EvaluateOptions(num_episodes=2, action_noise_stdev=0.1)
        >>> options.shaping.action_noise_stdev
        0.1
        >>> EvaluateOptions(num_episodes=0)
        Traceback (most recent call last):
        ...
        ValueError: num_episodes must be a positive int, got 0.
    """

    num_episodes: int = option(
        1, check=_positive_int, flag=Flag("--episodes", "episodes per row", {"type": positive_int})
    )
    seed: int | None = option(
        None,
        check=_seed,
        flag=Flag("--seed", "seed of the population, the search and the envs", {"type": seed_int}, default=0),
    )
    num_workers: int | None = None  # (checked by the plan: it depends on the env)
    executor: Executor | None = option(None, check=_executor)
    obs_norm: ObsNorm | None = None  # (checked by the plan: its length is the env's)
    decrease_rewards_by: float | None = option(
        None,
        flag=Flag(
            "--decrease-rewards-by", "subtract X from each reward", {"type": finite_float, "metavar": "X"}
        ),
    )
    alive_bonus_schedule: tuple[int, float] | tuple[int, int, float] | None = option(
        None,
        flag=Flag(
            "--alive-bonus-schedule",
            "add bonus B to each reward from step T on (ramped in from T0 to T1), as VecGymNE's",
            {"type": alive_bonus_schedule, "metavar": "T,B or T0,T1,B"},
            from_setting=_schedule_setting,
        ),
    )
    action_noise_stdev: float | None = option(
        None,
        flag=Flag(
            "--action-noise", "Gaussian action noise", {"type": finite_positive_float, "metavar": "STD"}
        ),
    )
    fused: bool | None = option(None, check=_optional_flag)
    common_random_numbers: bool = option(
        False,
        check=_flag,
        flag=Flag(
            "--common-random-numbers",
            "score every row from the same starts and noise, as evosax does",
            {"action": "store_true"},
        ),
    )
    devices: Sequence[Any] | None = option(None, check=lambda value, name: checked_devices(value))
    randomize: Sampler | Mapping[str, Any] | None = None  # (checked by the plan: the names are the env's)
    steps_per_check: int | None = option(None, check=_steps_per_check)
    select_restarts: bool | None = option(None, check=_optional_flag)
    measures: Mapping[str, str | Callable[..., Any] | tuple[Any, str] | Measure] | Measures | None = option(
        None, check=_measures
    )  # (kept as the Measures it is checked into)
    shaping: Shaping = field(init=False, repr=False, compare=False)
    """The reward shaping and action noise of the three options above, checked."""

    @property
    def checked_measures(self) -> Measures | None:
        """``measures`` as checked when made: a ``vecrl_evaluate.measures.Measures``, or None."""
        return cast("Measures | None", self.measures)

    def __post_init__(self) -> None:
        from vecrl_evaluate.shaping import Shaping

        if self.num_workers is not None and self.executor is not None:
            raise ValueError(
                f"Give num_workers={self.num_workers!r} or executor={self.executor!r}, not both: the executor says"
                " where the parts of the population run."
            )
        for name, check in _checks():  # (frozen: the checked values replace what was given)
            object.__setattr__(self, name, check(getattr(self, name), name))
        shaping = Shaping.checked(
            decrease_rewards_by=self.decrease_rewards_by,
            alive_bonus_schedule=self.alive_bonus_schedule,
            action_noise_stdev=self.action_noise_stdev,
        )
        object.__setattr__(self, "shaping", shaping)

    def for_rows(self) -> EvaluateOptions:
        """These options as every row of a call reads them (``RowSettings.options``): without what the plan
        has already turned into the rows' inputs or their runner (the seed and common random numbers, the
        executor, workers, statistics and params), so that the value travels to worker processes and Ray actors and keys compiled programs
        alike for every call of a run."""
        return self.settled(
            seed=None,
            common_random_numbers=False,  # (the plan gave every row row 0's seed)
            num_workers=None,
            executor=None,
            obs_norm=None,
            randomize=None,
        )

    def settled(self, **values: Any) -> EvaluateOptions:
        """A copy with ``values`` in place of these fields, which are not checked again: for values vecrl
        resolved itself (the defaults, a loop shape, devices), as every call of a generation's loop does
        (``dataclasses.replace`` would run every option's check once more). The user's values go through
        ``EvaluateOptions(...)`` or ``dataclasses.replace``.

        Examples:
            >>> EvaluateOptions(seed=3).settled(seed=None).seed is None
            True
        """
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **values)
        return copy


@functools.cache
def _checks() -> tuple[tuple[str, Callable[[Any, str], Any]], ...]:
    """Each option's name and check, in the fields' order."""
    return tuple(
        (option_field.name, option_field.metadata["check"])
        for option_field in dataclasses.fields(EvaluateOptions)
        if option_field.metadata.get("check") is not None
    )


@dataclass(frozen=True)
class RowSettings:
    """What every row of one ``evaluate`` call is run with, derived by the plan from the options, the env
    and the policy: the call's ``options`` (``EvaluateOptions.for_rows``: ``num_episodes`` each, the
    ``shaping``, ``fused``, ``devices``, ``steps_per_check``, ``select_restarts``, ``measures``, ...), argmax
    actions where ``discrete``, observations through ``flatten`` (then ``normalize``, if given); ``measures``
    checked against the env. Both drivers read it; it travels to worker processes and Ray actors."""

    options: EvaluateOptions
    discrete: bool
    flatten: Flattener
    normalize: Normalize | None

    @property
    def num_episodes(self) -> int:
        return self.options.num_episodes

    @property
    def shaping(self) -> Shaping:
        return self.options.shaping

    @property
    def measures(self) -> Measures | None:
        return self.options.checked_measures


def checked_devices(devices: Any) -> tuple[Any, ...] | None:
    """``devices`` as a tuple of jax devices of one platform (None stays None: every local device); a
    TypeError or ValueError otherwise."""
    if devices is None:
        return None
    if isinstance(devices, (str, bytes)) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices must be a list of jax devices (e.g. jax.local_devices()), got {devices!r}.")
    devices = tuple(devices)
    kinds = {getattr(device, "platform", None) for device in devices}
    if not devices or None in kinds or len(kinds) > 1:
        raise ValueError(
            f"devices must be a non-empty list of jax devices of one platform (e.g. jax.local_devices()), got"
            f" {list(devices)!r}."
        )
    if len(set(devices)) < len(devices):
        raise ValueError(f"devices names a device twice: {list(devices)!r}; name each once.")
    return devices


def executor_error(executor: Any) -> str:
    """The words for an ``executor=`` that is no ``vecrl_evaluate.executor.Executor``."""
    return (
        "executor must be a vecrl_evaluate Executor (with num_parts, run(evaluation, parts) and close()), such as"
        f" vecrl_ray.RayExecutor(num_actors=2); got {executor!r}."
    )
