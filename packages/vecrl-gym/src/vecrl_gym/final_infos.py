"""The finished episodes' last observations and infos, batched into a step's info once per step."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from vecrl.compat import FINAL_INFO_KEY, FINAL_INFOS_BATCHED_ONCE, FINAL_OBS_KEY
from vecrl.spaces import copy_batch
from vecrl_gym.batching import TreeRows

#: A sub-env whose episode ended this step: its index, last observation and last info.
EndedEpisode = tuple[int, Any, dict[str, Any]]
#: gymnasium's ``VectorEnv._add_info(infos, info, index)``.
AddInfo = Callable[[dict[str, Any], dict[str, Any], int], dict[str, Any]]
#: Two zeroed bool arrays of length ``num_envs`` to write info masks into, and what to report for each
#: (the arrays themselves, or tensors sharing their memory).
NewMasks = Callable[[], tuple[Sequence[np.ndarray], Sequence[Any]]]


def add_final_infos(
    infos: dict[str, Any],
    ended: Sequence[EndedEpisode],
    observations: Any,
    add_info: AddInfo,
    new_masks: NewMasks,
) -> dict[str, Any]:
    """``infos`` with the last observations and infos of the ``ended`` episodes, in vecrl's layout
    (``vecrl.final_observations``): the final observations as a dense batch, a copy of the step's
    ``observations`` (arrays, or tuples and dicts of arrays) with the ended rows replaced, with its
    ``"_"`` mask from ``new_masks()``; the final infos as gymnasium's same-step SyncVectorEnv of the
    installed version batches them.

    From gymnasium 1.1 on, final infos are batched by ``add_info`` (gymnasium's own ``_add_info``) under
    their key with a ``"_<key>"`` mask from ``new_masks()``; this is done once per step, not once per
    finished sub-env, which keeps episode ends cheap. Older gymnasium batches each final info like any
    info value, one sub-env at a time.

    Examples:
        >>> import gymnasium
        >>> env = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("CartPole-v1")] * 3)
        >>> def new_masks():
        ...     masks = (np.zeros(3, np.bool_), np.zeros(3, np.bool_))
        ...     return masks, masks
        >>> infos = add_final_infos({}, [(1, np.ones(4), {})], np.zeros((3, 4)), env._add_info, new_masks)
        >>> infos["_" + FINAL_OBS_KEY].tolist(), infos[FINAL_OBS_KEY][:, 0].tolist()
        ([False, True, False], [0.0, 1.0, 0.0])
    """
    (obs_mask, info_mask), (reported_obs_mask, reported_info_mask) = new_masks()
    finals = copy_batch(observations)
    rows = TreeRows(finals) if isinstance(finals, dict | tuple) else finals
    for index, observation, _ in ended:
        obs_mask[index] = True
        rows[index] = observation
    infos[FINAL_OBS_KEY], infos[f"_{FINAL_OBS_KEY}"] = finals, reported_obs_mask
    if not FINAL_INFOS_BATCHED_ONCE:
        for index, _, info in ended:
            infos = add_info(infos, {FINAL_INFO_KEY: info}, index)
        return infos
    final_infos: dict[str, Any] = {}
    for index, _, info in ended:
        info_mask[index] = True
        if info:  # gymnasium adds nothing for an empty info but its mask
            final_infos = add_info(final_infos, info, index)
    infos[FINAL_INFO_KEY], infos[f"_{FINAL_INFO_KEY}"] = final_infos, reported_info_mask
    return infos
