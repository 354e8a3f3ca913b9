"""The vecrl plugin of this package: it serves the ``envpool`` prefix.

Importing this module does not import envpool; it is imported when an env is made.
"""

from __future__ import annotations

import vecrl
from vecrl.hookspecs import serving

BACKEND = vecrl.Backend(
    prefix="envpool",
    make="vecrl_envpool.make:make_envpool_vector_env",
    description="envpool's C++ environments (classic control, MuJoCo, Atari, ...), stepped in threads",
    keywords=("autoreset_mode", "batch_size", "device", "num_episodes", "render_mode", "seed_rule"),
    refusals={
        "episode_length": "envpool's own keyword for it is max_episode_steps=",
        "num_workers": "envpool steps its sub-envs in C++ threads of its own: give num_threads= instead",
        "wrappers": "it applies gymnasium wrappers to each sub-env of the gym backend, but envpool's sub-envs"
        " are C++ objects. For gymnasium's vector wrappers use make_vector_env(..., vector_wrappers=[...])",
    },
)

vecrl_backends = serving(BACKEND)
