"""A video of a policy on an env of any engine that can draw itself: ``record_video`` and ``vecrl record``.

gym envs draw with ``render_mode="rgb_array"``; brax and MuJoCo Playground envs with their own ``render``,
MuJoCo's renderer over the states of the episode (as brax's and Playground's own notebooks do). Headless,
MuJoCo renders through EGL (``MUJOCO_GL=egl``, which ``import vecrl_evotorch`` sets where there is no display
and no choice was made) or OSMesa (``MUJOCO_GL=osmesa``). Where no frame can be drawn, a ``RecordError``
says in one line what to install.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium.spaces import Discrete

import vecrl
from vecrl.command import CommandError, first_line
from vecrl.errors import VecrlError
from vecrl.make import split_env_name
from vecrl.spaces import map_batch
from vecrl_policy.observations import observation_flattener

#: The engines that can draw their envs (``record_video`` refuses the others with the reason).
CANNOT_DRAW = {"envpool": "envpool's pools render no frames"}
NO_RENDERER = (
    "rendering MuJoCo needs EGL or OSMesa: apt-get install libegl1 (MUJOCO_GL=egl) or libosmesa6"
    " (MUJOCO_GL=osmesa)"
)


class RecordError(VecrlError, RuntimeError):
    """No video can be made as asked; the message says why and what to do, in one line."""


def record_video(
    env_name: str,
    policy: Callable[[torch.Tensor], Any],
    path: str | os.PathLike[str],
    *,
    seed: int = 0,
    max_steps: int = 1000,
) -> int:
    """Run one episode of ``policy`` (an ``nn.Module`` taking a flat float32 observation, as
    ``VecrlNE.to_policy`` gives it) on ``env_name`` from ``seed``, drawing each state, and write the frames
    to ``path`` (.mp4 or .gif); the number of frames written.

    Examples:
        >>> policy = lambda observation: torch.zeros(2)
        >>> record_video("gym::CartPole-v1", policy, "cartpole.mp4", max_steps=5)  # doctest: +SKIP
        6
    """
    prefix, _ = split_env_name(env_name)
    if prefix in CANNOT_DRAW:
        raise RecordError(
            f"cannot record {env_name}: {CANNOT_DRAW[prefix]}; record the same task on gym:: instead"
        )
    if Path(path).suffix.lower() not in (".mp4", ".gif"):
        raise RecordError(f"{str(path)!r}: the video's name must end in .mp4 or .gif")
    render_kwargs: dict[str, Any] = {"render_mode": "rgb_array"} if prefix == "gym" else {}
    env = vecrl.make_vector_env(env_name, num_envs=None, **render_kwargs)
    try:
        frames = _episode_frames(env, prefix, policy, seed, max_steps)
    finally:
        env.close()
    _write(frames, Path(path), fps=int(env.metadata.get("render_fps") or 30))
    return len(frames)


def _episode_frames(
    env: Any, prefix: str, policy: Callable[[torch.Tensor], Any], seed: int, max_steps: int
) -> list[Any]:
    # the observation as evaluate hands it to a policy (a batch of one, flattened)
    flatten = observation_flattener(env.observation_space, torch.float32, "cpu")
    discrete = isinstance(env.action_space, Discrete)
    observation, _ = env.reset(seed=seed)
    # frames (gym), or states (jax engines: drawn at the end, as their libraries' renderers take them)
    drawn: list[Any] = []

    def draw() -> None:
        if prefix != "gym":
            drawn.append(_state_of_row_0(jax_engine))
            return
        try:
            drawn.append(env.render())
        except Exception as error:  # a missing GL library surfaces as any error of the binding that loads it
            raise _no_frame(error) from error

    jax_engine = None if prefix == "gym" else env.unwrapped.vector_env  # (a SingleEnv's vector env)

    draw()
    with torch.no_grad():
        for _ in range(max_steps):
            output = policy(flatten(map_batch(lambda leaf: torch.as_tensor(leaf)[None], observation))[0])
            action = (
                int(torch.as_tensor(output).argmax())
                if discrete
                else torch.as_tensor(output).reshape(env.action_space.shape)
            )
            observation, _, terminated, truncated, _ = env.step(action)
            draw()
            if bool(terminated) or bool(truncated):
                break
    if prefix == "gym":
        return drawn
    return _render_states(jax_engine, prefix, drawn)


def _state_of_row_0(jax_engine: Any) -> Any:
    import jax

    return jax.tree_util.tree_map(lambda leaf: leaf[0], jax_engine.state)


def _check_gl_backend() -> None:
    """A RecordError where MuJoCo was imported before ``MUJOCO_GL`` was set (it picks its GL backend then, once),
    so that it draws through another backend than the one asked for."""
    import mujoco

    wanted = os.environ.get("MUJOCO_GL", "").lower()
    chosen = getattr(mujoco, "GLContext", None)
    if wanted and chosen is not None and not chosen.__module__.endswith(wanted):
        raise RecordError(
            f"MuJoCo was imported before MUJOCO_GL={wanted} was set, so it draws through {chosen.__module__}:"
            f" set MUJOCO_GL={wanted} in the environment (or import vecrl_evotorch before brax, mujoco or"
            " EvoTorch)"
        )


def _render_states(jax_engine: Any, prefix: str, states: list[Any]) -> list[Any]:
    """The frames of ``states`` as the env's library draws them: brax's ``render`` takes the physics states,
    Playground's the states themselves, gymnax's ``Visualizer`` its env states."""
    if prefix == "gymnax":
        return _gymnax_frames(jax_engine.jax_env, [state.env_state for state in states])
    _check_gl_backend()
    library_env = jax_engine.jax_env.env
    trajectory = [state.pipeline_state for state in states] if prefix == "brax" else states
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # Playground's render draws a progress bar there
            return list(library_env.render(trajectory))
    except Exception as error:  # as in draw(): the GL binding's own errors
        raise _no_frame(error) from error


def _no_frame(error: Exception) -> RecordError:
    """The RecordError for a renderer that raised ``error``: what it said, and what to install."""
    return RecordError(
        f"no frame could be drawn ({type(error).__name__}: {first_line(error)}); {NO_RENDERER}"
    )


def _gymnax_frames(env: Any, states: list[Any]) -> list[Any]:
    """gymnax's ``Visualizer`` of the env's ``states``, one canvas drawn per state (it draws its classic-control,
    MinAtar and bsuite envs; others are a RecordError)."""
    import matplotlib

    matplotlib.use("Agg")
    from gymnax.visualize import Visualizer

    visualizer = Visualizer(env.env, env.params, states)
    try:
        visualizer.init()
        if not hasattr(visualizer, "im"):
            raise RecordError(f"gymnax draws no frames of {env.env.name}")
        frames = []
        for index in range(len(states)):
            visualizer.update(index)
            visualizer.fig.canvas.draw()
            frames.append(np.asarray(visualizer.fig.canvas.buffer_rgba())[..., :3].copy())
        return frames
    except RecordError:
        raise
    except Exception as error:  # gymnax draws classic control with gymnasium's renderer, which needs pygame
        raise RecordError(f"gymnax could not draw {env.env.name}: {first_line(error)}") from error
    finally:
        import matplotlib.pyplot as plt

        plt.close(visualizer.fig)


def _write(frames: list[Any], path: Path, fps: int) -> None:
    """Every frame to ``path``, an MP4 (ffmpeg, through imageio-ffmpeg) or a GIF."""
    try:
        import imageio.v2 as imageio
    except ImportError as error:
        raise RecordError("writing a video needs imageio: pip install imageio imageio-ffmpeg") from error
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        imageio.mimwrite(path, [np.asarray(frame) for frame in frames], duration=1000 / fps, loop=0)
        return
    try:
        writer = imageio.get_writer(path, fps=fps, macro_block_size=1)  # any frame size, none rescaled
    except (ImportError, RuntimeError) as error:  # imageio-ffmpeg missing
        raise RecordError(
            f"writing an MP4 needs ffmpeg: pip install imageio-ffmpeg ({first_line(error)})"
        ) from error
    with writer:
        for frame in frames:
            writer.append_data(np.asarray(frame))


def record_command(args: argparse.Namespace) -> int:
    """``vecrl record`` with the parsed ``args``; its exit status."""
    policy = load_policy(args.policy)
    try:
        frames = record_video(args.env, policy, args.out, seed=args.seed, max_steps=args.max_steps)
    except RecordError as error:
        raise CommandError(str(error)) from error
    except (ValueError, TypeError, ImportError, LookupError) as error:
        raise CommandError(f"cannot record {args.env}: {first_line(error)}") from error
    print(f"{frames} frames saved to {args.out}")
    return 0


def load_policy(path: str | os.PathLike[str]) -> Any:
    """The policy saved at ``path`` by ``VecrlNE.save_solution`` (a run's ``champion.pickle``: a pickle, so
    load only files you trust); a CommandError saying why where it holds none."""
    try:
        with open(path, "rb") as file:
            saved = pickle.load(file)
    except Exception as error:  # unpickling a file that is no pickle raises whatever its bytes lead to
        raise CommandError(
            f"--policy {path}: cannot read it ({type(error).__name__}: {first_line(error)})"
        ) from error
    if not isinstance(saved, dict) or not isinstance(saved.get("policy"), torch.nn.Module):
        raise CommandError(
            f"--policy {path}: holds no saved policy (a champion.pickle of vecrl evolve is one)"
        )
    return saved["policy"]
