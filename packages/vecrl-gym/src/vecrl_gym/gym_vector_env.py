"""What the gym backend's vector envs (``SyncVectorEnv``, ``ProcessVectorEnv``) share: their options,
seeding, and the parts of gymnasium's vector API that do not depend on where the sub-envs run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np
import torch

from vecrl.checks import checked_device, checked_flag, did_you_mean
from vecrl.contract import Capabilities, EpisodeOptions
from vecrl.episode_vector_env import EpisodeVectorEnv
from vecrl.rendering import needs_rgb_mode
from vecrl.seeding import SeedRule
from vecrl_gym.checks import ObservationMode, checked_observation_mode

Seed = int | Sequence[int | None] | None


class GymOptions(TypedDict, total=False):
    """The keywords of the gym backend's vector envs (``SyncVectorEnv``'s Args say what each means); their
    defaults are ``GYM_DEFAULTS``. ``SyncVectorEnv(makers, **options)`` and ``ProcessVectorEnv`` take them,
    and ``make_gym_vector_env`` passes them on."""

    empty_info: bool
    num_episodes: int | None
    device: str | torch.device | None
    autoreset_mode: Any
    seed_rule: SeedRule
    observation_mode: ObservationMode


#: Each of ``GymOptions``' keywords with its default.
GYM_DEFAULTS: GymOptions = {
    "empty_info": False,
    "num_episodes": None,
    "device": None,
    "autoreset_mode": EpisodeOptions.autoreset_mode,
    "seed_rule": "evotorch",
    "observation_mode": "same",
}


class GymVectorEnv(EpisodeVectorEnv):
    """The options, seeding and gymnasium API shared by the gym backend's vector envs; subclasses call
    ``_take_options()`` first and pass the episode options it returns to ``__init__``, and implement
    ``get_attr``, and ``reset`` and ``step`` where the episode engine (``vecrl.HostVectorEnv``, which
    ``SyncVectorEnv`` stands on) does not. Reset options other than ``reset_mask`` go on to the sub-envs'
    ``reset``; each sub-env's reset without a seed continues its own generator."""

    capabilities = Capabilities(passes_reset_options=True)

    def _take_options(self, given: Mapping[str, Any]) -> EpisodeOptions:
        """Check every option a gym vector env takes (``given``: ``GymOptions``; a clear error for a bad or
        unknown one, before any sub-env is made) and keep the gym backend's own; the episode options, for
        ``__init__``; every option is kept in ``_options``."""
        owner = type(self).__name__
        for key in given:
            if key == "batch_size":
                raise TypeError(
                    f"{owner}() steps every sub-env at once, so it takes no batch_size: async batches of sub-envs"
                    " (async_reset, send, recv) are ProcessVectorEnv(makers, batch_size=k)'s, which"
                    " make_vector_env('gym::...', num_envs=n, batch_size=k) makes."
                )
            if key not in GYM_DEFAULTS:
                raise TypeError(
                    f"{owner}() got an unexpected keyword argument {key!r}{did_you_mean(key, GYM_DEFAULTS)};"
                    f" its options are {', '.join(GYM_DEFAULTS)} (see help({owner}))."
                )
        options: dict[str, Any] = {**GYM_DEFAULTS, **given}
        episode_options = EpisodeOptions(
            num_episodes=options["num_episodes"],
            autoreset_mode=options["autoreset_mode"],
            seed_rule=options["seed_rule"],
        )
        checked_flag(options["empty_info"], "empty_info")
        self._options = options  # every option, given or default, checked
        self.observation_mode: ObservationMode = checked_observation_mode(options["observation_mode"])
        device = options["device"]
        self._device = None if device is None else checked_device(device)
        self._pending_actions: Any = None
        return episode_options

    def reset(
        self, *, seed: Seed = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the sub-envs (each subclass says how)."""
        raise NotImplementedError

    def render_snapshot(self, index: int) -> Any:
        """The frame sub-env ``index`` renders now (``vecrl.rendering``: the env made with
        ``render_mode="rgb_array"``)."""
        needs_rgb_mode(self, index)
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
