"""Checks a backend author runs against a backend: shapes, dtypes, seeding, the classic API, close.

Observations may be tensors or (for Dict and Tuple observation spaces) dicts and tuples of tensors, nested
like the space.

Each check takes ``make(env_name, **kwargs)``, which gives a torch-speaking env: ``maker("toy")``, the
backend of that prefix through ``make_vector_env`` (as users make its envs). Example (in a plugin's test suite)::

    from vecrl.testing import check_backend, maker

    def test_toy_backend_follows_the_vecrl_contract():
        check_backend(maker("toy"), "Toy-v0", num_envs=3)
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from multiprocessing import resource_tracker
from pathlib import Path
from typing import Any

import torch
from gymnasium.spaces import Dict, Space, Tuple

from vecrl.actions import random_action_sampler
from vecrl.arrays import convert_to_numpy
from vecrl.autoreset import AUTORESET_MODES, declared_autoreset_mode
from vecrl.compat import (
    FINAL_INFO_KEY,
    FINAL_INFO_MASK_KEY,
    FINAL_OBS_KEY,
    FINAL_OBS_MASK_KEY,
)
from vecrl.contract import capabilities_of
from vecrl.errors import BackendCheckError
from vecrl.make import make_vector_env
from vecrl.nests import batch_leaves, map_batch
from vecrl.registry import isolated_registry
from vecrl.torch_wrapper import TorchWrapper
from vecrl.worlds import NotWholeWorldsError, rows_per_world

__all__ = [
    "BackendCheckError",
    "check_async",
    "check_autoreset_modes",
    "check_backend",
    "check_classic_api",
    "check_close",
    "check_params",
    "check_reset_and_step",
    "check_seed_lists",
    "check_single_env",
    "check_worlds",
    "CONFORMANCE_CHECKS",
    "run_conformance",
    "child_processes",
    "isolated_registry",
    "maker",
    "no_process_left",
    "random_actions",
    "idle_rollout",
]


def child_processes() -> set[int]:
    """The ids of the processes this one started and that are still there (zombies included: a worker
    nobody reaped counts as left), but for multiprocessing's resource tracker, which Python starts with the
    first spawned process, shares among all and ends with the interpreter. Linux only (it reads /proc).

    A backend's tests count them before and after closing an env with worker processes: none may be left.

    Examples:
        >>> child_processes()  # doctest: +SKIP
        set()
    """
    children = set()
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and int(stat.parent.name) != tracker:
            children.add(int(stat.parent.name))
    return children


@contextlib.contextmanager
def no_process_left() -> Iterator[None]:
    """Check that the code in the ``with`` block leaves no process of its own running (after a garbage
    collection, which closes the envs nobody holds): a ``BackendCheckError`` names those left.

    Examples:
        >>> with no_process_left():
        ...     pass
    """
    before = child_processes()
    yield
    gc.collect()
    left = child_processes() - before
    _expect(not left, f"processes {sorted(left)} were left running")


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise BackendCheckError(message)


def maker(prefix: str) -> Callable[..., TorchWrapper]:
    """What the checks take for the backend of ``prefix``: ``make(env_name, **kwargs)`` is
    ``vecrl.make_vector_env(f"{prefix}::{env_name}", **kwargs)``.

    Examples:
        >>> make = maker("gym")
        >>> make("CartPole-v1", num_envs=2).num_envs  # doctest: +SKIP
        2
    """

    def make(env_name: str, **kwargs: Any) -> TorchWrapper:
        return make_vector_env(f"{prefix}::{env_name}", **kwargs)

    return make


def random_actions(env: TorchWrapper, seed: int = 0) -> torch.Tensor:
    """A batch of valid random actions for the vector env ``env``, as a tensor (reproducible by ``seed``).

    Examples:
        >>> actions = random_actions(env, seed=1)  # doctest: +SKIP
    """
    return random_action_sampler(env.single_action_space, env.num_envs, seed=seed)()


def idle_rollout(env: TorchWrapper, steps: int, options: Any = None, seed: int = 0) -> torch.Tensor:
    """The observations of ``reset(seed=seed, options=options)`` and of ``steps`` steps with all-zero actions
    (a sub-env left to its physics: how its params move it), stacked as float32, one row per step.

    Examples:
        >>> idle_rollout(env, 5, {"params": {"g": [5.0, 20.0]}}).shape  # doctest: +SKIP
        torch.Size([6, 2, 3])
    """
    observation, _ = env.reset(seed=seed, options=options)
    action = torch.zeros_like(random_actions(env))
    return torch.stack([observation] + [env.step(action)[0] for _ in range(steps)]).float()


def check_backend(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 3,
    num_steps: int = 5,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Run every contract check on ``make(env_name, num_envs=..., **kwargs)``; raise BackendCheckError.

    Examples:
        >>> check_backend(make_gym_env, "CartPole-v1", num_envs=2)  # doctest: +SKIP
    """
    first = check_reset_and_step(make, env_name, num_envs=num_envs, num_steps=num_steps, seed=seed, **kwargs)
    second = check_reset_and_step(make, env_name, num_envs=num_envs, num_steps=num_steps, seed=seed, **kwargs)
    for step, (a, b) in enumerate(zip(first, second, strict=True)):
        _expect(
            torch.equal(a.nan_to_num(), b.nan_to_num()),
            f"{env_name}: two envs reset with seed={seed} and given the same actions diverged at step {step}:"
            " reset(seed=S) must make a run reproducible.",
        )
    check_classic_api(make, env_name, num_envs=num_envs, **kwargs)
    check_worlds(make, env_name, num_envs=num_envs, num_steps=max(num_steps, 50), seed=seed, **kwargs)


def check_worlds(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 3,
    num_steps: int = 50,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Where the env's rows are the seats of worlds (``seats_per_world``: ``vecrl.worlds``), the seat rules:
    a ``num_envs`` that is no whole worlds is refused with ``NotWholeWorldsError`` naming the seats, a reset
    mask that splits a world is refused, and a world's rows end their episodes together (over ``num_steps``
    random steps, with autoreset disabled). Nothing to check on an env whose every row is a world of its own.

    Examples:
        >>> check_worlds(maker("pettingzoo"), "mpe2.simple_spread_v3", num_envs=3, max_cycles=5)  # doctest: +SKIP
    """
    env = make(env_name, num_envs=num_envs, **kwargs)
    seats = rows_per_world(env)
    check_close(env)
    if seats == 1:
        return
    _expect(
        num_envs % seats == 0,
        f"{env_name}: num_envs={num_envs} is no whole worlds of {seats} seats, yet made.",
    )
    try:
        make(env_name, num_envs=num_envs + 1, **kwargs).close()
    except NotWholeWorldsError as error:
        _expect(
            error.seats_per_world == seats,
            f"{env_name}: NotWholeWorldsError says {error.seats_per_world} seats a world; seats_per_world is {seats}.",
        )
    else:
        raise BackendCheckError(
            f"{env_name}: num_envs={num_envs + 1} (no whole worlds of {seats} seats) must be refused with"
            " vecrl.worlds.NotWholeWorldsError."
        )
    kwargs = {**kwargs, "autoreset_mode": "disabled"}
    env = make(env_name, num_envs=num_envs, **kwargs)
    try:
        env.reset(seed=seed)
        split = torch.zeros(num_envs, dtype=torch.bool)
        split[0] = True
        try:
            env.reset(options={"reset_mask": split})
        except ValueError:
            pass
        else:
            raise BackendCheckError(
                f"{env_name}: reset_mask {split.tolist()} holds part of world 0 ({seats} seats a world): a"
                " mask that splits a world must be refused (a world resets as a whole)."
            )
        ended = torch.zeros(num_envs, dtype=torch.bool)
        for step in range(num_steps):
            _, _, terminated, truncated, _ = env.step(random_actions(env, seed=seed + step))
            done = (terminated | truncated).cpu().reshape(-1, seats)
            _expect(
                bool((done.all(dim=1) | ~done.any(dim=1)).all()),
                f"{env_name}: at step {step} some rows of a world ended and others did not"
                f" ({done.tolist()}, a row per seat): a world's rows end their episodes together.",
            )
            ended |= done.flatten()
            if ended.all():
                break
    finally:
        check_close(env)


def check_reset_and_step(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 3,
    num_steps: int = 5,
    seed: int = 0,
    **kwargs: Any,
) -> list[torch.Tensor]:
    """Check types, shapes and dtypes of reset and step; return the observations seen (for seeding checks)."""
    env = make(env_name, num_envs=num_envs, **kwargs)
    try:
        _expect(
            isinstance(env, TorchWrapper),
            f"make() returned {type(env).__qualname__}, not a vecrl.TorchWrapper.",
        )
        _expect(env.num_envs == num_envs, f"num_envs is {env.num_envs}, but {num_envs} were asked for.")
        result = env.reset(seed=seed)
        _expect(isinstance(result, tuple) and len(result) == 2, "reset() must return (observation, info).")
        observation, info = result
        obs_space = env.single_observation_space
        _check_observation(observation, obs_space, (num_envs,), "reset() observation")
        _expect(isinstance(info, dict), f"reset() info must be a dict, got {type(info).__qualname__}.")
        seen = [leaf.detach().cpu().clone() for leaf in _leaves(observation)]
        for step in range(num_steps):
            result = env.step(random_actions(env, seed=seed + step))
            _expect(len(result) == 5, f"step() must return 5 items, got {len(result)}.")
            observation, reward, terminated, truncated, info = result
            _check_observation(observation, obs_space, (num_envs,), "step() observation")
            _check_tensor(reward, (num_envs,), None, "step() reward")
            _check_tensor(terminated, (num_envs,), torch.bool, "step() terminated")
            _check_tensor(truncated, (num_envs,), torch.bool, "step() truncated")
            _expect(isinstance(info, dict), f"step() info must be a dict, got {type(info).__qualname__}.")
            seen.extend(leaf.detach().cpu().clone() for leaf in _leaves(observation))
            seen.append(reward.detach().cpu().clone())
    finally:
        check_close(env)
    return seen


def check_autoreset_modes(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 3,
    num_steps: int = 30,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Check the episode rules of every autoreset mode (``vecrl.autoreset``) and of the episode budget
    (``vecrl.episodes``) on ``make(env_name, num_envs=..., autoreset_mode=..., **kwargs)``; raise
    BackendCheckError. ``kwargs`` must make episodes end within ``num_steps`` random steps (e.g. a short
    time limit).

    - every mode is declared in ``metadata["autoreset_mode"]``;
    - ``same_step``: on a step where episodes ended, ``info`` holds the final observations in vecrl's
      layout (``vecrl.final_observations``): a batch like the observations, equal to them in the other
      rows, with a bool mask of exactly the sub-envs whose episode ended;
    - ``next_step``: the step after an episode ends reports reward 0 and neither flag for that sub-env;
    - ``disabled``: stepping a finished sub-env is a RuntimeError; ``reset(options={"reset_mask": ended})``
      restarts those sub-envs and leaves the other observations as they were; a mask before any reset, all
      False, of the wrong length or not of bools is refused as gymnasium refuses it;
    - ``num_episodes=1`` (same_step and next_step): once every sub-env's episode ended, every step reports
      NaN rewards and both flags True; with ``disabled`` it is a ValueError.

    Examples:
        >>> check_autoreset_modes(make_gym_env, "CartPole-v1", max_episode_steps=5)  # doctest: +SKIP
    """
    for mode in AUTORESET_MODES:
        env = make(env_name, num_envs=num_envs, autoreset_mode=mode, **kwargs)
        try:
            _expect(
                declared_autoreset_mode(env, default=None) == mode,  # type: ignore[arg-type]
                f"{env_name}: an env made with autoreset_mode={mode!r} declares"
                f" metadata['autoreset_mode'] = {env.metadata.get('autoreset_mode')!r}.",
            )
            if mode == "disabled":
                _check_reset_mask_mistakes(env, env_name, num_envs)
            ends = _run_mode(env, mode, env_name, num_steps, seed)
        finally:
            check_close(env)
        _expect(
            ends > 0,
            f"{env_name}: no episode ended in {num_steps} random steps ({mode}); pass keyword arguments that"
            " make episodes short (a time limit) to check the autoreset modes.",
        )
    for mode in ("same_step", "next_step"):
        _check_budget(make, env_name, num_envs, num_steps, seed, mode, kwargs)
    try:
        env = make(env_name, num_envs=num_envs, autoreset_mode="disabled", num_episodes=1, **kwargs)
    except ValueError:
        pass
    else:
        check_close(env)
        raise BackendCheckError(
            f"{env_name}: num_episodes=1 with autoreset_mode='disabled' must be a ValueError."
        )


def _check_reset_mask_mistakes(env: TorchWrapper, env_name: str, num_envs: int) -> None:
    """The mistakes of ``options["reset_mask"]`` are refused as gymnasium refuses them, naming the mask: one
    before any reset (no rows to keep: RuntimeError), all False, of the wrong length (ValueError) or not of
    bools (TypeError)."""
    one = torch.zeros(num_envs, dtype=torch.bool)
    one[0] = True
    mistakes = [
        ("before any reset", one, RuntimeError),
        ("all False", torch.zeros(num_envs, dtype=torch.bool), ValueError),
        ("of the wrong length", torch.ones(num_envs + 1, dtype=torch.bool), ValueError),
        ("of ints", one.long(), TypeError),
    ]
    for index, (what, mask, error) in enumerate(mistakes):
        try:
            env.reset(options={"reset_mask": mask})
        except error as raised:
            _expect(
                "reset_mask" in str(raised),
                f"{env_name}: the error for a reset_mask {what} names no reset_mask: {raised}",
            )
        else:
            raise BackendCheckError(
                f"{env_name}: reset(options={{'reset_mask': <{what}>}}) must be a {error.__name__}."
            )
        if index == 0:
            env.reset(seed=0)


def _run_mode(env: TorchWrapper, mode: str, env_name: str, num_steps: int, seed: int) -> int:
    """Step ``env`` randomly, checking what ``mode`` says about finished episodes; the number of ends seen."""
    observation, _ = env.reset(seed=seed)
    ended_before = None
    ends = 0
    for step in range(num_steps):
        observation, reward, terminated, truncated, info = env.step(random_actions(env, seed=seed + step))
        ended = (convert_to_numpy(terminated) | convert_to_numpy(truncated)).astype(bool)
        where = f"{env_name} ({mode}), step {step}"
        if mode == "same_step" and ended.any():
            _check_final_observations(observation, info, ended, where)
        if mode == "next_step" and ended_before is not None and ended_before.any():
            rows = ended_before.nonzero()[0].tolist()
            _expect(
                not convert_to_numpy(reward)[rows].any() and not ended[rows].any(),
                f"{where}: sub-envs {rows} ended at the previous step, so this step resets them: reward 0 and"
                " terminated = truncated = False for them.",
            )
        ends += int(ended.sum())
        if mode == "disabled" and ended.any():
            try:
                env.step(random_actions(env, seed=seed))
            except RuntimeError:
                pass
            else:
                raise BackendCheckError(
                    f"{where}: stepping finished sub-envs with autoreset disabled must raise."
                )
            before = [leaf.clone() for leaf in _leaves(observation)]
            observation, _ = env.reset(options={"reset_mask": torch.as_tensor(ended)})
            kept = ~torch.as_tensor(ended)
            for old, new in zip(before, _leaves(observation), strict=True):
                _expect(
                    torch.equal(old[kept.to(old.device)].nan_to_num(), new[kept.to(new.device)].nan_to_num()),
                    f"{where}: a masked reset changed the observations of sub-envs it did not reset.",
                )
            ended = ended & False  # restarted
        ended_before = ended
    return ends


def _check_final_observations(observation: Any, info: dict[str, Any], ended: Any, where: str) -> None:
    """Check ``info``'s final observations against vecrl's layout (``vecrl.final_observations``)."""
    mask = info.get(FINAL_OBS_MASK_KEY)
    _expect(
        isinstance(mask, torch.Tensor) and mask.dtype == torch.bool and mask.cpu().tolist() == ended.tolist(),
        f"{where}: info[{FINAL_OBS_MASK_KEY!r}] must be a bool tensor, True exactly for the sub-envs whose"
        f" episode ended ({ended.tolist()}), got {mask!r}.",
    )
    finals = info.get(FINAL_OBS_KEY)
    _expect(
        _nesting(finals) == _nesting(observation),
        f"{where}: info[{FINAL_OBS_KEY!r}] must be a batch like the observations, got {type(finals).__qualname__}.",
    )
    _expect(
        FINAL_INFO_KEY in info,
        f"{where}: an episode ended, so info must hold {FINAL_INFO_KEY!r} (its last info) with its mask, as"
        f" gymnasium's same_step vector envs give it; got the keys {sorted(info)}.",
    )
    info_mask = info.get(FINAL_INFO_MASK_KEY)
    _expect(
        isinstance(info_mask, torch.Tensor) and info_mask.cpu().tolist() == ended.tolist(),
        f"{where}: info[{FINAL_INFO_MASK_KEY!r}] must be a bool tensor True exactly for the sub-envs whose"
        f" episode ended ({ended.tolist()}), as info[{FINAL_OBS_MASK_KEY!r}] is; got {info_mask!r}.",
    )
    kept = torch.as_tensor(~ended)
    for leaf, final in zip(_leaves(observation), _leaves(finals), strict=True):
        _check_tensor(final, tuple(leaf.shape), leaf.dtype, f"{where}: info[{FINAL_OBS_KEY!r}]")
        _expect(
            torch.equal(leaf[kept.to(leaf.device)].nan_to_num(), final[kept.to(final.device)].nan_to_num()),
            f"{where}: info[{FINAL_OBS_KEY!r}] must equal the returned observation in the rows whose episode"
            " did not end.",
        )


def _check_budget(
    make: Callable[..., TorchWrapper],
    env_name: str,
    num_envs: int,
    num_steps: int,
    seed: int,
    mode: str,
    kwargs: dict[str, Any],
) -> None:
    """Check that ``num_episodes=1`` stops every sub-env after its episode (NaN rewards, both flags)."""
    env = make(env_name, num_envs=num_envs, autoreset_mode=mode, num_episodes=1, **kwargs)
    try:
        env.reset(seed=seed)
        done = torch.zeros(num_envs, dtype=torch.bool)
        for step in range(num_steps):
            _, reward, terminated, truncated, _ = env.step(random_actions(env, seed=seed + step))
            flags = (terminated & truncated).cpu()
            spent = done.clone()
            _expect(
                bool(flags[spent].all()) and bool(reward.cpu()[spent].isnan().all()),
                f"{env_name} ({mode}, num_episodes=1), step {step}: sub-envs whose only episode ended must report"
                " a NaN reward and terminated = truncated = True.",
            )
            done |= (terminated | truncated).cpu()
            if bool(spent.all()):
                return
        raise BackendCheckError(
            f"{env_name} ({mode}, num_episodes=1): not every sub-env finished its episode in {num_steps} steps;"
            " pass keyword arguments that make episodes short."
        )
    finally:
        check_close(env)


def check_classic_api(
    make: Callable[..., TorchWrapper], env_name: str, *, num_envs: int = 3, **kwargs: Any
) -> None:
    """Check that ``force_classic_api=True`` gives ``obs`` from reset and ``(obs, reward, done, info)``."""
    env = make(env_name, num_envs=num_envs, force_classic_api=True, **kwargs)
    try:
        observation = env.reset(seed=0)
        _check_observation(
            observation,
            env.single_observation_space,
            (num_envs,),
            "reset() under force_classic_api must return only obs, and its obs",
        )
        result = env.step(random_actions(env))
        _expect(len(result) == 4, f"step() under force_classic_api must return 4 items, got {len(result)}.")
        _check_tensor(result[2], (num_envs,), torch.bool, "step() done under force_classic_api")
    finally:
        check_close(env)


def check_seed_lists(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 3,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Check per-sub-env seeds on ``make(env_name, num_envs=..., **kwargs)``: ``reset(seed=[...])`` (one seed
    per sub-env, as gymnasium takes them) starts sub-env ``i`` from ``seeds[i]`` alone, so the same seeds in
    another order give the same rows in that order; it reproduces; a None in the list leaves that sub-env
    unseeded and the others seeded; a 1-D tensor of seeds is a list; seeds that are no seeds (negative, past
    2**32, not ints, a list of another length) are a ValueError; ``seed(seeds)`` seeds the next
    ``reset(seed=None)`` alike, and a refused reset leaves it pending; and a masked reset with a list restarts
    each masked sub-env from its own seed's start, or, for a backend that declares it cannot reseed some
    sub-envs alone (``Capabilities(seeded_masked_reset=False)`` on its vector env: envpool fixes seeds when its pool is
    built), is a ValueError. Raise BackendCheckError.

    Examples:
        >>> check_seed_lists(make_gym_env, "CartPole-v1")  # doctest: +SKIP
    """
    seeds = [seed + 11 * i + 1 for i in range(num_envs)]
    order = [*range(1, num_envs), 0]  # each seed one place further on
    env = make(env_name, num_envs=num_envs, **kwargs)
    try:
        first = _rows(env.reset(seed=seeds)[0])
        moved = _rows(env.reset(seed=[seeds[i] for i in order])[0])
        _expect(
            all(torch.equal(moved[row], first[i]) for row, i in enumerate(order)),
            f"{env_name}: reset(seed=seeds) and reset(seed=<the same seeds in another order>) must give each"
            " sub-env the start of its own seed: the rows of the second are not those of the first, moved.",
        )
        _expect(
            _same_rows(_rows(env.reset(seed=seeds)[0]), first),
            f"{env_name}: reset(seed=<a list>) twice gave different observations: it must reproduce.",
        )
        partly = _rows(env.reset(seed=[None, *seeds[1:]])[0])
        _expect(
            _same_rows(partly[1:], first[1:]),
            f"{env_name}: reset(seed=[None, s1, s2, ...]) must start sub-env 0 unseeded and each other sub-env"
            " from its seed, as gymnasium's vector envs do.",
        )
        _expect(
            _same_rows(_rows(env.reset(seed=torch.tensor(seeds))[0]), first),
            f"{env_name}: reset(seed=<a 1-D tensor of seeds>) must seed the sub-envs as the list of them does.",
        )
        for bad in (-1, 2**32, 1.5, "0", [seed] * (num_envs + 1), [*seeds[:-1], -1]):
            try:
                env.reset(seed=bad)
            except ValueError:
                continue
            raise BackendCheckError(f"{env_name}: reset(seed={bad!r}) must be a ValueError: it is no seed.")
        env.seed(seeds)
        with contextlib.suppress(ValueError):  # refused before anything changes: the seed stays pending
            env.reset(options={"reset_mask": torch.zeros(num_envs, dtype=torch.bool)})
        _expect(
            _same_rows(_rows(env.reset(seed=None)[0]), first),
            f"{env_name}: seed(seeds) then reset(seed=None) (what wrappers pass on) must reset as"
            " reset(seed=seeds) does, after a reset refused for its all-False reset_mask too: a seed given to"
            " seed() seeds the next reset that gets none of its own (vecrl.EpisodeVectorEnv).",
        )
        for step in range(2):
            env.step(random_actions(env, seed=seed + step))
        mask = torch.zeros(num_envs, dtype=torch.bool)
        mask[-1] = True
        others = [s + 1000 for s in seeds[:-1]]
        if not capabilities_of(env).seeded_masked_reset:
            try:
                env.reset(seed=[*others, seeds[-1]], options={"reset_mask": mask})
            except ValueError:
                return
            raise BackendCheckError(
                f"{env_name}: a masked reset with a seed list must restart the masked sub-envs from their"
                " seeds, or, where the backend cannot, be a ValueError; it was neither."
            )
        restarted = _rows(env.reset(seed=[*others, seeds[-1]], options={"reset_mask": mask})[0])
        _expect(
            torch.equal(restarted[-1], first[-1]),
            f"{env_name}: a masked reset with a seed list must restart each masked sub-env from its own seed's"
            " start (the last sub-env, masked, did not start where reset(seed=seeds) started it).",
        )
    finally:
        check_close(env)


def check_single_env(
    make: Callable[..., TorchWrapper], env_name: str, *, seed: int = 0, max_steps: int = 1000, **kwargs: Any
) -> None:
    """Check ``make(env_name, **kwargs)`` without ``num_envs``: one plain env, as gymnasium's (no
    ``num_envs``, observations of the space's shape, 0-d reward and flags, a seed reproducing the start), whose
    episode ends within ``max_steps`` random steps and which goes on after ``reset()``; ``num_episodes=2``
    with it (an option of a batched env) is a ValueError. Stepping after the episode ended may go on (a
    gymnasium env's) or be a RuntimeError that says to call ``reset()``, never a vector env's error naming
    sub-envs. A backend whose envs have no single form (the seats of multi-agent worlds) refuses
    ``num_envs=None`` when the env is made, in an error naming ``num_envs``. Raise BackendCheckError.

    Examples:
        >>> check_single_env(make_gym_env, "CartPole-v1")  # doctest: +SKIP
    """
    try:
        env = make(env_name, **kwargs)
    except (TypeError, ValueError) as error:
        _expect(
            "num_envs" in str(error),
            f"{env_name}: make() without num_envs was refused without naming num_envs: {error}",
        )
        return
    try:
        _expect(
            not hasattr(env, "num_envs") and not hasattr(env.unwrapped, "single_observation_space"),
            f"{env_name}: make() without num_envs must give one plain env, but it has num_envs (a vector env).",
        )
        space = env.observation_space
        observation, info = env.reset(seed=seed)
        _check_observation(observation, space, (), "reset() observation")
        _expect(isinstance(info, dict), f"reset() info must be a dict, got {type(info).__qualname__}.")
        again, _ = env.reset(seed=seed)
        _expect(
            all(torch.equal(a, b) for a, b in zip(_leaves(again), _leaves(observation), strict=True)),
            f"{env_name}: reset(seed={seed}) twice gave different observations: it must reproduce.",
        )
        sample = random_action_sampler(env.action_space, 1, seed=seed)
        for _ in range(max_steps):
            observation, reward, terminated, truncated, info = env.step(sample()[0])
            _check_observation(observation, space, (), "step() observation")
            for value, what in ((reward, "reward"), (terminated, "terminated"), (truncated, "truncated")):
                _check_tensor(value, (), None, f"step() {what}")
            if bool(terminated) or bool(truncated):
                break
        else:
            raise BackendCheckError(
                f"{env_name}: no episode ended in {max_steps} random steps; pass keyword arguments that make"
                " episodes short."
            )
        try:
            env.step(sample()[0])
        except RuntimeError as error:
            _expect(
                "reset()" in str(error) and "sub-env" not in str(error),
                f"{env_name}: stepping one plain env after its episode ended raised {error!r}; say to call"
                " reset(), in a single env's words.",
            )
        _check_observation(env.reset()[0], space, (), "reset() observation after an episode ended")
        env.step(sample()[0])
    finally:
        check_close(env)
    try:
        env = make(env_name, num_episodes=2, **kwargs)
    except ValueError:
        return
    check_close(env)
    raise BackendCheckError(
        f"{env_name}: num_episodes=2 without num_envs (one plain env) must be a ValueError."
    )


def _rows(observation: Any) -> list[torch.Tensor]:
    """Each sub-env's observation as one flat tensor (the leaves of a dict observation, end to end)."""
    leaves = [leaf.detach().cpu().reshape(leaf.shape[0], -1).double() for leaf in _leaves(observation)]
    return list(torch.cat(leaves, dim=1))


def _same_rows(rows: list[torch.Tensor], others: list[torch.Tensor]) -> bool:
    """Whether ``rows`` and ``others`` (as ``_rows`` gives them) are equal, row for row."""
    return all(torch.equal(a, b) for a, b in zip(rows, others, strict=True))


#: vecrl's conformance spec, check by check: each runs on ``make(env_name, **kwargs)``.
def check_params(
    make: Callable[..., TorchWrapper], env_name: str, *, num_envs: int = 3, seed: int = 0, **kwargs: Any
) -> None:
    """Check per-sub-env parameters (``vecrl.params``) on ``make(env_name, num_envs=..., **kwargs)``: a backend
    that declares none refuses ``reset(options={"params": ...})`` with a NotImplementedError; one that
    declares ``default_params`` gives, with its defaults, the run of a reset without params; other params
    (every one scaled by 1.5) start from the same states and change the dynamics; a masked reset with params
    changes only the masked rows; and a bad name, shape or value is refused before anything changes (the next
    steps are those the env would have taken). The direction physics says a change moves things is each
    backend's own test. Raise BackendCheckError.

    Examples:
        >>> check_params(make_gym_env, "CartPole-v1")  # doctest: +SKIP
    """
    env = make(env_name, num_envs=num_envs, **kwargs)
    try:
        defaults = getattr(env.unwrapped, "default_params", {})
        if not defaults:
            env.reset(seed=seed)
            try:
                env.reset(seed=seed, options={"params": {"gravity": [9.8] * num_envs}})
            except NotImplementedError:
                return
            raise BackendCheckError(
                f"{env_name}: reset(options={{'params': ...}}) on an env that declares no default_params must be"
                " a NotImplementedError saying so, not ignored."
            )
        full = {
            name: torch.as_tensor(value).expand(num_envs, *value.shape).clone()
            for name, value in defaults.items()
        }
        actions = [random_actions(env, seed=seed + step) for step in range(3)]

        def run(options: Any) -> list[Any]:
            rows = [_rows(env.reset(seed=seed, options=options)[0])]
            rows += [_rows(env.step(action)[0]) for action in actions]
            return rows

        plain = run(None)
        _expect(
            all(_same_rows(a, b) for a, b in zip(run({"params": full}), plain, strict=True)),
            f"{env_name}: reset(options={{'params': env.default_params for every sub-env}}) must run as a reset"
            " without params.",
        )
        for bad in (
            {"no_such_parameter": [1.0] * num_envs},
            {next(iter(full)): [[1.0]]},
            {next(iter(full)): full[next(iter(full))] * float("nan")},
        ):
            env.reset(seed=seed)
            try:
                env.reset(
                    seed=seed + 1, options={"params": bad, "reset_mask": [True] + [False] * (num_envs - 1)}
                )
            except (ValueError, TypeError):
                pass
            else:
                raise BackendCheckError(f"{env_name}: reset(options={{'params': {bad!r}}}) must be refused.")
            after = [_rows(env.step(action)[0]) for action in actions]
            _expect(
                all(_same_rows(a, b) for a, b in zip(after, plain[1:], strict=True)),
                f"{env_name}: a reset refused for bad params must change nothing, but the steps after it differ.",
            )
        env.reset(seed=seed)
        for action in actions[:2]:
            before = _rows(env.step(action)[0])
        mask = torch.zeros(num_envs, dtype=torch.bool)
        mask[0] = True
        scaled = {name: value * 1.5 for name, value in full.items()}
        masked = _rows(env.reset(seed=seed, options={"params": scaled, "reset_mask": mask})[0])
        _expect(
            _same_rows(masked[1:], before[1:]),
            f"{env_name}: a masked reset with params must keep the other sub-envs' observations.",
        )
        changed = run({"params": scaled})
        _expect(
            _same_rows(changed[0], plain[0]) and not all(map(_same_rows, changed[1:], plain[1:])),
            f"{env_name}: reset(options={{'params': other values}}) must start from the states the seed gives and"
            " step otherwise than the defaults.",
        )
    finally:
        check_close(env)


def check_async(
    make: Callable[..., TorchWrapper],
    env_name: str,
    *,
    num_envs: int = 4,
    batch_size: int = 2,
    num_steps: int = 12,
    seed: int = 0,
    **kwargs: Any,
) -> None:
    """Check async batches (``batch_size < num_envs``: ``async_reset``, ``send``, ``recv``, envpool's API) on
    ``make(env_name, num_envs=..., batch_size=..., **kwargs)``: in each autoreset mode of same_step and
    next_step that the backend takes with them, every sub-env's observations, rewards and flags are those
    ``step()`` gives in lockstep for the same seed and actions, whatever order the batches come back in;
    ``send`` for ids not received and ``recv`` with nothing sent are refused, and so is ``recv`` after
    ``close``. A backend without async batches, or a mode it does not keep with them, must refuse
    ``batch_size`` when the env is made, in an error naming it. Raise BackendCheckError.

    Examples:
        >>> check_async(make_gym_env, "CartPole-v1", max_episode_steps=6)  # doctest: +SKIP
    """
    for mode in ("same_step", "next_step"):
        try:
            env = make(env_name, num_envs=num_envs, batch_size=batch_size, autoreset_mode=mode, **kwargs)
        except (TypeError, ValueError) as error:
            _expect(
                "batch_size" in str(error),
                f"{env_name}: batch_size={batch_size} with autoreset_mode={mode!r} was refused without naming"
                f" batch_size: {error}",
            )
            continue
        reference = make(env_name, num_envs=num_envs, autoreset_mode=mode, **kwargs)
        try:
            actions = [random_actions(reference, seed=seed + t) for t in range(num_steps)]
            expected = _lockstep_rows(reference, actions, seed)
            got = _batch_rows(env, actions, seed, num_envs)
            for i in range(num_envs):
                _expect(
                    len(got[i]) == len(expected[i])
                    and all(_same_step_rows(a, b) for a, b in zip(got[i], expected[i], strict=True)),
                    f"{env_name} ({mode}): sub-env {i}'s trajectory through send()/recv() differs from the one"
                    " step() gives for the same seed and actions.",
                )
            _check_batch_mistakes(env, env_name)
        finally:
            check_close(reference)
        check_close(env)
        try:
            env.recv()
        except RuntimeError:
            continue
        raise BackendCheckError(f"{env_name}: recv() after close() must be refused (a RuntimeError).")


Row = tuple[torch.Tensor, float, bool, bool]


def _lockstep_rows(env: TorchWrapper, actions: list[torch.Tensor], seed: int) -> list[list[Row]]:
    """Each sub-env's ``(observation, reward, terminated, truncated)`` of a reset and a step per action batch."""
    observation, _ = env.reset(seed=seed)
    rows = [[(row, 0.0, False, False)] for row in _rows(observation)]
    for action in actions:
        observation, reward, terminated, truncated, _ = env.step(action)
        for i, row in enumerate(_rows(observation)):
            rows[i].append((row, float(reward[i]), bool(terminated[i]), bool(truncated[i])))
    return rows


def _batch_rows(env: TorchWrapper, actions: list[torch.Tensor], seed: int, num_envs: int) -> list[list[Row]]:
    """``_lockstep_rows`` through async batches: each sub-env takes its row of the next action batch when
    its batch comes back, in whatever order the batches do."""
    rows: list[list[Row]] = [[] for _ in range(num_envs)]
    env.async_reset(seed=seed)
    stepping = num_envs
    while stepping:
        observation, reward, terminated, truncated, info = env.recv()
        ids = [int(i) for i in info["env_id"]]
        for position, (i, row) in enumerate(zip(ids, _rows(observation), strict=True)):
            rows[i].append(
                (row, float(reward[position]), bool(terminated[position]), bool(truncated[position]))
            )
        if len(rows[ids[0]]) > len(actions):
            stepping -= len(ids)
            continue
        batch = map_batch(
            lambda *leaves: torch.stack(leaves), *[_row_of(actions[len(rows[i]) - 1], i) for i in ids]
        )
        env.send(batch, info["env_id"])
    return rows


def _row_of(batch: Any, index: int | slice) -> Any:
    return map_batch(lambda leaf: leaf[index], batch)


def _same_step_rows(a: Row, b: Row) -> bool:
    """Equal observations (NaN equal to NaN, as a spent budget's), rewards and flags."""
    same_reward = a[1] == b[1] or (a[1] != a[1] and b[1] != b[1])
    return bool(torch.equal(a[0].nan_to_num(7.0), b[0].nan_to_num(7.0))) and same_reward and a[2:] == b[2:]


def _check_batch_mistakes(env: TorchWrapper, env_name: str) -> None:
    """``send`` for ids not received is a ValueError, ``recv`` with nothing sent a RuntimeError."""
    env.async_reset(seed=0)
    received = []
    while True:
        try:
            received.append(env.recv())
        except RuntimeError:
            break
        if len(received) > env.num_envs:
            raise BackendCheckError(f"{env_name}: recv() with every sub-env received must be refused.")
    ids = received[0][-1]["env_id"]
    env.send(_row_of(random_actions(env), slice(0, len(ids))), ids)
    try:
        env.send(_row_of(random_actions(env), slice(0, len(ids))), ids)
    except ValueError:
        return
    raise BackendCheckError(
        f"{env_name}: send() for sub-envs already sent (not received since) must be refused."
    )


CONFORMANCE_CHECKS: dict[str, Callable[[Callable[..., TorchWrapper], str, dict[str, Any]], Any]] = {
    "backend": lambda make, env, kwargs: check_backend(make, env, num_envs=3, **kwargs),
    "autoreset": lambda make, env, kwargs: check_autoreset_modes(make, env, num_steps=12, **kwargs),
    "seed-lists": lambda make, env, kwargs: check_seed_lists(make, env, num_envs=3, **kwargs),
    "single": lambda make, env, kwargs: check_single_env(make, env, **kwargs),
    "params": lambda make, env, kwargs: check_params(make, env, num_envs=3, **kwargs),
    "async": lambda make, env, kwargs: check_async(make, env, **kwargs),
}


def run_conformance(prefix: str, cases: Sequence[Mapping[str, Any]]) -> None:
    """Run vecrl's conformance spec on the backend serving ``prefix``, as every shipped backend runs it: for
    each case ``{"env": name, "kwargs": {...}, "checks": [...]}`` (checks default to all of
    ``CONFORMANCE_CHECKS``; give kwargs whose episodes end within a few steps) those checks on
    ``make_vector_env(f"{prefix}::{name}", **kwargs)``; a ``BackendCheckError`` says what failed.

    Args:
        prefix: the backend's prefix (``"gym"``, a plugin's).
        cases: the envs to check, each ``{"env": name, "kwargs": {...}, "checks": [...]}`` (``checks``
            optional: names of ``CONFORMANCE_CHECKS``).

    Raises:
        BackendCheckError: a check failed (what the env did, and what the contract expects).
        ValueError: a case names a check that does not exist.

    Examples:
        >>> run_conformance("gym", [{"env": "CartPole-v1", "kwargs": {"max_episode_steps": 4}}])  # doctest: +SKIP
    """
    make = maker(prefix)
    for case in cases:
        checks = case.get("checks", list(CONFORMANCE_CHECKS))
        unknown = sorted(set(checks) - set(CONFORMANCE_CHECKS))
        if unknown:
            raise ValueError(f"unknown conformance checks {unknown}; known: {sorted(CONFORMANCE_CHECKS)}")
        for check in checks:
            CONFORMANCE_CHECKS[check](make, case["env"], dict(case.get("kwargs", {})))


def check_close(env: TorchWrapper) -> None:
    """Check that ``close()`` works and can be called twice."""
    env.close()
    env.close()


def _check_observation(x: object, space: Space, batch: tuple[int, ...], what: str) -> None:
    """Check an observation: a tensor of shape (*batch, *space.shape) (``batch``: ``(num_envs,)``, or ``()``
    for a single env), or for a Dict space a dict with the space's keys and for a Tuple space a tuple of its
    length, checked leaf by leaf."""
    if isinstance(space, (Dict, Tuple)):
        keys = list(space.spaces) if isinstance(space, Dict) else list(range(len(space.spaces)))
        if isinstance(space, Dict):
            fits, expected = (
                isinstance(x, Mapping) and set(x) == set(keys),
                f"a dict with the keys {sorted(keys)}",
            )
        else:
            fits, expected = isinstance(x, tuple) and len(x) == len(keys), f"a tuple of {len(keys)} entries"
        _expect(
            fits,
            f"{what} must be {expected}, one per space of the {type(space).__name__} observation space, got"
            f" {_nesting(x) if isinstance(x, Mapping | tuple) else type(x).__qualname__}.",
        )
        for key in keys:
            _check_observation(x[key], space[key], batch, f"{what}[{key!r}]")  # type: ignore[index]
    else:
        _check_tensor(x, (*batch, *(space.shape or ())), None, what)


def _leaves(x: Any) -> list[torch.Tensor]:
    """The tensors of an observation: itself, or the leaves of (nested) dicts in key order and tuples in
    order."""
    return batch_leaves(x)


def _nesting(x: Any) -> Any:
    """How a batch nests: the keys of its dicts and the lengths of its tuples, with None for a leaf."""
    return map_batch(lambda leaf: None, x)


def _check_tensor(x: object, shape: tuple[int, ...], dtype: torch.dtype | None, what: str) -> None:
    _expect(isinstance(x, torch.Tensor), f"{what} must be a torch.Tensor, got {type(x).__qualname__}.")
    assert isinstance(x, torch.Tensor)
    _expect(tuple(x.shape) == shape, f"{what} has shape {tuple(x.shape)}, expected {shape}.")
    _expect(dtype is None or x.dtype == dtype, f"{what} has dtype {x.dtype}, expected {dtype}.")
