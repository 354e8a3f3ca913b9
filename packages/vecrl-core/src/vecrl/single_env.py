"""One env made of a vector env of one sub-env: what ``num_envs=None`` gives on the backends that are always
batched (brax, playground, gymnax, envpool), as the gym backend gives a plain gymnasium env.

The refusal of a batched env's options given with ``num_envs=None`` (each backend names its own: budgets and
autoreset modes everywhere, and the other options of the gym backend's SyncVectorEnv) lives here too, so that
every backend words it alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
import torch

from vecrl.autoreset import autoreset_mode_value
from vecrl.nests import map_batch


def check_vector_only_options(caller: str, options: Mapping[str, tuple[Any, Any]]) -> None:
    """A ValueError for the first option given with ``num_envs=None`` that only a vector env takes:
    ``options`` maps each option's name to ``(value given, default)``.

    Examples:
        >>> check_vector_only_options("make_vector_env('brax::ant')", {"num_episodes": (2, None)})
        Traceback (most recent call last):
        ...
        ValueError: make_vector_env('brax::ant') received num_episodes=2 with num_envs=None. num_episodes is an option of the batched env: pass num_envs=<number of copies> to use it, or leave num_episodes at its default (None) for a single env.
    """
    for name, (value, default) in options.items():
        if value != default:
            raise ValueError(
                f"{caller} received {name}={value!r} with num_envs=None. {name} is an option of the batched"
                f" env: pass num_envs=<number of copies> to use it, or leave {name} at its default"
                f" ({default!r}) for a single env."
            )


def one_or_batched(
    caller: str,
    make: Callable[[int, Any], Any],
    *,
    num_envs: int | None,
    num_episodes: int | None,
    autoreset_mode: Any,
) -> Any:
    """What an always-batched backend (brax, playground, gymnax, envpool) makes for ``num_envs``:
    ``make(num_envs, autoreset_mode)``, a vector env; or, for ``num_envs=None``, one plain env, a
    ``SingleEnv`` of ``make(1, "disabled")``, after refusing ``num_episodes`` and ``autoreset_mode`` (options
    of a batched env; ``caller`` names the call in the error: ``make_vector_env('brax::ant')``, which the
    backends' ``make_<x>_env`` are too).

    Examples:
        >>> import vecrl
        >>> make = lambda n, mode: vecrl.make_vector_env("gym::CartPole-v1", num_envs=n, autoreset_mode=mode)
        >>> one_or_batched("make('CartPole-v1')", make, num_envs=None, num_episodes=None, autoreset_mode="same_step")
        SingleEnv(...)
    """
    if num_envs is not None:
        return make(num_envs, autoreset_mode)
    options = {"num_episodes": (num_episodes, None), "autoreset_mode": (autoreset_mode, "same_step")}
    check_vector_only_options(caller, options)
    return SingleEnv(make(1, "disabled"))


class SingleEnv(gymnasium.Env):
    """The one sub-env of ``vector_env`` (``num_envs=1``, autoreset ``"disabled"``) as a gymnasium env: its
    observations, rewards and flags without the batch axis, its actions given without it, and its infos'
    arrays of one row as that row. As a gymnasium env, it never restarts an episode by itself: call
    ``reset()`` after one ends (stepping first is a RuntimeError saying so).

    Examples:
        >>> import vecrl
        >>> vector = vecrl.make_vector_env("gym::CartPole-v1", num_envs=1, autoreset_mode="disabled")
        >>> env = SingleEnv(vector)
        >>> obs, info = env.reset(seed=0)
        >>> tuple(obs.shape), env.action_space
        ((4,), Discrete(2))
        >>> obs, reward, terminated, truncated, info = env.step(1)
        >>> float(reward), bool(terminated)
        (1.0, False)
    """

    def __init__(self, vector_env: Any) -> None:
        mode = autoreset_mode_value(getattr(vector_env, "autoreset_mode", None) or "same_step")
        if int(vector_env.num_envs) != 1 or mode != autoreset_mode_value("disabled"):
            raise ValueError(
                f"SingleEnv takes a vector env of one sub-env without autoreset (num_envs=1,"
                f" autoreset_mode='disabled'), but got one of {vector_env.num_envs} sub-envs in mode {mode!r}."
            )
        self.vector_env = vector_env
        self.observation_space = vector_env.single_observation_space
        self.action_space = vector_env.single_action_space
        self.metadata = {key: value for key, value in vector_env.metadata.items() if key != "autoreset_mode"}
        self._ended = False  # the episode ended at the last step, and reset() has not been called since

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        observation, info = self.vector_env.reset(seed=seed, options=options)
        self._ended = False
        return _first_row(observation), _info_row(info)

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict]:
        if self._ended:
            raise RuntimeError(
                "The episode has ended (terminated or truncated) and this env does not start the next one by"
                " itself: call env.reset() before stepping again."
            )
        if isinstance(action, torch.Tensor):
            batched: Any = action.reshape(1, *action.shape)
        else:
            batched = np.asarray(action)[None]
        observation, reward, terminated, truncated, info = self.vector_env.step(batched)
        self._ended = bool(terminated[0] or truncated[0])
        return _first_row(observation), reward[0], terminated[0], truncated[0], _info_row(info)

    def close(self) -> None:
        self.vector_env.close()

    def __repr__(self) -> str:
        return f"SingleEnv({self.vector_env!r})"


def _first_row(batch: Any) -> Any:
    """Row 0 of a batch (an array, or a dict or tuple of them)."""
    return map_batch(lambda leaf: leaf[0], batch)


def _info_row(info: Mapping[str, Any]) -> dict[str, Any]:
    """The info of the one sub-env: each array of one row as that row (nested dicts alike); the masks of
    vector infos (``"_key"``) dropped."""
    row: dict[str, Any] = {}
    for key, value in info.items():
        if key.startswith("_"):
            continue
        if isinstance(value, Mapping):
            row[key] = _info_row(value)
        elif len(getattr(value, "shape", ())) >= 1 and value.shape[0] == 1:
            row[key] = value[0]
        else:
            row[key] = value
    return row
