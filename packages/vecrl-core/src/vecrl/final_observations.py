"""The last observations of episodes that a same_step step restarted: one layout on every backend.

With ``autoreset_mode="same_step"`` a sub-env whose episode ends is restarted within the step, so the
observation the step returns for it is the first of its next episode. The ended episode's last
observation is in ``info``, under gymnasium's key for the installed version (``FINAL_OBS_KEY``:
``"final_obs"`` on 1.x, ``"final_observation"`` on 0.29), the same way on gym (in one process or in
worker processes), envpool, brax, playground and in what ``make_vector_env`` returns:

- ``info[FINAL_OBS_KEY]``: a batch like the observations (the same array type, dtype, device and
  Dict/Tuple nesting) whose row ``i`` is the observation sub-env ``i`` reached before any restart: the
  final observation where its episode ended, the returned observation elsewhere. So it is every row's
  next observation, as a learner bootstrapping from it needs.
- ``info[FINAL_OBS_MASK_KEY]`` (``"_" + FINAL_OBS_KEY``): a bool batch of the same array type, True for
  the sub-envs whose episode ended at this step.
- ``info[FINAL_INFO_KEY]`` and ``info[FINAL_INFO_MASK_KEY]``, where the backend has infos (gym, envpool,
  any ``vecrl.HostVectorEnv``): the ended episodes' last infos, batched as gymnasium's vector envs of the
  installed version batch them, while the rows of ``info`` hold the restarted sub-envs' reset infos.

The keys are there on the steps where an episode ended, and only there, on every backend, as gymnasium
gives them: ``if FINAL_OBS_KEY in info`` means an episode ended at this step.

gymnasium's own vector envs keep the final observations in an object array instead (None where no
episode ended; before 1.1, numeric ones in a numeric array, zeros there); ``observations_before_restart``
reads all of these.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from vecrl.arrays import convert_to_numpy
from vecrl.compat import (
    FINAL_INFO_KEY,
    FINAL_INFO_MASK_KEY,
    FINAL_INFOS_BATCHED_ONCE,
    FINAL_OBS_KEY,
    FINAL_OBS_MASK_KEY,
)
from vecrl.nests import first_leaf, map_batch

#: A vector env's ``_add_info``: ``(infos, info of one sub-env, its index) -> infos``, as gymnasium's.
AddInfo = Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]


def observations_before_restart(observation: Any, info: Any) -> Any:
    """The observations a same_step step reached before restarting any sub-env: ``observation`` with the
    rows of the episodes that ended replaced by their final observations, read from ``info`` in vecrl's
    layout (above) or in gymnasium's (an object array); ``observation`` itself where nothing ended.

    Examples:
        >>> import gymnasium
        >>> env = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)
        >>> observation, info = env.reset(seed=0)
        >>> for _ in range(30):
        ...     observation, _, terminated, truncated, info = env.step(np.array([1, 1]))
        ...     if (terminated | truncated).any():
        ...         break
        >>> before = observations_before_restart(observation, info)
        >>> bool(abs(before[terminated][:, 2]).max() > 0.2)  # the pole had fallen before the restart
        True
    """
    finals = info.get(FINAL_OBS_KEY) if isinstance(info, Mapping) else None
    if finals is None:
        return observation
    first = first_leaf(finals)
    if not isinstance(first, np.ndarray):
        return finals  # vecrl's layout (torch or jax): already every row's observation before the restart
    mask = info.get(FINAL_OBS_MASK_KEY)
    ended = np.flatnonzero(np.asarray(mask, dtype=bool)) if mask is not None else np.arange(len(first))
    if first.dtype == object:  # gymnasium >= 1.1, and others: None where no episode ended
        rows = [int(i) for i in ended if finals[i] is not None]
        return _replace_rows(observation, rows, [finals[i] for i in rows]) if rows else observation
    # numpy arrays: vecrl's layout, or gymnasium < 1.1 batching numeric final observations (zeros elsewhere)
    rows = [int(i) for i in ended]
    return _replace_rows(observation, rows, [_row(finals, i) for i in rows]) if rows else observation


def _row(tree: Any, index: int) -> Any:
    return map_batch(lambda leaf: leaf[index], tree)


def _replace_rows(batch: Any, rows: list[int], values: list[Any]) -> Any:
    """A copy of ``batch`` (an array, a tensor, or dicts and tuples of them) with ``batch[rows[k]] = values[k]``."""
    return map_batch(lambda leaf, *parts: _replaced(leaf, rows, parts), batch, *values)


def _replaced(batch: Any, rows: list[int], values: tuple[Any, ...]) -> Any:
    """A copy of the array ``batch`` with ``batch[rows[k]] = values[k]``."""
    stacked = np.stack([np.asarray(v) for v in values])
    if isinstance(batch, torch.Tensor):
        updated = batch.clone()
        updated[rows] = torch.from_numpy(stacked).to(device=batch.device, dtype=batch.dtype)
        return updated
    if isinstance(batch, np.ndarray):
        updated_array = batch.copy()
        updated_array[rows] = stacked
        return updated_array
    return batch.at[np.asarray(rows)].set(stacked)  # a jax array


def final_infos(info: Any, ended: Any, add_info: AddInfo, *, per_sub_env: bool = False) -> dict[str, Any]:
    """``info[FINAL_INFO_KEY]`` and its ``"_"`` mask for a step whose episodes ``ended`` (a bool per sub-env,
    of the env's array type: the masks are it), from the step's ``info`` before any restart, in the layout of
    gymnasium's same_step vector envs of the installed version (``add_info``: the env's ``_add_info``).

    ``info`` is batched (arrays with a row per sub-env, other values as they are; no keys where it is
    empty) or, with ``per_sub_env``, every sub-env's info dict (a list, or ``{}`` for none), as gymnasium's
    SyncVectorEnv has them. From gymnasium 1.1 on, a dict of the ended sub-envs' info values, each with its
    ``"_<key>"`` mask (for batched info: the step's arrays, the ``ended`` rows being the final ones, not
    zeroed elsewhere as gymnasium's are, which would cost every step that ends an episode); before, each
    ended sub-env's info went through ``add_info`` as ``{"final_info": info}``.

    Examples:
        >>> import gymnasium
        >>> add_info = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 2)._add_info
        >>> finals = final_infos({"elapsed": np.array([5, 7])}, np.array([False, True]), add_info)
        >>> finals["_final_info"].tolist()
        [False, True]
    """
    if not info and FINAL_INFOS_BATCHED_ONCE:  # (no sub-env gave an info: gymnasium gives only the mask)
        return {FINAL_INFO_KEY: {}, FINAL_INFO_MASK_KEY: ended}
    if FINAL_INFOS_BATCHED_ONCE and not per_sub_env:
        batched: dict[str, Any] = {}
        for key, value in info.items():
            batched[key], batched[f"_{key}"] = value, ended
        return {FINAL_INFO_KEY: batched, FINAL_INFO_MASK_KEY: ended}
    num_envs, indices = len(ended), convert_to_numpy(ended).nonzero()[0].tolist()
    if per_sub_env:
        ended_infos = [info[index] if info else {} for index in indices]
    else:
        rows = {key: _as_rows(value, num_envs) for key, value in (info or {}).items()}
        ended_infos = [
            {key: value[index] if is_row_array(value, num_envs) else value for key, value in rows.items()}
            for index in indices
        ]
    finals: dict[str, Any] = {}
    if not FINAL_INFOS_BATCHED_ONCE:
        for index, ended_info in zip(indices, ended_infos, strict=True):
            finals = add_info(finals, {FINAL_INFO_KEY: ended_info}, index)
        if finals:  # (gymnasium's _add_info made the mask numpy: it is ``ended``, of the env's array type)
            finals[FINAL_INFO_MASK_KEY] = ended
        return finals
    for index, ended_info in zip(indices, ended_infos, strict=True):
        if ended_info:  # gymnasium adds nothing for an empty info but its mask
            finals = add_info(finals, ended_info, index)
    return {FINAL_INFO_KEY: finals, FINAL_INFO_MASK_KEY: ended}


def _as_rows(value: Any, num_rows: int) -> Any:
    """An info value with a row per sub-env (numpy, torch or jax) as numpy, for gymnasium's per-row layout."""
    if not isinstance(value, np.ndarray) and len(getattr(value, "shape", ())) > 0 and len(value) == num_rows:
        return convert_to_numpy(value)
    return value


def is_row_array(value: Any, num_rows: int) -> bool:
    """Whether the info ``value`` of a set of ``num_rows`` sub-envs holds one row per sub-env (a numpy array
    of that length): the values ``with_rows`` writes into rows, and those a backend puts in its rows' order.

    Examples:
        >>> is_row_array(np.array([5, 7]), 2), is_row_array(np.float32(1.0), 2)
        (True, False)
    """
    return isinstance(value, np.ndarray) and value.ndim > 0 and len(value) == num_rows
