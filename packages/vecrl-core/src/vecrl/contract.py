"""The two values a backend's vector env gives vecrl's base classes: its episode options and its capabilities.

``EpisodeOptions`` is what a user chose (checked when it is made, so a backend makes it before building
anything); ``Capabilities`` is what the backend can do, declared once on its class.

Examples:
    >>> EpisodeOptions(num_episodes=2, autoreset_mode="next_step")
    EpisodeOptions(num_episodes=2, autoreset_mode='next_step', seed_rule='evotorch')
    >>> Capabilities(steps_reset_next=True).seeded_masked_reset
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vecrl.autoreset import AutoresetModeName
from vecrl.episodes import checked_episode_budget
from vecrl.seeding import SeedRule, checked_seed_rule


@dataclass(frozen=True)
class EpisodeOptions:
    """A vector env's episode options, checked together when made (a ValueError saying how to fix them).

    - ``num_episodes``: episodes per sub-env, then NaN rows until a reset (``vecrl.episodes``); None:
      autoreset forever.
    - ``autoreset_mode``: ``"same_step"``, ``"next_step"`` or ``"disabled"`` (gymnasium's
      ``AutoresetMode`` and its spellings too; kept as the name).
    - ``seed_rule``: how ``reset(seed=S)`` seeds the sub-envs (``vecrl.seeding``): ``"evotorch"``, the
      default, so that results reproduce EvoTorch's; None where a backend seeds them its own way. Two
      shipped backends default otherwise, each for a reason: envpool to ``"gymnasium"`` (``S + i``, so
      ``reset(seed=S)`` gives the trajectories of ``envpool.make(..., seed=S)``) and the jax backends to
      None (keys split off one key of ``S``, as brax's, Playground's and gymnax's own ``reset(key)``).

    Examples:
        >>> EpisodeOptions(num_episodes=0)
        Traceback (most recent call last):
        ...
        ValueError: num_episodes must be a positive int (episodes per sub-env) or None (autoreset forever), but got 0.
    """

    num_episodes: int | None = None
    autoreset_mode: AutoresetModeName = "same_step"
    seed_rule: SeedRule | None = "evotorch"

    def __post_init__(self) -> None:
        num_episodes, mode = checked_episode_budget(self.num_episodes, self.autoreset_mode)
        object.__setattr__(self, "num_episodes", num_episodes)
        object.__setattr__(self, "autoreset_mode", mode)
        if self.seed_rule is not None:
            object.__setattr__(self, "seed_rule", checked_seed_rule(self.seed_rule))


@dataclass(frozen=True)
class Capabilities:
    """What a backend's vector env can do beyond the contract's minimum, declared on its class
    (``capabilities = vecrl.Capabilities(...)``); the defaults suit a backend that declares nothing.

    - ``passes_reset_options``: reset options other than ``reset_mask`` go on to the sub-envs (gymnasium's
      envs take options); where False they are a ValueError rather than silently ignored.
    - ``seeded_masked_reset``: ``reset(seed=..., options={"reset_mask": mask})`` can seed the masked
      sub-envs alone. False where seeds are fixed when the sub-envs are built (envpool): such a reset is
      refused, and seeded ``vecrl_evaluate.evaluate`` calls start rows with whole-env resets instead.
    - For ``vecrl.HostVectorEnv`` only: ``steps_reset_next``, the backend's own step resets a sub-env whose
      episode ended at its previous step (gymnasium's next-step autoreset, as envpool's pools do), and
      the engine leaves those resets to it in ``"next_step"`` mode; ``infos_per_sub_env``, the backend
      returns one info dict per sub-env, which the engine batches as gymnasium's ``SyncVectorEnv`` does;
      ``resets_spent_sub_envs``, same_step mode resets a sub-env whose budget a step spent too (its row
      still reports the budget's NaN), as EvoTorch does, so that later unseeded resets draw as EvoTorch's.
    """

    passes_reset_options: bool = False
    seeded_masked_reset: bool = True
    steps_reset_next: bool = False
    infos_per_sub_env: bool = False
    resets_spent_sub_envs: bool = False


def capabilities_of(env: Any) -> Capabilities:
    """The capabilities of ``env`` (a vector env, wrapped or not); the defaults for an env that declares
    none (gymnasium's own vector envs, for example).

    Examples:
        >>> capabilities_of(object()) == Capabilities()
        True
    """
    found = getattr(getattr(env, "unwrapped", env), "capabilities", None)
    return found if isinstance(found, Capabilities) else Capabilities()
