"""MuJoCo Playground envs as the ``JaxEnv`` that vecrl's jax engine steps.

A playground env (``mujoco_playground.registry.load(name, config_overrides=...)``) is one functional env:
``reset(key)`` and ``step(state, action)`` on one state with brax's fields. It gets its time limit as
``brax.envs.create`` gives a brax env one, from brax's ``EpisodeWrapper`` (``info["truncation"]``,
``action_repeat``), with no autoreset (vecrl-jax's jitted step resets finished episodes from fresh
states), and is batched by ``vecrl_jax.BraxStyleEnv``.
"""

from __future__ import annotations

import functools
import math
import subprocess
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from gymnasium.spaces import Box

from vecrl import checks
from vecrl.checks import did_you_mean
from vecrl.params import MUJOCO_FIELDS
from vecrl_jax.brax_style import BraxStyleEnv
from vecrl_jax.model_params import ModelParams

#: Keywords of the episode wrapper (brax's ``EpisodeWrapper``); every other keyword overrides the env's config.
WRAPPER_KEYWORDS = ("episode_length", "action_repeat")


def default_impl() -> str:
    """MJX's implementation for the device jax computes on: ``"jax"`` on CPU (about 17x faster there than
    ``"warp"``, and compiled in a fraction of the time), ``"warp"`` (playground's default) on a GPU.

    Examples:
        >>> default_impl()  # on a machine without a GPU
        'jax'
    """
    import jax

    return "jax" if jax.default_backend() == "cpu" else "warp"


def checked_env_name(env_name: str) -> str:
    """``env_name`` if playground registers it; else an UnknownEnvError listing its envs, with a close match.

    Examples:
        >>> checked_env_name("CartpoleBalance")
        'CartpoleBalance'
    """
    from mujoco_playground import registry

    return checks.checked_env_name(env_name, list(registry.ALL_ENVS), "MuJoCo Playground")


def make_playground_env(env_name: str, kwargs: Mapping[str, Any]) -> BraxStyleEnv:
    """The playground env ``env_name`` as a ``JaxEnv``, its actions in ``[-1, 1]`` per actuator.

    ``kwargs`` holds ``episode_length`` and ``action_repeat`` (default: the env's config's) and overrides
    of the env's config (``impl``, ``ctrl_dt``, ...; ``impl`` defaults to ``default_impl()``).
    """
    from brax.envs.wrappers import training

    overrides = {key: value for key, value in kwargs.items() if key not in WRAPPER_KEYWORDS}
    _check_overrides(env_name, overrides)
    env, config = _loaded(env_name, tuple(sorted(overrides.items())))
    episode_length = kwargs.get("episode_length", config.episode_length)
    action_repeat = kwargs.get("action_repeat", config.get("action_repeat", 1))
    wrapped = training.EpisodeWrapper(env, episode_length, action_repeat)
    return BraxStyleEnv(wrapped, action_space(env), ModelParams("_mjx_model", (*MUJOCO_FIELDS, "gravity")))


@functools.lru_cache(maxsize=8)
def _loaded(env_name: str, overrides: tuple[tuple[str, Any], ...]) -> tuple[Any, Any]:
    """The playground env and its config (loading parses the model and puts it on the device: kept for the
    pool's larger batch and for other envs of the same configuration)."""
    from mujoco_playground import registry

    config = registry.get_default_config(env_name)
    given = dict(overrides)
    given.setdefault("impl", default_impl())
    config.update(given)
    try:
        return registry.load(env_name, config=config), config
    except subprocess.CalledProcessError as error:  # git clone of mujoco_menagerie, on first use
        raise ConnectionError(
            f"MuJoCo Playground could not fetch the robot models of {env_name!r} (it clones mujoco_menagerie"
            f" with git the first time: {error}). Run it once where the internet is reachable, or use a DM"
            " Control suite env, which ships with playground (CartpoleBalance, CheetahRun, WalkerWalk, ...)."
        ) from error


def _check_overrides(env_name: str, overrides: Mapping[str, Any]) -> None:
    """Each override names an entry of the env's config and has that entry's type (a number for a float,
    an int for an int, ...), a time step is positive and finite, and ``impl`` is one of MJX's; else an error
    saying what the entry takes (the config would take some silently: ctrl_dt=-0.01 never advances)."""
    from mujoco import mjx
    from mujoco_playground import registry

    checked_env_name(env_name)
    config = registry.get_default_config(env_name)
    keys = sorted({*config.keys(), *WRAPPER_KEYWORDS})
    for key, value in overrides.items():
        if key not in config:
            raise TypeError(
                f"{env_name} takes no keyword argument {key!r}.{did_you_mean(key, keys)} Its keywords (config"
                f" entries and the episode wrapper's): {', '.join(keys)}."
            )
        default = config[key]
        if key == "impl":
            implementations = [impl.value for impl in mjx.Impl]
            if value not in implementations:
                raise ValueError(
                    f"impl must be one of MJX's implementations {implementations}, got {value!r}."
                )
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
                raise TypeError(f"{key} must be a finite number (the config has {default!r}), got {value!r}.")
            if key.endswith("_dt") and value <= 0:
                raise ValueError(
                    f"{key} must be a positive time step in seconds (the config has {default!r}), got {value!r}."
                )
        elif (
            type(default) in (bool, int, str)
            and type(value) is not type(default)
            and not (type(default) is int and isinstance(value, Integral) and not isinstance(value, bool))
        ):
            kind = {bool: "True or False", int: "an int", str: "a string"}[type(default)]
            raise TypeError(f"{key} must be {kind} (the config has {default!r}), got {value!r}.")


def action_space(env: Any) -> Box:
    """``[-1, 1]`` per actuator: playground's envs map actions from that range to their controls (its own
    training code gives them tanh-squashed actions).

    Examples:
        >>> make_playground_env("CartpoleBalance", {}).action_space
        Box(-1.0, 1.0, (1,), float32)
    """
    return Box(-1.0, 1.0, shape=(int(env.action_size),), dtype=np.float32)
