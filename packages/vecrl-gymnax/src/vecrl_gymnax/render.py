"""Frames of gymnax states, drawn by gymnax's own ``Visualizer`` (matplotlib, imported here only)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vecrl.rendering import NoFrames


def gymnax_frames(env: Any, params: Any, env_states: list[Any]) -> list[np.ndarray]:
    """The RGB frames gymnax's ``Visualizer`` draws of the gymnax ``env``'s ``env_states`` (with ``params``), one
    canvas per state: its classic-control, MinAtar and bsuite envs; a ``NoFrames`` for the others.

    Examples:
        >>> import gymnax, jax
        >>> env, params = gymnax.make("Catch-bsuite")
        >>> _, state = env.reset_env(jax.random.PRNGKey(0), params)
        >>> gymnax_frames(env, params, [state])[0].shape[-1]
        3
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gymnax.visualize import Visualizer

    visualizer = Visualizer(env, params, env_states)
    try:
        visualizer.init()
        if not hasattr(visualizer, "im"):
            raise NoFrames(f"gymnax draws no frames of {env.name}")
        frames = []
        for index in range(len(env_states)):
            visualizer.update(index)
            visualizer.fig.canvas.draw()
            frames.append(np.asarray(visualizer.fig.canvas.buffer_rgba())[..., :3].copy())
        return frames
    except NoFrames:
        raise
    except Exception as error:  # gymnax draws classic control with gymnasium's renderer, which needs pygame
        raise NoFrames(f"gymnax could not draw {env.name}: {str(error).splitlines()[0]}") from error
    finally:
        plt.close(visualizer.fig)
