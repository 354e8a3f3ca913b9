"""The ``pettingzoo::`` backend's make: a PettingZoo module's ``parallel_env`` as a ``PettingZooVectorEnv``."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from vecrl.contract import EpisodeOptions
from vecrl_pettingzoo.vector_env import PettingZooVectorEnv


def make_pettingzoo_vector_env(
    env_name: str,
    *,
    num_envs: int | None = None,
    num_episodes: int | None = None,
    autoreset_mode: Any = EpisodeOptions.autoreset_mode,
    seed_rule: Any = "evotorch",
    empty_info: bool = False,
    batch_size: int | None = None,
    num_workers: int | None = None,
    **kwargs: Any,
) -> PettingZooVectorEnv:
    """The ``pettingzoo`` backend's ``make``: worlds of the module ``env_name`` (``"mpe2.simple_spread_v3"``,
    ``"pettingzoo.butterfly.pistonball_v6"``, a third party's), made by its ``parallel_env(**kwargs)``
    (``max_cycles=25``, ``N=4``, ...), a row per agent of each world (``PettingZooVectorEnv``).

    Args:
        env_name: the module whose ``parallel_env`` makes a world.
        num_envs: the rows: a multiple of a world's agents (``num_envs / agents`` worlds).
        num_episodes: episodes per world, then NaN rows until a reset.
        autoreset_mode: ``"same_step"``, ``"next_step"`` or ``"disabled"``, per world.
        seed_rule: how ``reset(seed=S)`` seeds the rows (``vecrl.seeding``); a world takes its first row's.
        empty_info: infos left out.
        batch_size: envpool's async API (``async_reset``, ``send``, ``recv``) in batches of that many rows,
            stepped together (``vecrl.gathered_batches``).
        num_workers: worker processes stepping a share of the worlds each, at once (None: this process).
        **kwargs: the ``parallel_env``'s own keywords.

    Returns:
        A ``PettingZooVectorEnv`` (``make_vector_env`` makes it speak torch).

    Raises:
        ValueError: no ``num_envs`` (a world of several agents is no single env), a module without
            ``parallel_env``, or what ``PettingZooVectorEnv`` refuses.
        ModuleNotFoundError: the module is not installed (naming it).

    Examples:
        >>> env = make_pettingzoo_vector_env("mpe2.simple_spread_v3", num_envs=3, max_cycles=5)
        >>> env.num_worlds, env.num_envs
        (1, 3)
    """
    if num_envs is None:
        raise ValueError(
            f"make_vector_env('pettingzoo::{env_name}') needs num_envs: its rows are the agents of its worlds"
            " (a multiple of a world's agents), so it has no single-env form."
        )
    try:
        module = importlib.import_module(env_name)
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"pettingzoo::{env_name}: no module {error.name!r} is installed. The name is the module whose"
            " parallel_env makes the env: mpe2.simple_spread_v3 (pip install mpe2),"
            " pettingzoo.butterfly.pistonball_v6 (pip install 'pettingzoo[butterfly]').",
            name=error.name,
        ) from None
    parallel_env = getattr(module, "parallel_env", None)
    if not callable(parallel_env):
        raise ValueError(
            f"pettingzoo::{env_name}: the module {env_name} has no parallel_env(): give the module of a PettingZoo"
            " env (mpe2.simple_tag_v3), which makes its parallel form."
        )
    return PettingZooVectorEnv(
        functools.partial(parallel_env, **kwargs),
        num_envs,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
        seed_rule=seed_rule,
        empty_info=empty_info,
        batch_size=batch_size,
        num_workers=num_workers,
    )
