"""The keywords of ``make_vector_env`` that every jax backend takes, refuses, or sets itself, each with why.

Imports neither jax nor any env library: the backends' plugin modules read it when vecrl lists backends.
"""

from __future__ import annotations

#: vecrl's keywords the jax backends take; ``JAX_REFUSALS`` says why not the others.
JAX_KEYWORDS = ("autoreset_mode", "episode_length", "num_episodes", "render_mode", "seed_rule")
JAX_REFUSALS = {
    "batch_size": "a jax env steps every sub-env in one jitted call; async batches (send/recv) are those of"
    " gym:: with worker processes and of envpool::. Give the number of sub-environments as num_envs=",
    "device": "a jax env computes on jax's default device and hands its results to torch there, without a"
    " copy (DLPack); choose that device through jax (e.g. JAX_PLATFORMS=cpu), or move the results with .to()",
    "num_workers": "worker processes are the gym backend's; a jax env already steps all its sub-envs in one"
    " jitted call: give more sub-envs (num_envs=) instead",
    "wrappers": "it applies gymnasium wrappers to each sub-env of the gym backend, but a jax env is one batched"
    " env with no sub-env objects. For gymnasium's vector wrappers use make_vector_env(..., vector_wrappers=[...]);"
    " for the env library's own wrappers, wrap its env",
}
