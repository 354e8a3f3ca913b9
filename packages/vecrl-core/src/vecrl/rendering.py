"""Frames of a sub-env, the same way on every backend: the rendering member of the backend contract.

A backend's vector env (``HostVectorEnv`` or ``vecrl_jax.JaxVectorEnv``, or any ``EpisodeVectorEnv``) made with
``render_mode="rgb_array"`` gives two methods, which ``vecrl record`` and ``vecrl evolve --video`` call and
nothing else:

- ``render_snapshot(index)``: what sub-env ``index`` shows now, kept until the frames are drawn: a frame (an
  RGB array of shape (height, width, 3)) where the backend draws at once (gym, envpool), or the sub-env's
  state where its library draws a whole episode at once (brax, Playground, gymnax: the jax engine hands the
  states to its ``JaxEnv``'s ``render(states)``);
- ``render_frames(snapshots)``: the RGB frames of a list of snapshots, in order (the snapshots themselves
  where they are frames).

An env that cannot draw raises ``NoFrames``, saying why and what would let it.

Examples:
    >>> import vecrl
    >>> env = vecrl.make_vector_env("gym::CartPole-v1", num_envs=2, render_mode="rgb_array")
    >>> _ = env.reset(seed=0)
    >>> frames = env.unwrapped.render_frames([env.unwrapped.render_snapshot(1)])
    >>> frames[0].shape
    (400, 600, 3)
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from vecrl.errors import VecrlError

#: The render mode an env draws its frames in for ``render_snapshot`` (gymnasium's name for RGB arrays).
RGB = "rgb_array"


class NoFrames(VecrlError, RuntimeError):
    """An env that cannot draw frames as asked: the message says why, and what would let it. A RuntimeError."""


def checked_render_mode(render_mode: Any, owner: str) -> str | None:
    """``render_mode`` if it is None or ``"rgb_array"`` (what an env that draws from its states takes); a
    ValueError naming ``owner`` otherwise.

    Examples:
        >>> checked_render_mode("human", "BraxEnv")
        Traceback (most recent call last):
        ...
        ValueError: BraxEnv draws frames as RGB arrays: render_mode must be None or 'rgb_array', got 'human'.
    """
    if render_mode not in (None, RGB):
        raise ValueError(
            f"{owner} draws frames as RGB arrays: render_mode must be None or {RGB!r}, got {render_mode!r}."
        )
    return render_mode


def needs_rgb_mode(env: Any, index: Any = None) -> None:
    """A ``NoFrames`` where ``env`` was not made with ``render_mode="rgb_array"``, which drawing needs; with
    ``index`` (``render_snapshot``'s), an IndexError unless it names one of the env's sub-envs.

    Examples:
        >>> class Env:
        ...     render_mode, num_envs = RGB, 2
        >>> needs_rgb_mode(Env(), 5)
        Traceback (most recent call last):
        ...
        IndexError: render_snapshot(5): this env has 2 sub-envs, 0 to 1; give one of those
    """
    if getattr(env, "render_mode", None) != RGB:
        raise NoFrames(
            f"{type(env).__name__} was made with render_mode={getattr(env, 'render_mode', None)!r}: make it with"
            f" render_mode={RGB!r} to draw its frames (vecrl.make_vector_env(..., render_mode={RGB!r}))"
        )
    if index is None:
        return
    count = int(env.num_envs)
    if isinstance(index, bool) or not isinstance(index, Integral) or not 0 <= int(index) < count:
        raise IndexError(
            f"render_snapshot({index!r}): this env has {count} sub-envs, 0 to {count - 1}; give one of those"
        )
