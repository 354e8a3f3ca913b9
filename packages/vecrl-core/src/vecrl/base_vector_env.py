"""BaseVectorEnv: one constructor for gymnasium 0.29.1's and 1.x's VectorEnv."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import gymnasium
import numpy as np
from gymnasium.spaces import Box, Space

from vecrl.checks import checked_num_envs
from vecrl.compat import GYMNASIUM_1, same_step_metadata
from vecrl.contract import Capabilities
from vecrl.spaces import batched_space

# a backend written before capabilities set these on its class, where they would now be silently ignored
_CAPABILITY_NAMES = tuple(field.name for field in fields(Capabilities))


class BaseVectorEnv(gymnasium.vector.VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` built from the number of sub-envs and the spaces of one sub-env.

    gymnasium 0.29.1's ``VectorEnv.__init__`` takes these arguments and 1.x's takes none; this class
    takes them on both and sets ``num_envs``, ``single_observation_space``, ``single_action_space`` and
    the batched ``observation_space`` / ``action_space`` as gymnasium batches them (Box gains a batch
    dimension, Discrete becomes MultiDiscrete, Tuple and Dict batch each part). Every space gymnasium
    batches densely is supported (see ``vecrl.spaces``); others are a TypeError naming the space.
    Subclasses autoreset in the same step, which ``metadata["autoreset_mode"]`` declares where gymnasium
    has autoreset modes. ``reward_space`` (a Box of ``reward_dtype``, float64 as in gymnasium's own
    vector envs unless said otherwise) declares the dtype of the rewards, which TorchRL's ``GymWrapper``
    reads to type its reward spec; its shape ``(num_envs, 1)`` is the reward spec TorchRL gives batched
    envs, which it would take a scalar Box to be at ``num_envs=1`` only.

    Examples:
        >>> from gymnasium.spaces import Box, Discrete
        >>> class Idle(BaseVectorEnv):
        ...     pass
        >>> Idle(4, Box(-1.0, 1.0, (3,)), Discrete(2)).action_space
        MultiDiscrete([2 2 2 2])
    """

    metadata: dict[str, Any] = {"render_modes": [], **same_step_metadata()}  # noqa: RUF012 (gymnasium's own type)
    #: True where the first ``reset()`` and ``step()`` compile (jax backends): tools such as ``vecrl bench``
    #: then say so before that pause and leave it out of the rates they report.
    jit_compiled: bool = False
    #: What this backend can do beyond the contract's minimum (``vecrl.contract.Capabilities``).
    capabilities: Capabilities = Capabilities()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _CAPABILITY_NAMES:
            if name in cls.__dict__:
                raise TypeError(
                    f"{cls.__name__} sets {name} as a class attribute, which vecrl no longer reads: declare it"
                    f" as capabilities = vecrl.Capabilities({name}={cls.__dict__[name]!r})."
                )

    def __init__(
        self,
        num_envs: int,
        single_observation_space: Space,
        single_action_space: Space,
        *,
        reward_dtype: type[np.floating] = np.float64,
    ) -> None:
        num_envs = checked_num_envs(num_envs)
        observation_space = batched_space(single_observation_space, num_envs, "observation space")
        action_space = batched_space(single_action_space, num_envs, "action space")
        if GYMNASIUM_1:
            super().__init__()
        else:  # gymnasium 0.29: its __init__ batches the spaces itself and sets closed/viewer
            super().__init__(num_envs, single_observation_space, single_action_space)  # type: ignore[call-arg]
        self.num_envs = num_envs
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = observation_space
        self.action_space = action_space
        self.reward_space = Box(-np.inf, np.inf, (num_envs, 1), reward_dtype)
