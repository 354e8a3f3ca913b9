"""EpisodeVectorEnv: the episode options and the reset request of every backend, written once.

A backend subclasses ``EpisodeVectorEnv`` instead of ``BaseVectorEnv``, passes its ``EpisodeOptions`` to
``__init__`` and begins its ``reset`` with ``_reset_request``; it then writes only how to reset its sub-envs
(all of them, or those of the request's mask) with the request's seeds.
"""

from __future__ import annotations

import sys
import types
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import gymnasium
import numpy as np
from gymnasium.spaces import Space

from vecrl.arrays import convert_to_numpy
from vecrl.autoreset import (
    autoreset_metadata,
    autoreset_mode_value,
    checked_reset_mask,
    finished_sub_envs_error,
)
from vecrl.base_vector_env import BaseVectorEnv
from vecrl.checks import closed_env_error, failed_env_error
from vecrl.compat import VECTOR_WRAPPER_BASE
from vecrl.contract import EpisodeOptions
from vecrl.episodes import budget_under_wrappers_error
from vecrl.params import PARAMS_OPTION, checked_params
from vecrl.rendering import NoFrames
from vecrl.seeding import SeedRule, checked_seeds, is_seed, sub_env_seeds
from vecrl.worlds import check_whole_worlds, rows_per_world


class ResetRequest(NamedTuple):
    """What a ``reset()`` asks for, checked: the sub-envs to reset (``mask``, None for all), their seeds (as
    the env's ``_checked_seeds`` gives them, None for unseeded) and the options that are not ``reset_mask``
    (None when there are none)."""

    mask: np.ndarray | None
    seeds: Any
    options: dict[str, Any] | None


class EpisodeVectorEnv(BaseVectorEnv):
    """A ``BaseVectorEnv`` that owns vecrl's episode options and the checks of ``reset()``, the same on
    every backend (and on a third party's that subclasses it):

    - The ``EpisodeOptions`` given to ``__init__`` (``vecrl.contract``): ``num_episodes`` and
      ``autoreset_mode``, the mode declared in ``metadata["autoreset_mode"]``, and ``seed_rule``.
    - ``seed(S)`` seeds the next ``reset()`` that gets no seed of its own: ``reset()`` and ``reset(seed=None)``
      alike, so a seed given to ``seed()`` reaches the env through wrappers, which pass ``seed=None`` on.
      ``seed(None)`` cancels it; a reset refused for a bad argument leaves it in place.
    - ``options["reset_mask"]`` (``vecrl.autoreset.checked_reset_mask``) chooses the sub-envs to reset; it is
      refused before the first full reset (there are no other rows to keep), an all-True mask is a full
      reset, and a masked reset with seeds is refused where ``capabilities.seeded_masked_reset`` is False.
      ``options["params"]`` sets per-sub-env parameters (``vecrl.params``), checked here. Other options
      reach the sub-envs where ``capabilities.passes_reset_options`` is True and are a ValueError elsewhere.
    - ``reset()`` on a closed env is refused (``vecrl.checks.closed_env_error``).
    - With autoreset disabled, a step is refused while a sub-env whose episode ended has not been reset:
      the backend says which ended (``_note_ended``) and asks before stepping (``_refuse_finished``).

    Examples:
        >>> from gymnasium.spaces import Box, Discrete
        >>> class Idle(EpisodeVectorEnv):
        ...     def __init__(self, num_envs, **options):
        ...         super().__init__(num_envs, Box(-1.0, 1.0, (3,)), Discrete(2), episode_options=EpisodeOptions(**options))
        ...     def reset(self, *, seed=None, options=None):
        ...         request = self._reset_request(seed, options, started=True)
        ...         return request.seeds, {}
        >>> env = Idle(2, seed_rule="gymnasium")
        >>> env.seed(7)
        >>> env.reset(seed=None)[0], env.reset()[0]
        ([7, 8], None)
    """

    def __init__(
        self,
        num_envs: int,
        single_observation_space: Space,
        single_action_space: Space,
        *,
        episode_options: EpisodeOptions | None = None,
        reward_dtype: Any = np.float64,
    ) -> None:
        if episode_options is None:
            episode_options = EpisodeOptions()
        elif not isinstance(episode_options, EpisodeOptions):
            raise TypeError(
                f"{type(self).__name__}: episode_options must be a vecrl.EpisodeOptions, got {episode_options!r}."
            )
        self.episode_options = episode_options
        self._num_episodes = episode_options.num_episodes
        self._autoreset_mode = episode_options.autoreset_mode
        self._seed_rule: SeedRule | None = episode_options.seed_rule
        self._pending_seeds: Any = None
        # with autoreset disabled: the sub-envs whose episode ended and that no reset has restarted (None: none)
        self._finished: np.ndarray | None = None
        # why step() is refused (an error left the sub-envs out of step; a full reset clears it), or None
        self.failure: str | None = None
        self.metadata = {**type(self).metadata, **autoreset_metadata(self._autoreset_mode)}
        super().__init__(num_envs, single_observation_space, single_action_space, reward_dtype=reward_dtype)

    def render_snapshot(self, index: int) -> Any:
        """What sub-env ``index`` shows now, for ``render_frames`` (the contract's rendering member:
        ``vecrl.rendering``); a backend that draws writes it, the others raise ``NoFrames``."""
        raise NoFrames(
            f"{type(self).__name__} draws no frames: its backend does not write render_snapshot (vecrl.rendering)"
        )

    def render_frames(self, snapshots: Sequence[Any]) -> list[Any]:
        """The RGB frames of ``snapshots`` (``render_snapshot``'s), in order: the snapshots themselves here,
        where they are frames already."""
        return list(snapshots)

    @property
    def _failure(self) -> str | None:
        """The old name of ``failure``, for backends written before the contract's names were public."""
        warnings.warn("EpisodeVectorEnv._failure is now failure.", DeprecationWarning, stacklevel=2)
        return self.failure

    @_failure.setter
    def _failure(self, reason: str | None) -> None:
        warnings.warn("EpisodeVectorEnv._failure is now failure.", DeprecationWarning, stacklevel=2)
        self.failure = reason

    @property
    def default_params(self) -> dict[str, np.ndarray]:
        """The parameters this env lets vary per sub-env, with their defaults (``vecrl.params``); none here."""
        return {}

    @property
    def num_episodes(self) -> int | None:
        """The episode budget of each sub-env (None: autoreset forever)."""
        return self._num_episodes

    @property
    def autoreset_mode(self) -> Any:
        """The autoreset mode: gymnasium's ``AutoresetMode`` on gymnasium >= 1.1, else its name
        (``"same_step"``, ``"next_step"`` or ``"disabled"``)."""
        return autoreset_mode_value(self._autoreset_mode)

    @property
    def seed_rule(self) -> SeedRule | None:
        """How ``reset(seed=S)`` seeds the sub-envs: ``"evotorch"`` or ``"gymnasium"`` (``S + i``); None
        where the backend seeds them its own way (``vecrl.seeding``)."""
        return self._seed_rule

    def sub_env_seeds(self, seed: int) -> list[int]:
        """The seed each sub-env gets from ``reset(seed=seed)``, by the env's ``seed_rule``; a ValueError
        where it has none (its sub-envs start from keys split off one key of ``seed``).

        Examples:
            >>> from gymnasium.spaces import Discrete
            >>> class Idle(EpisodeVectorEnv):
            ...     def __init__(self):
            ...         super().__init__(3, Discrete(2), Discrete(2), episode_options=EpisodeOptions(seed_rule="gymnasium"))
            >>> Idle().sub_env_seeds(4)
            [4, 5, 6]
        """
        if not is_seed(seed):
            raise ValueError(f"seed must be an int in [0, 2**32), but got {seed!r}.")
        if self._seed_rule is None:
            raise ValueError(
                f"This {type(self).__name__} has no seed_rule: reset(seed=S) starts its sub-envs from keys split"
                " off one key of S, not from a seed each. Make it with seed_rule='evotorch' or 'gymnasium' to"
                " give each sub-env a seed of its own."
            )
        return sub_env_seeds(int(seed), self.num_envs, self._seed_rule)

    def seed(self, seed: Any = None) -> None:
        """Seed the next ``reset()`` that gets no seed of its own; ``seed(None)`` cancels a pending seed.

        An int ``S`` seeds the sub-envs by the env's ``seed_rule``; a list gives one seed per sub-env.
        ``seed(S); reset()`` is the same as ``reset(seed=S)``.
        """
        self._pending_seeds = None if seed is None else self._checked_seeds(seed)

    def _checked_seeds(self, seed: Any) -> Any:
        """The per-sub-env seeds that the seed given to ``reset()`` or ``seed()`` stands for (never None); a
        ValueError for a bad one. This rule is ``vecrl.seeding.checked_seeds``; a backend whose sub-envs
        take seeds of another form overrides it."""
        return checked_seeds(seed, self.num_envs, self._seed_rule or "evotorch")

    def _reset_request(self, seed: Any, options: Mapping[str, Any] | None, *, started: bool) -> ResetRequest:
        """The checked request of ``reset(seed=seed, options=options)``, ``started`` saying whether a full
        reset has been done (a masked one keeps the other rows). Every check comes before any change: a
        refused reset leaves the pending seed in place."""
        if self.closed:
            raise closed_env_error("reset", self)
        if self._num_episodes is not None:
            wrapper = _calling_gymnasium_wrapper(self)
            if wrapper is not None:
                raise budget_under_wrappers_error(
                    self._num_episodes,
                    f"gymnasium's {type(wrapper).__name__} around it",
                    "Make the env without num_episodes (the wrapper counts episodes itself), or step it"
                    " without the wrapper.",
                )
        mask, rest = self._reset_options(options, started)
        seeds = self._pending_seeds if seed is None else self._checked_seeds(seed)
        request = ResetRequest(mask, seeds, rest)
        self._check_reset(request)
        self._pending_seeds = None
        return request

    def _check_reset(self, request: ResetRequest) -> None:
        """Refuse ``request`` if this env cannot do it (a ValueError or RuntimeError saying why); a backend
        with refusals of its own extends this. Here: a masked reset with seeds, where
        ``capabilities.seeded_masked_reset`` is False, and a masked reset (which keeps the other rows) while an error has left the sub-envs out of
        step (``failure``), and a mask that splits a world where rows are seats (``vecrl.worlds``)."""
        if self.failure is not None and request.mask is not None:
            raise failed_env_error(self.failure)
        if request.mask is not None:
            check_whole_worlds(request.mask, rows_per_world(self))
        if (
            request.mask is not None
            and request.seeds is not None
            and not self.capabilities.seeded_masked_reset
        ):
            raise ValueError(
                f"A masked reset (options={{'reset_mask': mask}}) cannot seed only some sub-envs of a"
                f" {type(self).__name__} (a seed given to reset() or seed()): it fixes each sub-env's seed when"
                " its sub-envs are built, and building them again would restart every sub-env. Reset the masked"
                " sub-envs without a seed (they continue their random streams; env.seed(None) cancels a"
                " pending seed), or reset all of them with a seed."
            )

    def _refuse_finished(self) -> None:
        """Refuse a step while autoreset is disabled and a sub-env whose episode ended has not been reset
        since (``vecrl.autoreset.finished_sub_envs_error``); a backend calls it before stepping."""
        finished = self._finished
        if finished is not None and finished.any():
            raise finished_sub_envs_error(np.flatnonzero(finished).tolist())

    def _note_ended(self, ended: Any) -> None:
        """Keep the sub-envs whose episode ``ended`` at this step (a bool per sub-env, as numpy, torch or jax)
        until a reset restarts them; a backend calls it after each step with autoreset disabled."""
        ended = convert_to_numpy(ended)
        self._finished = ended.copy() if self._finished is None else self._finished | ended

    def _note_reset(self, mask: np.ndarray | None) -> None:
        """The sub-envs of a reset that went through (``mask``, None for all) are no longer finished."""
        if self._finished is not None:
            self._finished = None if mask is None else self._finished & ~mask

    def _reset_options(
        self, options: Mapping[str, Any] | None, started: bool
    ) -> tuple[np.ndarray | None, dict[str, Any] | None]:
        """The mask of ``options`` (None: every sub-env) and its other options (None: none)."""
        if not options:
            return None, None
        rest = {key: value for key, value in options.items() if key not in ("reset_mask", PARAMS_OPTION)}
        if rest and not self.capabilities.passes_reset_options:
            raise ValueError(
                f"reset() got options={dict(options)!r}, but {type(self).__name__} takes no reset options other"
                " than 'reset_mask'; pass None, {} or {'reset_mask': mask}."
            )
        if PARAMS_OPTION in options:  # (checked whole: the engine sets the rows its reset restarts)
            rest[PARAMS_OPTION] = checked_params(
                options[PARAMS_OPTION], self.default_params, self.num_envs, type(self).__name__
            )
        if "reset_mask" not in options:
            return None, rest or None
        mask = checked_reset_mask(options["reset_mask"], self.num_envs)
        if mask.all():
            return None, rest or None
        if not started:
            raise RuntimeError(
                "reset(options={'reset_mask': mask}) keeps the other sub-envs' observations, but this env has"
                " not been reset yet (or an error left it without a state). Call reset() without a mask first."
            )
        return mask, rest or None


def _calling_gymnasium_wrapper(env: EpisodeVectorEnv) -> Any:
    """The gymnasium wrapper whose method called a method of ``env`` (its ``reset``), directly or through
    vecrl's own wrappers (``TorchWrapper``), or None: gymnasium's wrappers give the env they wrap no other
    sign of being there."""
    frame: types.FrameType | None = sys._getframe(1)
    caller = None
    while frame is not None:  # up through env's own methods and vecrl's wrappers' to the first other caller
        caller = frame.f_locals.get("self")
        if caller is not env and not type(caller).__module__.startswith("vecrl"):
            break
        frame = frame.f_back
    wrappers = (gymnasium.Wrapper, VECTOR_WRAPPER_BASE)  # (0.29's RecordEpisodeStatistics is a Wrapper)
    if isinstance(caller, wrappers) and type(caller).__module__.startswith("gymnasium."):
        return caller
    return None
