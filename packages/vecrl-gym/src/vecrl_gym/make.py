"""make_gym_env: gymnasium envs by id, batched in a SyncVectorEnv and wrapped to speak torch."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any, Literal, overload

import gymnasium

import vecrl
from vecrl.checks import checked_callables
from vecrl.single_env import check_vector_only_options
from vecrl_gym.auto_workers import auto_num_workers
from vecrl_gym.gym_vector_env import GYM_DEFAULTS
from vecrl_gym.names import unknown_gym_id
from vecrl_gym.process_vector_env import ProcessVectorEnv
from vecrl_gym.sync_vector_env import SyncVectorEnv

#: A gymnasium wrapper (class or function) taking one env and giving the wrapped env.
EnvWrapper = Callable[[gymnasium.Env], gymnasium.Env]


def make_gym_env(env_name: str, **kwargs: Any) -> vecrl.TorchWrapper:
    """``vecrl.make_vector_env("gym::" + env_name, **kwargs)``: gymnasium envs, batched, that speak torch."""
    return vecrl.make_vector_env(f"gym::{env_name}", **kwargs)


def make_gym_vector_env(
    env_name: str,
    *,
    num_envs: int | None = None,
    wrappers: Sequence[EnvWrapper] | None = None,
    num_workers: int | Literal["auto"] | None = None,
    batch_size: int | None = None,
    **kwargs: Any,
) -> gymnasium.Env | SyncVectorEnv | ProcessVectorEnv:
    """The gym backend's ``make``: ``num_envs`` copies of the gymnasium env ``env_name`` in a
    ``SyncVectorEnv`` (``make_vector_env`` makes it speak torch).

    ``kwargs`` are the vector env's options (``GymOptions``: ``empty_info``, ``num_episodes``, ``device``,
    ``autoreset_mode``, ``seed_rule``, ``observation_mode``; see ``SyncVectorEnv``) and the keywords of
    ``gymnasium.make``; ``wrappers`` (gymnasium wrapper classes or functions taking an env) are applied in
    order to each sub-env, as ``gymnasium.make_vec(..., wrappers=...)`` does. The SyncVectorEnv makes its
    results torch tensors on ``device`` (the CPU by default, sharing memory with its arrays), info's numeric
    arrays included, so the TorchWrapper has nothing left to convert. With ``num_envs=None`` the result is
    one plain ``gymnasium.make`` env, and the vector env's options must be left at their defaults.

    ``num_workers=K`` (K >= 2) steps the sub-envs in K blocks at once, this process and K - 1 worker
    processes (``ProcessVectorEnv``), with the same results; ``"auto"`` does so with one per core only
    where one batch step takes over a millisecond (``vecrl_gym.auto_workers``), which cheap sub-envs in
    small numbers do not; None or 1 (the default) steps them all here. ``batch_size=k`` (dividing
    ``num_envs``) steps them in worker processes alone (``num_workers`` of them, one per core by default),
    in async batches of ``k`` sub-envs: ``async_reset()``, ``send(actions, env_id)`` and ``recv()`` as
    envpool names them (``ProcessVectorEnv``). An unknown id is a ``vecrl.UnknownEnvError`` with the
    closest ids gymnasium knows.

    ``env_name`` may be gymnasium's ``"module:EnvId"`` (e.g. ``"gymnasium_robotics:PointMaze_UMaze-v3"``):
    gymnasium.make imports ``module`` first, which registers the envs of packages such as
    gymnasium-robotics, so ``make_vector_env("gym::gymnasium_robotics:PointMaze_UMaze-v3", num_envs=4)``
    needs no import of its own.

    Examples:
        >>> env = make_gym_vector_env("CartPole-v1", num_envs=4, num_episodes=1)
        >>> obs, info = env.reset(seed=0)
        >>> type(env).__name__, obs.shape
        ('SyncVectorEnv', torch.Size([4, 4]))
    """
    options: dict[str, Any] = {key: kwargs.pop(key) for key in GYM_DEFAULTS if key in kwargs}
    if num_envs is None:
        defaults: dict[str, Any] = dict(GYM_DEFAULTS)
        vector_only = {key: (value, defaults[key]) for key, value in options.items()}
        vector_only["num_workers"] = (num_workers, None)
        vector_only["batch_size"] = (batch_size, None)
        check_vector_only_options(f"make_vector_env('gym::{env_name}')", vector_only)
        return _make_wrapped(env_name, _checked_wrappers(wrappers), kwargs)
    if isinstance(num_envs, bool) or not isinstance(num_envs, Integral) or num_envs < 1:
        raise ValueError(
            f"num_envs must be a positive int (the number of sub-envs) or None (one plain env),"
            f" but got {num_envs!r}."
        )
    make_one = functools.partial(_make_wrapped, env_name, _checked_wrappers(wrappers), kwargs)
    # The batched results become tensors (on the CPU without a copy) right where they are made,
    # which leaves the TorchWrapper nothing to convert.
    if options.get("device") is None:
        options["device"] = "cpu"
    if batch_size is not None:  # (async batches: worker processes alone, one per core unless told)
        workers = None if num_workers == "auto" else num_workers
        return ProcessVectorEnv(
            [make_one] * int(num_envs), num_workers=workers, batch_size=batch_size, **options
        )
    if num_workers == "auto":
        num_workers = auto_num_workers(make_one, int(num_envs))
    if num_workers is None or (type(num_workers) is int and num_workers == 1):  # (True is refused below)
        return SyncVectorEnv(_Copies(make_one, int(num_envs)), **options)
    return ProcessVectorEnv([make_one] * int(num_envs), num_workers=num_workers, **options)


def _make_wrapped(env_name: str, wrappers: Sequence[EnvWrapper], kwargs: dict[str, Any]) -> gymnasium.Env:
    """``gymnasium.make(env_name, **kwargs)`` with ``wrappers`` applied in order; an id gymnasium does not
    know is an UnknownEnvError naming the closest one it does (chaining gymnasium's own error)."""
    if kwargs.get("render_mode") not in (None, "human") and not _has_display():
        # pygame (classic control's drawing) draws frames to arrays without a display, but SDL's default video
        # driver looks for one first and prints an error for the missing XDG_RUNTIME_DIR
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    try:
        env = gymnasium.make(env_name, **kwargs)
    except gymnasium.error.UnregisteredEnv as error:
        raise unknown_gym_id(env_name) from error
    for wrap in wrappers:
        env = wrap(env)
    return env


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _checked_wrappers(wrappers: Any) -> tuple[EnvWrapper, ...]:
    """``wrappers`` as a tuple of callables; a TypeError naming the first one that is not."""
    if wrappers is None:
        return ()
    if callable(wrappers) or not isinstance(wrappers, Sequence):
        raise TypeError(
            f"wrappers must be a list of gymnasium wrappers (classes or functions taking an env), but got"
            f" {wrappers!r}. Put it in a list: wrappers=[{getattr(wrappers, '__name__', 'wrapper')}]."
        )
    hint = (
        "Give gymnasium wrapper classes or functions taking an env, e.g. [gymnasium.wrappers.ClipReward] or"
        " [functools.partial(gymnasium.wrappers.TimeLimit, max_episode_steps=100)]."
    )
    return checked_callables(wrappers, "wrappers", hint)


class _Copies(Sequence[Any]):
    """``count`` times ``item``, without a list that long: SyncVectorEnv checks that the sub-envs fit in
    memory after making two of them, so a num_envs far too large fails at once, with the size it needs."""

    def __init__(self, item: Any, count: int) -> None:
        self._item, self._count = item, count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._item] * len(range(*index.indices(self._count)))
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return self._item
