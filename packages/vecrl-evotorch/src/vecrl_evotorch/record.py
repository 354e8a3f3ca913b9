"""A video of a policy on an env of any backend that draws itself: ``record_video`` and ``vecrl record``.

The env draws through the backend contract's rendering member (``vecrl.rendering``: ``render_snapshot`` at
each step, ``render_frames`` at the end), which gym, envpool, brax, MuJoCo Playground and gymnax implement, and
any third-party backend can. Headless, MuJoCo renders through EGL (``MUJOCO_GL=egl``, which ``import
vecrl_evotorch`` sets where there is no display and no choice was made) or OSMesa (``MUJOCO_GL=osmesa``).
Where no frame can be drawn, a ``RecordError`` says in one line why, or what to install.
"""

from __future__ import annotations

import argparse
import os
import pickle
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium.error import DependencyNotInstalled
from gymnasium.spaces import Discrete

import vecrl
from vecrl.command import CommandError, first_line
from vecrl.errors import VecrlError
from vecrl.nests import map_batch
from vecrl.rendering import NoFrames
from vecrl_policy.observations import observation_flattener

NO_RENDERER = (
    "rendering MuJoCo needs EGL or OSMesa: apt-get install libegl1 (MUJOCO_GL=egl) or libosmesa6"
    " (MUJOCO_GL=osmesa)"
)


class RecordError(VecrlError, RuntimeError):
    """No video can be made as asked; the message says why and what to do, in one line."""


class Recording(NamedTuple):
    """What ``record_video`` recorded: the ``frames`` written, and the episode's ``episode_return`` (the env's
    own rewards) over its ``steps``; ``ended`` is False where ``max_steps`` stopped it first."""

    frames: int
    episode_return: float
    steps: int
    ended: bool

    def __str__(self) -> str:
        cut = "" if self.ended else " (cut there by max_steps: it had not ended)"
        return f"episode return {self.episode_return:.1f} over {self.steps} steps{cut}; {self.frames} frames"


def record_video(
    env_name: str,
    policy: Callable[[torch.Tensor], Any],
    path: str | os.PathLike[str],
    *,
    seed: int = 0,
    max_steps: int = 1000,
) -> Recording:
    """Run one episode of ``policy`` (an ``nn.Module`` taking a flat float32 observation, as
    ``VecrlNE.to_policy`` gives it) on ``env_name`` from ``seed``, drawing each state, and write the frames
    to ``path`` (.mp4 or .gif); the frames written and the episode's return and length.

    Examples:
        >>> policy = lambda observation: torch.zeros(2)
        >>> record_video("gym::CartPole-v1", policy, "cartpole.mp4", max_steps=5)  # doctest: +SKIP
        Recording(frames=6, episode_return=5.0, steps=5, ended=False)
    """
    if Path(path).suffix.lower() not in (".mp4", ".gif"):
        raise RecordError(f"{str(path)!r}: the video's name must end in .mp4 or .gif")
    env = vecrl.make_vector_env(env_name, num_envs=1, autoreset_mode="disabled", render_mode="rgb_array")
    try:
        frames, episode_return, steps, ended = _episode(env, policy, seed, max_steps)
    finally:
        env.close()
    with warnings.catch_warnings():
        # jax warns of any fork; this one is subprocess's fork and exec of ffmpeg, whose child runs no jax
        warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)
        _write(frames, Path(path), fps=int(env.metadata.get("render_fps") or 30))
    return Recording(len(frames), episode_return, steps, ended)


def _episode(
    env: Any, policy: Callable[[torch.Tensor], Any], seed: int, max_steps: int
) -> tuple[list[Any], float, int, bool]:
    """One episode of ``policy`` on sub-env 0 of ``env`` (made to draw them, without autoreset), from a reset
    with ``seed``: what the env's ``render_frames`` makes of a snapshot before the first step and after
    each, the episode's return and steps, and whether it ended."""
    # the observation as evaluate hands it to a policy (flattened), for sub-env 0
    flatten = observation_flattener(env.single_observation_space, torch.float32, "cpu")
    discrete = isinstance(env.single_action_space, Discrete)
    drawing = env.unwrapped
    observation, _ = env.reset(seed=seed)
    snapshots = [_drawn(drawing.render_snapshot, 0)]
    episode_return, steps, ended = 0.0, 0, False
    with torch.no_grad():
        while steps < max_steps and not ended:
            flat = flatten(map_batch(torch.as_tensor, observation))[0]
            try:
                output = torch.as_tensor(policy(flat))
                action = (
                    output.argmax().reshape(1)
                    if discrete
                    else output.reshape(1, *env.single_action_space.shape)
                )
            except RuntimeError as error:  # (a matrix of the wrong size, or an output of the wrong length)
                raise RecordError(
                    f"the policy does not fit this env, whose observations are {flat.numel()} numbers and whose"
                    f" actions are {_actions_of(env.single_action_space)}: it was made for another env"
                    f" ({first_line(error)})"
                ) from error
            observation, reward, terminated, truncated, _ = env.step(action)
            snapshots.append(_drawn(drawing.render_snapshot, 0))
            episode_return += float(reward[0])
            steps += 1
            ended = bool(terminated[0]) or bool(truncated[0])
    return _drawn(drawing.render_frames, snapshots), episode_return, steps, ended


def _actions_of(space: Any) -> str:
    return (
        f"one of {space.n} (the policy's {space.n} outputs)"
        if isinstance(space, Discrete)
        else f"{space.shape}"
    )


def _drawn(draw: Callable[[Any], Any], argument: Any) -> Any:
    """``draw(argument)``, a backend's rendering member: its ``NoFrames`` as a RecordError saying why, any other
    error (a missing GL library surfaces as any error of the binding that loads it) with what to install."""
    try:
        return draw(argument)
    except NoFrames as error:
        raise RecordError(f"cannot record: {error}") from error
    except Exception as error:
        raise _no_frame(error) from error


def _no_frame(error: Exception) -> RecordError:
    """The RecordError for a renderer that raised ``error``: what it said, and what to install (gymnasium's own
    words where it names the package it misses, pygame say; else MuJoCo's GL libraries)."""
    if isinstance(error, DependencyNotInstalled):
        return RecordError(f"no frame could be drawn: {first_line(error)}")
    return RecordError(
        f"no frame could be drawn ({type(error).__name__}: {first_line(error)}); {NO_RENDERER}"
    )


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
    saved = load_saved(args.policy)
    try:
        recording = record_video(
            args.env, saved["policy"], args.out, seed=args.seed, max_steps=args.max_steps
        )
    except RecordError as error:
        if "does not fit this env" in str(error) and saved.get("env") not in (None, args.env):
            raise CommandError(
                f"--policy {args.policy} was made for {saved['env']}, not {args.env}: {error}"
            ) from error
        raise CommandError(str(error)) from error
    except (ValueError, TypeError, ImportError, LookupError) as error:
        raise CommandError(f"cannot record {args.env}: {first_line(error)}") from error
    print(f"{args.env}: {recording} saved to {args.out}")
    return 0


def load_saved(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What ``VecrlNE.save_solution`` saved at ``path`` (a run's ``champion.pickle``: a pickle, so load only
    files you trust), its ``"policy"`` among it; a CommandError saying why where it holds no policy."""
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
    return saved
