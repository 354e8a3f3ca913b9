"""make_brax_env: a brax env name to a vecrl.TorchWrapper around a VectorEnvFromBrax."""

from __future__ import annotations

from typing import Any

from vecrl import Backend, TorchWrapper
from vecrl.single_env import one_or_batched
from vecrl_brax.plugin import BACKEND
from vecrl_brax.vector_env import JaxVectorEnv, VectorEnvFromBrax


def make_brax_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    num_episodes: int | None = None,
    autoreset_mode: Any = "same_step",
    **kwargs: Any,
) -> TorchWrapper:
    """Make ``num_envs`` brax envs, batched, jitted, and speaking torch.

    ``env_name`` is a brax env (``"ant"``) or, with ``"old::ant"``, a ``brax.v1`` env. ``kwargs``
    (``episode_length``, ``action_repeat``, ``backend``, constructor arguments) reach
    ``brax.envs.create``. See ``VectorEnvFromBrax`` for ``autoreset_mode`` (``"same_step"``, ``"next_step"``
    or ``"disabled"``), masked resets, ``num_episodes`` and seeding.

    Examples:
        >>> env = make_brax_env("inverted_pendulum", num_envs=8, episode_length=200)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        (torch.Size([8, 4]), torch.float32)
    """
    return make_torch_env(
        VectorEnvFromBrax,
        BACKEND,
        "make_brax_env",
        env_name,
        force_classic_api=force_classic_api,
        num_envs=num_envs,
        discrete_to_continuous_act=discrete_to_continuous_act,
        clip_actions=clip_actions,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
        **kwargs,
    )


def make_torch_env(
    env_class: type[JaxVectorEnv],
    backend: Backend,
    caller: str,
    env_name: str,
    /,  # brax's envs take a keyword `backend` of their own, in kwargs
    *,
    force_classic_api: bool,
    num_envs: int | None,
    discrete_to_continuous_act: bool,
    clip_actions: bool,
    num_episodes: int | None,
    autoreset_mode: Any,
    **kwargs: Any,
) -> TorchWrapper:
    """``env_class`` (``VectorEnvFromBrax``, or a ``JaxVectorEnv`` of another jax backend) made to speak torch: the
    body of ``make_brax_env``, shared with ``vecrl_playground.make_playground_env`` (``backend`` is the one
    it serves, ``caller`` names the function the user called, in the errors). ``num_envs=None`` gives a
    single env (``vecrl.single_env.SingleEnv``: one sub-env, no autoreset), as on the gym backend."""
    # vecrl's keywords the backend does not take (`wrappers=`: the jax envs take **kwargs and would ignore it)
    backend.check_keywords(f"{caller}({env_name!r})", kwargs)
    # array_type="torch": the env hands torch tensors (DLPack views of its jax results) to TorchWrapper, which
    # then passes torch actions through unconverted; the env takes a CPU tensor as a numpy view, the
    # cheapest way into jax (jax.dlpack.from_dlpack costs ~0.1-0.3 ms per step on CPU).
    env = one_or_batched(
        f"{caller}({env_name!r})",
        lambda n, mode: env_class(
            env_name, num_envs=n, num_episodes=num_episodes, array_type="torch", autoreset_mode=mode, **kwargs
        ),
        num_envs=num_envs,
        num_episodes=num_episodes,
        autoreset_mode=autoreset_mode,
    )
    return TorchWrapper(
        env,
        force_classic_api=force_classic_api,
        discrete_to_continuous_act=discrete_to_continuous_act,
        clip_actions=clip_actions,
    )
