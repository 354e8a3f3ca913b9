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

The keys are there on every step where an episode ended. Host backends (gym, envpool) leave them out on
the other steps, as gymnasium does; the jitted ones (brax, playground) give them on every step, with an
all-False mask where nothing ended, since finding out would cost a device sync.

gymnasium's own vector envs keep the final observations in an object array instead (None where no
episode ended; before 1.1, numeric ones in a numeric array, zeros there); ``observations_before_restart``
reads all of these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from vecrl.compat import FINAL_OBS_KEY, FINAL_OBS_MASK_KEY


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
    first = _first_leaf(finals)
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


def _first_leaf(tree: Any) -> Any:
    while isinstance(tree, Mapping | tuple) and tree:
        tree = next(iter(tree.values())) if isinstance(tree, Mapping) else tree[0]
    return tree


def _row(tree: Any, index: int) -> Any:
    if isinstance(tree, Mapping):
        return {key: _row(leaf, index) for key, leaf in tree.items()}
    if isinstance(tree, tuple):
        return tuple(_row(leaf, index) for leaf in tree)
    return tree[index]


def _replace_rows(batch: Any, rows: list[int], values: list[Any]) -> Any:
    """A copy of ``batch`` (an array, a tensor, or dicts and tuples of them) with ``batch[rows[k]] = values[k]``."""
    if isinstance(batch, Mapping):
        return {key: _replace_rows(leaf, rows, [v[key] for v in values]) for key, leaf in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_replace_rows(leaf, rows, [v[i] for v in values]) for i, leaf in enumerate(batch))
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
