"""What the gym backend's vector envs (``SyncVectorEnv``, ``ProcessVectorEnv``) share: their options,
seeding, and the parts of gymnasium's vector API that do not depend on where the sub-envs run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from vecrl.checks import checked_device, checked_flag
from vecrl.contract import Capabilities, EpisodeOptions
from vecrl.episode_vector_env import EpisodeVectorEnv
from vecrl.rendering import needs_rgb_mode
from vecrl.seeding import SeedRule
from vecrl_gym.checks import ObservationMode, checked_observation_mode

Seed = int | Sequence[int | None] | None


class GymVectorEnv(EpisodeVectorEnv):
    """The options, seeding and gymnasium API shared by the gym backend's vector envs; subclasses call
    ``_take_options()`` first and pass the episode options it returns to ``__init__``, and implement
    ``get_attr``, and ``reset`` and ``step`` where the episode engine (``vecrl.HostVectorEnv``, which
    ``SyncVectorEnv`` stands on) does not. Reset options other than ``reset_mask`` go on to the sub-envs'
    ``reset``; each sub-env's reset without a seed continues its own generator."""

    capabilities = Capabilities(passes_reset_options=True)

    def _take_options(
        self,
        *,
        empty_info: bool,
        num_episodes: int | None,
        device: str | torch.device | None,
        autoreset_mode: Any,
        seed_rule: SeedRule,
        observation_mode: Any,
    ) -> EpisodeOptions:
        """Check every option a gym vector env takes (a clear error for a bad one, before any sub-env is
        made) and keep the gym backend's own; the episode options, for ``__init__``."""
        options = EpisodeOptions(
            num_episodes=num_episodes, autoreset_mode=autoreset_mode, seed_rule=seed_rule
        )
        checked_flag(empty_info, "empty_info")
        self.observation_mode: ObservationMode = checked_observation_mode(observation_mode)
        self._device = None if device is None else checked_device(device)
        self._pending_actions: Any = None
        return options

    def reset(
        self, *, seed: Seed = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (each subclass says how)."""
        raise NotImplementedError

    def render_snapshot(self, index: int) -> Any:
        """The frame sub-env ``index`` renders now (``vecrl.rendering``: the env made with
        ``render_mode="rgb_array"``)."""
        needs_rgb_mode(self)
        frames: Any = (
            self.render()
        )  # (gymnasium types a vector env's render loosely: here a frame per sub-env)
        return frames[index]

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every sub-env (each subclass says how)."""
        raise NotImplementedError

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
