"""make_jax_vector_env: the body of every jax backend's ``make``."""

from __future__ import annotations

from typing import Any, TypeVar

from vecrl.contract import EpisodeOptions
from vecrl.single_env import SingleEnv, one_or_batched
from vecrl_jax.vector_env import JaxVectorEnv

JaxEnvClass = TypeVar("JaxEnvClass", bound=JaxVectorEnv)


def make_jax_vector_env(
    env_class: type[JaxEnvClass],
    prefix: str,
    env_name: str,
    /,  # brax's envs take a keyword `backend` of their own, in kwargs
    *,
    num_envs: int | None = None,
    num_episodes: int | None = None,
    autoreset_mode: Any = EpisodeOptions.autoreset_mode,
    **kwargs: Any,
) -> JaxEnvClass | SingleEnv:
    """``env_class`` (a ``JaxVectorEnv`` subclass, serving ``prefix``) with ``num_envs`` sub-envs, speaking
    torch tensors; ``num_envs=None`` gives a single env (``vecrl.single_env.SingleEnv``: one sub-env, no
    autoreset), as on the gym backend.

    Examples:
        >>> from vecrl_jax.vector_env import JaxVectorEnv
        >>> make_jax_vector_env(JaxVectorEnv, "mine", "x", num_envs=2)
        Traceback (most recent call last):
        ...
        NotImplementedError: JaxVectorEnv steps the env that its subclass's make_env(env_name, kwargs) returns: subclass it (as vecrl-brax's VectorEnvFromBrax does), or use a jax backend's env.
    """
    # array_type="torch": the env hands torch tensors (DLPack views of its jax results) to TorchWrapper, which
    # then passes torch actions through unconverted; the env takes a CPU tensor as a numpy view, the
    # cheapest way into jax (jax.dlpack.from_dlpack costs ~0.1-0.3 ms per step on CPU).
    return one_or_batched(
        f"make_vector_env('{prefix}::{env_name}')",
        lambda n, mode: env_class(
            env_name, num_envs=n, num_episodes=num_episodes, array_type="torch", autoreset_mode=mode, **kwargs
        ),
        num_envs=num_envs,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
    )
