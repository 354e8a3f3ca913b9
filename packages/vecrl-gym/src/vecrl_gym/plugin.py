"""The vecrl plugin of this package: it serves the ``gym`` prefix (also the default prefix)."""

from __future__ import annotations

import vecrl
from vecrl.backend import OPTIONAL_KEYWORDS
from vecrl.hookspecs import serving

BACKEND = vecrl.Backend(
    prefix="gym",
    make="vecrl_gym.make:make_gym_vector_env",
    check_name="vecrl_gym.names:check_gym_id",
    description="gymnasium environments, stepped in lockstep on the CPU with same-step autoreset",
    # every optional keyword of vecrl's but the one gymnasium spells its own way
    keywords=tuple(k for k in OPTIONAL_KEYWORDS if k != "episode_length"),
    refusals={"episode_length": "gymnasium's own keyword for it is max_episode_steps= (gymnasium.make's)"},
)

vecrl_backends = serving(BACKEND)
