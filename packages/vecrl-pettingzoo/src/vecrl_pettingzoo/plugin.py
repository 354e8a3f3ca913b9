"""The vecrl plugin of this package: it serves the ``pettingzoo`` prefix.

Importing this module does not import PettingZoo; it is imported when an env is made.
"""

from __future__ import annotations

import vecrl
from vecrl.hookspecs import serving

BACKEND = vecrl.Backend(
    prefix="pettingzoo",
    make="vecrl_pettingzoo.make:make_pettingzoo_vector_env",
    description="PettingZoo's parallel envs (MPE2, butterfly, ...), a row per agent of each world",
    keywords=("autoreset_mode", "batch_size", "empty_info", "num_episodes", "num_workers", "seed_rule"),
    refusals={
        "device": "its worlds step in Python on the CPU; move the tensors yourself",
        "episode_length": "PettingZoo's own keyword for it is max_cycles= (MPE's, butterfly's)",
        "wrappers": "its worlds are PettingZoo envs, not gymnasium envs: wrap the module's parallel_env yourself",
        "observation_mode": "its rows observe one padded space",
        "render_mode": "it does not draw its worlds",
    },
)

vecrl_backends = serving(BACKEND)
