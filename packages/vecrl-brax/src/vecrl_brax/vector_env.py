"""VectorEnvFromBrax: brax environments on vecrl's jax engine (``vecrl_jax.JaxVectorEnv``)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium.spaces import Box

from vecrl.checks import did_you_mean
from vecrl_brax.brax_versions import env_keywords, resolve_create
from vecrl_jax.brax_style import BraxStyleEnv
from vecrl_jax.keywords import JAX_REFUSALS
from vecrl_jax.model_params import ModelParams
from vecrl_jax.vector_env import JaxVectorEnv

#: Keywords VectorEnvFromBrax sets itself (passing them through would break its autoreset or batch size),
#: and those of other backends.
_RESERVED_KWARGS = {
    **JAX_REFUSALS,
    "auto_reset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
    "autoreset": "VectorEnvFromBrax always resets finished episodes itself, from a fresh random state",
}


class VectorEnvFromBrax(JaxVectorEnv):
    """``num_envs`` copies of the brax env ``env_name``, stepped together in one jitted call, with the
    episode rules of ``vecrl_jax.JaxVectorEnv`` (autoreset modes, masked resets, budgets, seeding, results).

    The env is ``brax.envs.create(env_name, auto_reset=False, **brax_kwargs)`` (``brax.v1.envs.create`` for
    ``"old::NAME"``), batched with ``jax.vmap``: every other keyword (``episode_length``,
    ``action_repeat``, ``backend``, the env's constructor arguments) reaches brax unchanged. Its action
    space is the actuators' control range; a new episode starts from a fresh random state (a new key per
    reset, unlike brax's own ``AutoResetWrapper``, which replays the first state).

    Examples:
        >>> env = VectorEnvFromBrax("inverted_pendulum", num_envs=4, episode_length=100)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (4, 4)
        >>> _ = env.step(np.ones((4, 1), np.float32))
        >>> obs, _ = env.reset(options={"reset_mask": [True, False, False, False]})  # row 0 restarts alone
    """

    reserved_kwargs: ClassVar[Mapping[str, str]] = _RESERVED_KWARGS

    @property
    def brax_env(self) -> Any:
        """The brax env its sub-envs are copies of (with brax's ``EpisodeWrapper`` where it has a time limit)."""
        return self.jax_env.env  # type: ignore[attr-defined]

    @staticmethod
    def make_env(env_name: str, kwargs: Mapping[str, Any]) -> BraxStyleEnv:
        """``brax.envs.create(env_name, auto_reset=False, **kwargs)`` as a ``JaxEnv``; a keyword the env does
        not take is a TypeError listing those it takes."""
        create, brax_name = resolve_create(env_name)
        try:
            env = create(brax_name, batch_size=None, auto_reset=False, **kwargs)
        except TypeError as error:
            if "unexpected keyword argument" not in str(error):
                raise
            known = env_keywords(create, brax_name)
            unknown = [key for key in kwargs if key not in known]
            raise TypeError(
                f"brax's {env_name!r} does not take a keyword given ({error}). It takes: {', '.join(sorted(known))}."
                f"{did_you_mean(unknown[0], known) if unknown else ''}"
            ) from None
        return BraxStyleEnv(env, action_space(env), model_params(env))


def model_params(env: Any) -> ModelParams | None:
    """The model fields a brax env's sub-envs may vary (``vecrl.params``), those its physics reads: None for a
    ``brax.v1`` env, whose system is of another kind."""
    system = getattr(env.unwrapped, "sys", None)
    if system is None or not hasattr(system, "body_mass") or not hasattr(system, "link"):
        return None
    return ModelParams("sys", BRAX_PARAMS, brax_mirrors=True)


#: What brax's pipelines read of ``vecrl.params.MUJOCO_FIELDS`` (not the body inertia, which its links hold
#: as full matrices in another frame, nor the dofs' friction loss), and gravity.
BRAX_PARAMS = ("body_mass", "geom_friction", "dof_damping", "dof_armature", "actuator_gear", "gravity")


def action_space(env: Any) -> Box:
    """A float32 Box bounded by the actuators' control range (``env.sys.actuator.ctrl_range``).

    Envs without that range (brax.v1 envs, or an actuator count that does not match ``action_size``)
    get ``[-1, 1]``, the range brax's own training code assumes, with a warning saying why.

    Examples:
        >>> import brax.envs
        >>> action_space(brax.envs.create("inverted_pendulum"))
        Box(-3.0, 3.0, (1,), float32)
    """
    size = int(env.action_size)
    ctrl_range = getattr(getattr(getattr(env, "sys", None), "actuator", None), "ctrl_range", None)
    if ctrl_range is not None:
        bounds = np.asarray(ctrl_range, dtype=np.float32)
        if bounds.shape == (size, 2):
            return Box(low=bounds[:, 0], high=bounds[:, 1], dtype=np.float32)
        reason = f"its actuator ctrl_range has shape {bounds.shape}, not ({size}, 2)"
    else:
        reason = "it exposes no sys.actuator.ctrl_range"
    warnings.warn(
        f"The brax env {type(env).__name__} gets the action space [-1, 1]^{size} because {reason}.",
        stacklevel=3,
    )
    return Box(-1.0, 1.0, shape=(size,), dtype=np.float32)
