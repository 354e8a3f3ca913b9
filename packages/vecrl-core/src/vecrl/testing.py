"""Checks a backend author runs against a backend: shapes, dtypes, seeding, the classic API, close.

Observations may be tensors or (for Dict observation spaces) dicts of tensors, nested like the space.

Example (in a plugin's test suite)::

    from vecrl.testing import check_backend
    from vecrl_toy import make_toy_env

    def test_toy_backend_follows_the_vecrl_contract():
        check_backend(make_toy_env, "Toy-v0", num_envs=3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from gymnasium.spaces import Dict, Space

from vecrl.actions import random_action_sampler
from vecrl.registry import isolated_registry
from vecrl.torch_wrapper import TorchWrapper

__all__ = [
    "BackendCheckError",
    "check_backend",
    "check_classic_api",
    "check_close",
    "check_reset_and_step",
    "isolated_registry",
    "random_actions",
]


class BackendCheckError(AssertionError):
    """A backend broke the vecrl contract; the message says which check and what was seen."""


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise BackendCheckError(message)


def random_actions(env: TorchWrapper, seed: int = 0) -> torch.Tensor:
    """A batch of valid random actions for the vector env ``env``, as a tensor (reproducible by ``seed``).

    Example:
        >>> actions = random_actions(env, seed=1)  # doctest: +SKIP
    """
    return random_action_sampler(env.single_action_space, env.num_envs, seed=seed)()


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

    Example:
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
        _check_observation(observation, obs_space, num_envs, "reset() observation")
        _expect(isinstance(info, dict), f"reset() info must be a dict, got {type(info).__qualname__}.")
        seen = [leaf.detach().cpu().clone() for leaf in _leaves(observation)]
        for step in range(num_steps):
            result = env.step(random_actions(env, seed=seed + step))
            _expect(len(result) == 5, f"step() must return 5 items, got {len(result)}.")
            observation, reward, terminated, truncated, info = result
            _check_observation(observation, obs_space, num_envs, "step() observation")
            _check_tensor(reward, (num_envs,), None, "step() reward")
            _check_tensor(terminated, (num_envs,), torch.bool, "step() terminated")
            _check_tensor(truncated, (num_envs,), torch.bool, "step() truncated")
            _expect(isinstance(info, dict), f"step() info must be a dict, got {type(info).__qualname__}.")
            seen.extend(leaf.detach().cpu().clone() for leaf in _leaves(observation))
            seen.append(reward.detach().cpu().clone())
    finally:
        check_close(env)
    return seen


def check_classic_api(
    make: Callable[..., TorchWrapper], env_name: str, *, num_envs: int = 3, **kwargs: Any
) -> None:
    """Check that ``force_classic_api=True`` gives ``obs`` from reset and ``(obs, reward, done, info)``."""
    env = make(env_name, num_envs=num_envs, force_classic_api=True, **kwargs)
    try:
        observation = env.reset(seed=0)
        _expect(
            isinstance(observation, (torch.Tensor, Mapping)),
            "reset() under force_classic_api must return only obs.",
        )
        result = env.step(random_actions(env))
        _expect(len(result) == 4, f"step() under force_classic_api must return 4 items, got {len(result)}.")
        _check_tensor(result[2], (num_envs,), torch.bool, "step() done under force_classic_api")
    finally:
        check_close(env)


def check_close(env: TorchWrapper) -> None:
    """Check that ``close()`` works and can be called twice."""
    env.close()
    env.close()


def _check_observation(x: object, space: Space, num_envs: int, what: str) -> None:
    """Check a batched observation: a tensor of shape (num_envs, *space.shape), or for a Dict space a
    dict with the space's keys, checked leaf by leaf."""
    if isinstance(space, Dict):
        _expect(
            isinstance(x, Mapping) and set(x) == set(space.spaces),
            f"{what} must be a dict with the keys {sorted(space.spaces)} of the Dict observation space, got"
            f" {sorted(x) if isinstance(x, Mapping) else type(x).__qualname__}.",
        )
        assert isinstance(x, Mapping)
        for key, subspace in space.spaces.items():
            _check_observation(x[key], subspace, num_envs, f"{what}[{key!r}]")
    else:
        _check_tensor(x, (num_envs, *(space.shape or ())), None, what)


def _leaves(x: Any) -> list[torch.Tensor]:
    """The tensors of an observation: itself, or the leaves of a (nested) dict in key order."""
    if isinstance(x, Mapping):
        return [leaf for key in sorted(x) for leaf in _leaves(x[key])]
    return [x]


def _check_tensor(x: object, shape: tuple[int, ...], dtype: torch.dtype | None, what: str) -> None:
    _expect(isinstance(x, torch.Tensor), f"{what} must be a torch.Tensor, got {type(x).__qualname__}.")
    assert isinstance(x, torch.Tensor)
    _expect(tuple(x.shape) == shape, f"{what} has shape {tuple(x.shape)}, expected {shape}.")
    _expect(dtype is None or x.dtype == dtype, f"{what} has dtype {x.dtype}, expected {dtype}.")
