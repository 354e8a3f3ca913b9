"""The vecrl plugin of this package: it serves the ``gym`` prefix (also the default prefix)."""

from __future__ import annotations

import vecrl

BACKEND = vecrl.Backend(
    prefix="gym",
    make="vecrl_gym.make:make_gym_vector_env",
    description="gymnasium environments, stepped in lockstep on the CPU with same-step autoreset",
    keywords=(
        "autoreset_mode",
        "device",
        "empty_info",
        "num_episodes",
        "num_workers",
        "observation_mode",
        "render_mode",
        "seed_rule",
        "wrappers",
    ),
    refusals={"episode_length": "gymnasium's own keyword for it is max_episode_steps= (gymnasium.make's)"},
)


@vecrl.hookimpl
def vecrl_backends() -> list[vecrl.Backend]:
    """The ``gym`` backend: ``vecrl.make_vector_env("gym::CartPole-v1", num_envs=8)``.

    Examples:
        >>> [backend.prefix for backend in vecrl_backends()]
        ['gym']
    """
    return [BACKEND]
