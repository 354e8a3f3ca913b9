"""A small gymnasium env whose observation and action spaces use every space gymnasium batches densely.

gymnasium ships no env with MultiBinary, MultiDiscrete or nested Tuple/Dict spaces, so the tests that
check vecrl batches them as gymnasium does step this one (registered as ``vecrl-test/Composite-v0``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Tuple

ENV_ID = "vecrl-test/Composite-v0"

OBSERVATION_SPACE = Dict(
    {
        "pos": Box(-np.inf, np.inf, (2,), np.float64),
        "cell": Discrete(5, start=1),
        "keys": MultiBinary(3),
        "doors": MultiDiscrete([2, 3]),
        "pair": Tuple((Discrete(2), Box(0, 10, (2,), np.int32))),
    }
)
ACTION_SPACE = Tuple(
    (
        Discrete(3),
        Box(-1.0, 1.0, (2,), np.float32),
        Dict({"door": MultiDiscrete([2, 3]), "flag": MultiBinary(2)}),
    )
)


class CompositeEnv(gymnasium.Env):
    """Random walk in ``pos`` driven by the Box action; the other entries echo the action or the rng.

    Each step ends the episode (terminated) with probability 0.2; ``max_episode_steps`` truncates.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's own type)
    observation_space = OBSERVATION_SPACE
    action_space = ACTION_SPACE

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self._pos = self.np_random.normal(size=2)
        self._steps = 0
        return self._observation(0, np.zeros(2, np.int64), np.zeros(2, np.int8)), {
            "start": float(self._pos[0])
        }

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        choice, move, extra = action
        self._pos = self._pos + np.asarray(move, np.float64)
        self._steps += 1
        reward = float(-np.abs(self._pos).sum() + choice + extra["flag"].sum())
        terminated = bool(self.np_random.random() < 0.2)
        observation = self._observation(int(choice), extra["door"], extra["flag"])
        return observation, reward, terminated, False, {"steps": self._steps}

    def _observation(self, choice: int, door: np.ndarray, flag: np.ndarray) -> dict[str, Any]:
        return {
            "pos": self._pos.copy(),
            "cell": 1 + (choice + self._steps) % 5,
            "keys": self.np_random.integers(0, 2, 3).astype(np.int8),
            "doors": np.asarray(door, np.int64),
            "pair": (int(flag[0]), np.array([self._steps % 11, choice], np.int32)),
        }


if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point=CompositeEnv, max_episode_steps=6)
