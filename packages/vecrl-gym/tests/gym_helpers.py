"""Shared helpers: the plain per-env loop that SyncVectorEnv must reproduce, and version-aware names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from vecrl.compat import FINAL_OBS_KEY, GYMNASIUM_1
from vecrl.final_observations import observations_before_restart

MUJOCO_ENV_ID = "InvertedPendulum-v5" if GYMNASIUM_1 else "InvertedPendulum-v4"
#: gymnasium's wrappers that work on a vector env: gymnasium.wrappers.vector on 1.x, gym.Wrapper on 0.29.
VECTOR_WRAPPERS: Any = gym.wrappers.vector if GYMNASIUM_1 else gym.wrappers


def sub_seeds(seed: int, num_envs: int) -> list[int]:
    """The sub-env seeds an int seed stands for (EvoTorch's derivation)."""
    return [int(s) for s in np.random.RandomState(seed).randint(0, 2**32, num_envs)]


def hand_rollout(
    env_id: str,
    seeds: Sequence[int],
    actions: Sequence[np.ndarray],
    num_episodes: int | None = None,
    **make_kwargs: Any,
) -> tuple[list[np.ndarray], list[tuple[np.ndarray, ...]], list[Any]]:
    """The specification, as a plain loop over gym.make envs: eager autoreset, per-env episode budgets.

    Returns the reset observations, the (obs, reward, terminated, truncated) batch of every step, and
    the sub-envs (to continue from).
    """
    envs = [gym.make(env_id, **make_kwargs) for _ in seeds]
    first = np.stack([env.reset(seed=seed)[0] for env, seed in zip(envs, seeds, strict=True)])
    left = [num_episodes] * len(envs)
    steps = []
    for batch in actions:
        obs, rewards, terms, truncs = [], [], [], []
        for i, env in enumerate(envs):
            if left[i] == 0:
                spent = np.full(env.observation_space.shape, np.nan)
                obs.append(spent)
                rewards.append(np.nan)
                terms.append(True)
                truncs.append(True)
                continue
            o, r, term, trunc, _ = env.step(batch[i])
            if term or trunc:
                next_obs, _ = env.reset()
                if left[i] is not None:
                    left[i] -= 1
                if left[i] != 0:
                    o = next_obs
            obs.append(o)
            rewards.append(r)
            terms.append(term)
            truncs.append(trunc)
        steps.append((np.stack(obs), np.array(rewards, dtype=float), np.array(terms), np.array(truncs)))
    return first, steps, envs


def random_actions(env: Any, num_steps: int, seed: int = 0) -> list[np.ndarray]:
    """``num_steps`` random action batches for the vector env ``env``."""
    space = env.action_space
    space.seed(seed)
    return [space.sample() for _ in range(num_steps)]


def in_vecrl_layout(observation: Any, info: dict[str, Any]) -> dict[str, Any]:
    """gymnasium's same-step ``info`` with the final observations as vecrl lays them out: a batch like
    ``observation``, the final observation where an episode ended (``vecrl.final_observations``)."""
    if FINAL_OBS_KEY not in info:
        return info
    return {**info, FINAL_OBS_KEY: observations_before_restart(observation, info)}


def assert_same_info(actual: Any, expected: Any, path: str = "info") -> None:
    """Deep equality for batched infos: dicts, numeric arrays, object arrays of arrays/dicts/None."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert sorted(actual) == sorted(expected), f"{path}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_same_info(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, np.ndarray) and expected.dtype == object:
        assert isinstance(actual, np.ndarray) and actual.dtype == object, path
        assert actual.shape == expected.shape, path
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same_info(a, e, f"{path}[{i}]")
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), path
        assert actual.dtype == expected.dtype, f"{path}: {actual.dtype} != {expected.dtype}"
        np.testing.assert_array_equal(actual, expected, err_msg=path)
    else:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
