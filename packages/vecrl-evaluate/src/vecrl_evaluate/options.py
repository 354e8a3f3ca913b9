"""What an ``evaluate`` call is asked to do, as one value: ``EvaluateOptions``, made once by
``evaluate``, ``VecrlNE`` and the ``vecrl`` commands and read by the plan (``vecrl_evaluate.plan``) and
both drivers of the rollout (``vecrl_evaluate.row_loop``, ``vecrl_evaluate.fused``), which read what the
plan derives from it for every row: ``RowSettings``.

An option lives in its field and check here, in ``evaluate``'s keyword of the same name (a test holds the two
lists equal) and in the rule that uses it (the plan, or a driver through a field of ``RowSettings``); the
commands' shared flags are ``vecrl_evaluate.command_options.SHARED_OPTIONS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

from vecrl.checks import checked_flag, checked_seed
from vecrl_evaluate.executor import Executor
from vecrl_evaluate.measures import Measures
from vecrl_evaluate.shaping import Shaping
from vecrl_policy.normalization import Normalize, ObsNorm
from vecrl_policy.observations import Flattener

#: Sub-envs made where a command or ``VecrlNE`` is given no ``num_envs``: the population size, at most this.
MAX_DEFAULT_NUM_ENVS = 256


def default_num_envs(popsize: int, cap: int | None = None) -> int:
    """The sub-envs that run a population of ``popsize`` rows where no ``num_envs`` is given: one a row, at
    most ``cap`` (default ``MAX_DEFAULT_NUM_ENVS``), since more rows than that refill freed sub-envs.

    Examples:
        >>> default_num_envs(64), default_num_envs(1000)
        (64, 256)
    """
    return min(popsize, cap or MAX_DEFAULT_NUM_ENVS)


@dataclass(frozen=True)
class EvaluateOptions:
    """The options of one ``evaluate`` call (its keywords, with the same names and meaning), checked when
    made: a TypeError or ValueError names the first that does not fit. What depends on the env or the
    policy (``obs_norm``'s length, ``randomize``'s names, whether ``num_workers`` can make the env again) is
    checked by the plan, which sees them.

    Examples:
        >>> options = EvaluateOptions(num_episodes=2, action_noise_stdev=0.1)
        >>> options.shaping.action_noise_stdev
        0.1
        >>> EvaluateOptions(num_episodes=0)
        Traceback (most recent call last):
        ...
        ValueError: num_episodes must be a positive int, got 0.
    """

    num_episodes: int = 1
    seed: int | None = None
    num_workers: int | None = None
    executor: Executor | None = None
    obs_norm: ObsNorm | None = None
    decrease_rewards_by: float | None = None
    alive_bonus_schedule: tuple[int, float] | tuple[int, int, float] | None = None
    action_noise_stdev: float | None = None
    fused: bool | None = None
    common_random_numbers: bool = False
    devices: Sequence[Any] | None = None
    randomize: Any = None  # a vecrl.randomize.Sampler, or fixed params per row (name -> array)
    steps_per_check: int | None = None
    select_restarts: bool | None = None
    measures: Any = None  # name -> an info key, a function, (source, per_episode) or a vecrl_evaluate.Measure
    shaping: Shaping = field(init=False, repr=False, compare=False)
    """The reward shaping and action noise of the three options above, checked."""

    def __post_init__(self) -> None:
        num_episodes = self.num_episodes
        if isinstance(num_episodes, bool) or not isinstance(num_episodes, Integral) or num_episodes < 1:
            raise ValueError(f"num_episodes must be a positive int, got {num_episodes!r}.")
        if self.num_workers is not None and self.executor is not None:
            raise ValueError(
                f"Give num_workers={self.num_workers!r} or executor={self.executor!r}, not both: the executor says"
                " where the parts of the population run."
            )
        if self.executor is not None and not isinstance(self.executor, Executor):
            raise TypeError(executor_error(self.executor))
        shaping = Shaping.checked(
            decrease_rewards_by=self.decrease_rewards_by,
            alive_bonus_schedule=self.alive_bonus_schedule,
            action_noise_stdev=self.action_noise_stdev,
        )
        steps = self.steps_per_check
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, Integral) or steps < 1):
            raise ValueError(
                f"steps_per_check must be None (the platform's) or a positive int (env steps the fused loop takes"
                f" between two checks of whether rows are left), got {steps!r}."
            )
        checked = {
            "num_episodes": int(num_episodes),
            "steps_per_check": None if steps is None else int(steps),
            "select_restarts": None
            if self.select_restarts is None
            else checked_flag(self.select_restarts, "select_restarts"),
            "seed": checked_seed(self.seed),
            "fused": None if self.fused is None else checked_flag(self.fused, "fused"),
            "common_random_numbers": checked_flag(self.common_random_numbers, "common_random_numbers"),
            "devices": checked_devices(self.devices),
            "shaping": shaping,
            "measures": Measures.checked(self.measures),
        }
        for name, value in checked.items():  # (frozen: the checked values replace what was given)
            object.__setattr__(self, name, value)


@dataclass(frozen=True)
class RowSettings:
    """What every row of one ``evaluate`` call is run with, derived by the plan from the options, the env
    and the policy: ``num_episodes`` each, argmax actions where ``discrete``, observations through
    ``flatten`` (then ``normalize``, if given), and ``shaping``; ``fused`` says whether rows run as one
    compiled program (None: where they can), ``devices`` the jax devices that program splits them over
    (None: every local one), ``steps_per_check`` and ``select_restarts`` the shape of its loop (None: the
    platform's); ``measures`` what each row measures besides its return (``vecrl_evaluate.measures``). Both
    drivers read it; it travels to worker processes and Ray actors."""

    num_episodes: int
    discrete: bool
    flatten: Flattener
    shaping: Shaping
    normalize: Normalize | None
    fused: bool | None = None
    devices: tuple[Any, ...] | None = None
    steps_per_check: int | None = None
    select_restarts: bool | None = None
    measures: Measures | None = None


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
