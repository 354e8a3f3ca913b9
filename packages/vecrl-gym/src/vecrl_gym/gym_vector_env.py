"""What the gym backend's vector envs (``SyncVectorEnv``, ``ProcessVectorEnv``) share: their options,
seeding, and the parts of gymnasium's vector API that do not depend on where the sub-envs run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

import vecrl
from vecrl.autoreset import autoreset_mode_value, checked_reset_mask
from vecrl.checks import checked_device, checked_flag, failed_env_error
from vecrl.episodes import checked_episode_budget
from vecrl.seeding import SeedRule, checked_seed_rule, checked_seeds
from vecrl_gym.checks import ObservationMode, checked_observation_mode

Seed = int | Sequence[int | None] | None


class Unset:
    """The default of ``reset(seed=...)``: unlike an explicit None, it keeps a seed given to ``seed()``."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET = Unset()


class GymVectorEnv(vecrl.BaseVectorEnv):
    """The options, seeding and gymnasium API shared by the gym backend's vector envs; subclasses call
    ``_take_options()`` first, then ``BaseVectorEnv.__init__``, and implement ``reset``, ``step`` and
    ``get_attr``."""

    def _take_options(
        self,
        *,
        empty_info: bool,
        num_episodes: int | None,
        device: str | torch.device | None,
        autoreset_mode: Any,
        seed_rule: SeedRule,
        observation_mode: Any,
    ) -> None:
        """Check and keep the options every gym vector env takes (a clear error for a bad one)."""
        self._num_episodes, self._autoreset_mode = checked_episode_budget(num_episodes, autoreset_mode)
        self.observation_mode: ObservationMode = checked_observation_mode(observation_mode)
        self._device = None if device is None else checked_device(device)
        self._empty_info = checked_flag(empty_info, "empty_info")
        self._seed_rule = checked_seed_rule(seed_rule)
        self._pending_seeds: list[int | None] | None = None
        self._pending_actions: Any = None

    def reset(
        self, *, seed: Seed | Unset = UNSET, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (each subclass says how)."""
        raise NotImplementedError

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env (each subclass says how)."""
        raise NotImplementedError

    def sub_env_seeds(self, seed: int) -> list[int | None]:
        """The seed each sub-env gets from ``reset(seed=seed)``, by the env's ``seed_rule``.

        Examples:
            >>> import gymnasium
            >>> from vecrl_gym import SyncVectorEnv
            >>> SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2, seed_rule="gymnasium").sub_env_seeds(4)
            [4, 5]
        """
        return checked_seeds(seed, self.num_envs, self._seed_rule) or []

    def _take_reset_mask(
        self, options: dict[str, Any] | None, reset_before: bool, failure: str | None
    ) -> tuple[np.ndarray | None, dict[str, Any] | None]:
        """``options["reset_mask"]`` checked (None when not given) and the other options; a masked reset
        keeps the other rows, so it is refused before any reset (``reset_before`` False) and while
        ``failure`` says the sub-envs are out of step."""
        if options is None or "reset_mask" not in options:
            return None, options
        mask = checked_reset_mask(options["reset_mask"], self.num_envs)
        options = {key: value for key, value in options.items() if key != "reset_mask"}
        if not reset_before and not mask.all():
            raise RuntimeError(
                "reset(options={'reset_mask': mask}) keeps the other sub-envs' observations, but this env"
                " has not been reset yet. Call reset() without a mask first."
            )
        if failure is not None and not mask.all():
            raise failed_env_error(failure)
        return mask, options

    def _take_seeds(self, seed: Seed | Unset) -> list[int | None]:
        """The per-sub-env seeds of this reset: from ``seed`` if given, else from ``seed()`` (once)."""
        if not isinstance(seed, Unset):
            self.seed(seed)
        seeds = self._pending_seeds or [None] * self.num_envs
        self._pending_seeds = None
        return seeds

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
    def seed_rule(self) -> SeedRule:
        """How ``reset(seed=S)`` seeds the sub-envs: ``"evotorch"`` or ``"gymnasium"`` (``S + i``)."""
        return self._seed_rule

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """The seed of every sub-env's ``np_random`` (-1 where it was not seeded by an int), as gymnasium 1.x's
        vector envs give it.

        Examples:
            >>> import gymnasium
            >>> from vecrl_gym import SyncVectorEnv
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3, seed_rule="gymnasium")
            >>> _ = env.reset(seed=10)
            >>> env.np_random_seed
            (10, 11, 12)
        """
        return self.get_attr("np_random_seed")

    @property  # type: ignore[misc]
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Every sub-env's random generator."""
        return self.get_attr("np_random")

    def seed(self, seed: Seed = None) -> None:
        """Seed the next ``reset()`` (and only that one); None clears a pending seed.

        An int ``S`` gives the sub-envs the seeds ``numpy.random.RandomState(S).randint(0, 2**32,
        num_envs)`` (with ``seed_rule="gymnasium"``: ``S + i`` for sub-env ``i``); a list gives one seed (or
        None) per sub-env. ``seed(S); reset()`` is the same as ``reset(seed=S)``.

        Examples:
            >>> import gymnasium
            >>> from vecrl_gym import SyncVectorEnv
            >>> env = SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
            >>> env.seed(7)
            >>> bool((env.reset()[0] == env.reset(seed=7)[0]).all())
            True
        """
        self._pending_seeds = checked_seeds(seed, self.num_envs, self._seed_rule)

    # gymnasium 0.29's VectorEnvWrapper steps and resets its env through these async/wait pairs.
    def step_async(self, actions: Any) -> None:
        """Keep ``actions`` for ``step_wait()`` (gymnasium 0.29's two-phase step)."""
        self._pending_actions = actions

    def step_wait(self, **kwargs: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step with the actions given to ``step_async()``."""
        actions, self._pending_actions = self._pending_actions, None
        return self.step(actions)

    def reset_async(self, seed: Seed = None, options: dict[str, Any] | None = None) -> None:
        """Nothing to start: ``reset_wait()`` does the work (gymnasium 0.29's two-phase reset)."""

    def reset_wait(
        self, seed: Seed = None, options: dict[str, Any] | None = None, **kwargs: Any
    ) -> tuple[Any, dict[str, Any]]:
        """Reset as ``reset(seed=seed, options=options)``."""
        return self.reset(seed=seed, options=options)
