"""EnvpoolVectorEnv: an envpool pool of C++ environments as a gymnasium VectorEnv with vecrl's semantics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from numbers import Integral
from types import ModuleType
from typing import Any, Literal, NoReturn

import numpy as np
import torch
from gymnasium.spaces import Box, Discrete

from vecrl.action_checks import ActionCheck
from vecrl.arrays import convert_to_numpy
from vecrl.autoreset import autoreset_mode_name
from vecrl.checks import (
    check_fits_in_memory,
    check_refused_keywords,
    checked_batch_size,
    checked_device,
    checked_num_envs,
    closed_env_error,
)
from vecrl.contract import Capabilities, EpisodeOptions
from vecrl.final_observations import is_row_array
from vecrl.host_vector_env import HostVectorEnv, StepRows
from vecrl.infos import info_to_device
from vecrl.rendering import NoFrames, needs_rgb_mode
from vecrl.seeding import SeedRule, checked_seeds, is_int
from vecrl_envpool.envpool_ids import checked_env_id, import_envpool
from vecrl_envpool.plugin import BACKEND

#: envpool seeds are C++ int32s below this: sub-env ``i`` of ``reset(seed=S)`` gets ``S + i`` where that is below
#: it (what ``envpool.make(..., seed=S)`` gives it), and a seed drawn from ``SeedSequence(S + i)`` beyond.
SEED_MODULUS = 2**31 - 1

#: From this many sub-envs on, a pool is checked against the memory available (what a sub-env holds is
#: measured on a pool of MEMORY_PROBE_ENVS in a fresh interpreter first, about a second: some 7 KB for CartPole,
#: 800 KB for a MuJoCo Hopper).
MEMORY_CHECK_ENVS = 4096
MEMORY_PROBE_ENVS = 256

#: Keywords EnvpoolVectorEnv refuses: vecrl's that the envpool backend does not take, and those it sets itself
#: (passing them through would break its stepping or seeding).
_RESERVED_KWARGS = {
    **BACKEND.refusals,
    "env_type": "the backend always uses envpool's gymnasium API",
    "seed": "seed with env.reset(seed=S) (sub-env i gets S + i, as envpool.make(seed=S) gives it)",
    "env_seed": "give per-sub-env seeds as env.reset(seed=[s0, s1, ...])",
}


def _envpool_seed(seed: int) -> int:
    """``seed`` if envpool takes it, else a seed it takes drawn from ``seed`` (see ``sub_env_seeds``)."""
    if seed < SEED_MODULUS:
        return seed
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0] % SEED_MODULUS)


#: Run by ``_bytes_per_sub_env`` in a fresh interpreter: prints how much a pool made and reset there grew it.
_MEMORY_PROBE = """
import json, os, sys
import envpool
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
before = resident()
pool = envpool.make(sys.argv[1], env_type="gymnasium", **json.loads(sys.argv[2]))
pool.reset()
print(max(resident() - before, 0))
"""


def _check_counts(envpool_kwargs: Mapping[str, Any], num_envs: int) -> None:
    """A ValueError for a ``num_threads`` or ``max_episode_steps`` envpool would take and then fail on: a
    negative or huge thread count aborts the interpreter when the pool starts, and an episode of 0 or fewer
    steps never runs."""
    threads = envpool_kwargs.get("num_threads")
    most = max(num_envs, os.cpu_count() or 1)
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, Integral) or not 0 <= int(threads) <= most
    ):
        raise ValueError(
            f"num_threads must be an int from 0 (envpool chooses) to {most} (the larger of num_envs and this"
            f" machine's {os.cpu_count()} CPUs: more threads would have nothing to step), got {threads!r}."
        )
    steps = envpool_kwargs.get("max_episode_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, Integral) or steps < 1):
        raise ValueError(
            f"max_episode_steps must be a positive int (the time limit of an episode), got {steps!r}."
        )


#: Info keys envpool adds to name the rows of an asynchronous batch; row ``i`` here is always sub-env ``i``.
_ROW_KEYS = ("env_id", "players")


class EnvpoolVectorEnv(HostVectorEnv):
    """``num_envs`` copies of the envpool env ``env_id``, stepped in C++ threads, with vecrl's episode rules
    (``vecrl.host_vector_env``: this class says how to reset and step a set of envpool's sub-envs).

    The pool is ``envpool.make(env_id, env_type="gymnasium", num_envs=N, batch_size=N, **envpool_kwargs)``
    (``num_threads``, ``max_episode_steps``, ``frame_skip``, ... reach envpool unchanged); it is built on
    the first ``reset()``.

    - ``autoreset_mode="same_step"`` (the default): a sub-env whose episode ends is reset in the same
      ``step()`` through envpool's per-env reset; its last observation is in ``info[FINAL_OBS_KEY]``, a
      batch like the observations, with its ``"_"`` mask (``vecrl.final_observations``). ``"next_step"`` is envpool's own behaviour
      (the next step resets the sub-env, ignores its action, reports reward 0 and neither flag);
      ``"disabled"``: stepping a finished sub-env before ``reset(options={"reset_mask": mask})`` is a
      RuntimeError.
    - ``num_episodes=n``: each sub-env runs n episodes, then reports NaN observation (0 for integer dtypes)
      and reward and terminated = truncated = True until ``reset()``. Spent sub-envs are not stepped:
      envpool steps only the live ones.
    - Seeding: envpool fixes each sub-env's seed when the pool is built, so ``reset(seed=S)`` (or ``seed(S)``
      then ``reset()``) builds the pool again with sub-env ``i`` seeded ``S + i``: the same seed gives the
      same trajectories, those of ``envpool.make(env_id, seed=S)``. ``seed_rule="evotorch"`` seeds them
      as the gym backend does by default instead (``vecrl.seeding``). A rebuild costs about 2 ms per MuJoCo
      sub-env and 45 ms per Atari sub-env on a 2-core machine (classic control: microseconds). ``reset()``
      without a seed keeps the pool and continues each sub-env's random stream. A list of per-sub-env seeds
      (None: drawn at random) is accepted too.
    - ``info`` holds envpool's per-env info as arrays of the results' kind (``elapsed_step``, Atari's
      ``lives``, ...), row ``i`` for sub-env ``i``; for a sub-env restarted in the step (same_step), its
      reset's info, the last step's being in ``info["final_info"]`` (gymnasium's layout:
      ``vecrl.final_observations``).
    - Observations: Box spaces in envpool's dtypes (float64 for MuJoCo, uint8 frames for Atari), or Discrete
      states as int64 (gymnasium's Discrete dtype; envpool gives int32).
      ``array_type="torch"`` returns observations, rewards and flags as torch tensors sharing envpool's
      result memory (what ``make_envpool_env`` uses), or copied to ``device`` when one is given;
      ``"numpy"`` returns numpy arrays.

    Examples:
        >>> env = EnvpoolVectorEnv("CartPole-v1", num_envs=4)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((4, 4), dtype('float32'))
    """

    # seeds are fixed when the pool is built (see reset); the pool's own step does next-step autoresets
    capabilities = Capabilities(seeded_masked_reset=False, steps_reset_next=True)

    def __init__(
        self,
        env_id: str,
        *,
        num_envs: int,
        num_episodes: int | None = None,
        autoreset_mode: Any = EpisodeOptions.autoreset_mode,
        array_type: Literal["numpy", "torch"] = "numpy",
        seed_rule: SeedRule = "gymnasium",
        device: str | torch.device | None = None,
        batch_size: int | None = None,
        **envpool_kwargs: Any,
    ) -> None:
        num_envs = checked_num_envs(num_envs)
        if array_type not in ("numpy", "torch"):
            raise ValueError(f"array_type must be 'numpy' or 'torch', but got {array_type!r}.")
        if device is not None and array_type != "torch":
            raise ValueError(
                f"device={device!r} places torch results, but array_type is {array_type!r}: pass array_type='torch'."
            )
        self._device: torch.device | None = None if device is None else checked_device(device)
        options = EpisodeOptions(
            num_episodes=num_episodes, autoreset_mode=autoreset_mode, seed_rule=seed_rule
        )
        check_refused_keywords("EnvpoolVectorEnv(...)", envpool_kwargs, _RESERVED_KWARGS)
        batch = _checked_batch_size(batch_size, num_envs, options.autoreset_mode, num_episodes)
        _check_counts(envpool_kwargs, num_envs)
        self._envpool: ModuleType = import_envpool()
        self.env_id: str = checked_env_id(self._envpool, env_id)
        self._options: dict[str, Any] = {"num_envs": num_envs, "batch_size": batch, **envpool_kwargs}
        # envpool's async mode (batch < num_envs): the sub-envs stepping (sent, not received) and those whose
        # results recv() gave that wait for send()
        self._async = batch < num_envs
        self._in_flight = np.zeros(num_envs, np.bool_)
        self._waiting = np.zeros(num_envs, np.bool_)
        spec = self._spec(self._options)
        if num_envs >= MEMORY_CHECK_ENVS:
            check_fits_in_memory(f"envpool {self.env_id!r}", num_envs, self._bytes_per_sub_env())
        with _quiet_spaces():  # envpool makes them on first use
            observation_space, action_space = spec.gymnasium_observation_space, spec.gymnasium_action_space
        if not isinstance(observation_space, (Box, Discrete)):
            raise TypeError(
                f"envpool's {env_id!r} has observations in {observation_space}; the envpool backend supports Box"
                " and Discrete observation spaces."
            )
        super().__init__(
            num_envs, observation_space, action_space, episode_options=options, reward_dtype=np.float32
        )
        self.array_type: Literal["numpy", "torch"] = array_type
        self.render_mode: str | None = envpool_kwargs.get("render_mode")
        self._pool: Any = None
        self._gl_context: Any = None  # what a MuJoCo pool draws in, made on its first frame
        self._seed_source: np.random.Generator = np.random.default_rng()
        self.closed: bool = False

    def _spec(self, options: dict[str, Any]) -> Any:
        """envpool's spec of the env with ``options``; an unknown keyword is a TypeError naming the known."""
        try:
            with _quiet_spaces():
                return self._envpool.make_spec(self.env_id, **options)
        except TypeError as error:
            known = self._envpool.make_spec(self.env_id).config._fields
            settable = [key for key in known if key not in (*_RESERVED_KWARGS, "num_envs", "base_path")]
            raise TypeError(
                f"envpool's {self.env_id!r} does not take the keyword arguments given ({error}). It takes:"
                f" {', '.join(settable)}."
            ) from error

    @property
    def envpool_env(self) -> Any:
        """The envpool pool itself (None before the first ``reset()``); stepping it directly bypasses the
        episode rules above."""
        return self._pool

    def render_snapshot(self, index: int) -> Any:
        """The frame sub-env ``index`` renders now (``vecrl.rendering``: the env made with
        ``render_mode="rgb_array"``). A MuJoCo pool draws into the GL context current in this thread, made
        here once (through ``MUJOCO_GL``'s backend, as gymnasium's MuJoCo envs draw)."""
        needs_rgb_mode(self, index)
        if self._pool is None:
            raise NoFrames(f"{type(self).__name__} has drawn nothing yet: reset() it first")
        if self._gl_context is None and _draws_with_mujoco(self._pool):
            try:
                import mujoco
            except ImportError as error:
                raise NoFrames(
                    "drawing envpool's MuJoCo envs needs a GL context made by the mujoco package: pip install mujoco"
                ) from error
            self._gl_context = mujoco.GLContext(640, 480)  # (MuJoCo draws offscreen: any size will do)
            self._gl_context.make_current()
        return self._pool.render(env_ids=[index])[0]

    def _bytes_per_sub_env(self) -> int:
        """The memory one sub-env takes: the resident growth of a fresh interpreter that makes and resets a
        pool of MEMORY_PROBE_ENVS (in this one, memory freed earlier would be reused and hide it). Where that
        cannot be measured, a MemoryError saying so: a pool too large for an address-space limit (``ulimit
        -v``, as batch schedulers set) aborts the interpreter (``std::bad_alloc``), so this guard never skips."""
        options = {**self._options, "num_envs": MEMORY_PROBE_ENVS, "batch_size": MEMORY_PROBE_ENVS}
        try:
            probe = subprocess.run(
                [sys.executable, "-c", _MEMORY_PROBE, self.env_id, json.dumps({**options, "num_threads": 1})],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if probe.returncode == 0:
                return int(probe.stdout) // MEMORY_PROBE_ENVS
            why = f"a probe making {MEMORY_PROBE_ENVS} of them failed ({(probe.stderr.strip().splitlines() or ['no output'])[-1]})"
        except (TypeError, ValueError) as error:  # options that JSON cannot hold
            why = f"its options cannot reach a probe process ({error})"
        except (OSError, subprocess.TimeoutExpired) as error:
            why = f"a probe process could not run ({error})"
        raise MemoryError(
            f"envpool {self.env_id!r} with num_envs={self._options['num_envs']:,}:"
            f" vecrl could not measure the memory a sub-env takes, since {why}; under an address-space limit"
            " (ulimit -v) a pool too large aborts the interpreter. Make fewer sub-envs (below"
            f" {MEMORY_CHECK_ENVS:,}, which are not measured), or raise the limit."
        )

    def sub_env_seeds(self, seed: int) -> list[int]:
        """The seed each sub-env gets from ``reset(seed=seed)``, by the env's ``seed_rule``
        (``vecrl.seeding``): with ``"gymnasium"`` (the default) ``seed + i``, as ``envpool.make(seed=seed)``
        seeds them. A seed that is not one of envpool's int32 seeds (at or above ``SEED_MODULUS``; seeds go
        up to 2**32, as on every backend) is replaced by one drawn from ``numpy.random.SeedSequence`` of it:
        no seed wraps around onto a small one, and sub-env ``i``'s seed depends on its rule's seed alone.

        Examples:
            >>> EnvpoolVectorEnv("CartPole-v1", num_envs=3).sub_env_seeds(7)
            [7, 8, 9]
        """
        return [_envpool_seed(s) for s in super().sub_env_seeds(seed)]

    def _checked_seeds(self, seed: Any) -> list[int]:
        """The per-sub-env seeds of ``seed``: an int by the seed rule, or one per sub-env
        (``vecrl.seeding.checked_seeds``), each below ``SEED_MODULUS`` (envpool's int32 seeds) or None for
        a random one."""
        if is_int(seed):
            return self.sub_env_seeds(seed)
        seeds = checked_seeds(seed, self.num_envs)
        assert seeds is not None  # (reset() takes a seed of None as no seed before asking)
        too_large = [s for s in seeds if s is not None and s >= SEED_MODULUS]
        if too_large:
            raise ValueError(
                f"envpool's seeds are int32: each seed of a list must be below 2**31 - 1, but {too_large} are not;"
                " give smaller seeds, or one int seed (a large one is mapped onto envpool's seeds)."
            )
        return [int(self._seed_source.integers(0, SEED_MODULUS)) if s is None else s for s in seeds]

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start a new episode in every sub-env, or in those chosen by ``options["reset_mask"]``.

        A ``seed`` (or one given to ``seed()``) builds the pool again with those seeds (see the class); a
        masked reset keeps the pool, so it takes no seed, and the other rows of the returned observation are
        those last returned.

        Examples:
            >>> env = EnvpoolVectorEnv("CartPole-v1", num_envs=3)
            >>> first, _ = env.reset(seed=1)
            >>> again, _ = env.reset(seed=1)
            >>> bool((first == again).all())
            True
        """
        while self._in_flight.any():  # (async mode: the batches sent are received and dropped first)
            self._in_flight[self._pool.recv()[-1]["env_id"]] = False
        return super().reset(seed=seed, options=options)

    def reset_rows(
        self, ids: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-env, building the pool again where there are seeds (or no pool yet); the engine
        resets some with ``reset_rows_into``."""
        assert ids is None, "a reset of some sub-envs is reset_rows_into's"
        self._build_if(seeds)
        if self._async:
            self._pool.async_reset()
            observation, _, _, _, info = self._gathered()
            return observation, info
        observation, info = self._pool.reset()
        return self._in_space_dtype(observation), _own_info(info)

    def _build_if(self, seeds: list[Any] | None) -> None:
        """Build the pool again where there are ``seeds`` (or no pool yet: with seeds drawn at random)."""
        if seeds is not None or self._pool is None:
            self._build(
                self.sub_env_seeds(int(self._seed_source.integers(0, 2**32))) if seeds is None else seeds
            )

    def reset_rows_into(
        self, ids: np.ndarray, seeds: list[Any] | None, options: dict[str, Any] | None, out: np.ndarray
    ) -> dict[str, Any]:
        """Reset the sub-envs ``ids`` (a masked reset or a restart: no seeds, ``seeded_masked_reset``),
        writing each observation into its sub-env's row of ``out`` (the engine's array); their info."""
        if self._async:
            raise ValueError(
                "envpool's async mode (batch_size < num_envs) resets every sub-env at once: reset() or"
                " async_reset(), without reset_mask; its sub-envs restart by themselves (next_step)."
            )
        some = ids.astype(np.int32)
        observation, info = self._pool.reset(some)
        out[info["env_id"]] = observation  # (by envpool's row order; int32 states become the space's int64)
        return _own_info_in_order(some, info)

    def _build(self, seeds: list[int]) -> None:
        """Build the pool again with sub-env ``i`` seeded ``seeds[i]``."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        first = seeds[0]
        consecutive = seeds == list(range(first, first + self.num_envs))
        seeding = {"seed": first} if consecutive else {"env_seed": seeds}
        with _quiet_spaces():
            self._pool = self._envpool.make(self.env_id, env_type="gymnasium", **self._options, **seeding)
            self._pool.observation_space, self._pool.action_space  # noqa: B018 (made on first use)

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every live sub-env with its row of ``action`` (shape ``(num_envs, *action_shape)``).

        Returns ``(observation, reward, terminated, truncated, info)``. A bad action (shape, dtype, a
        discrete value out of range) is a ValueError before anything steps: envpool itself would take it.

        Examples:
            >>> env = EnvpoolVectorEnv("CartPole-v1", num_envs=2)
            >>> _ = env.reset(seed=0)
            >>> obs, reward, terminated, truncated, info = env.step(np.array([0, 1]))
            >>> reward.tolist(), sorted(info)
            ([1.0, 1.0], ['elapsed_step'])
        """
        self._refuse_in_flight("step()")
        return super().step(action)

    def step_rows(self, actions: np.ndarray, ids: np.ndarray | None) -> StepRows:
        """Step every sub-env (the engine steps some, those of a budget not yet spent, with
        ``step_rows_into``)."""
        assert ids is None, "a step of some sub-envs is step_rows_into's"
        if self._async:  # (every sub-env, its batches gathered by id)
            self._pool.send(actions, np.arange(self.num_envs, dtype=np.int32))
            return self._gathered()
        observation, reward, terminated, truncated, info = self._pool.step(actions)
        return self._in_space_dtype(observation), reward, terminated, truncated, _own_info(info)

    # -- envpool's async mode ----------------------------------------------------------------------

    def async_reset(self, seed: int | Sequence[int | None] | None = None, options: Any = None) -> None:
        """Start a reset of every sub-env (a ``seed`` as ``reset`` takes it builds the pool again); ``recv()``
        then returns their first observations, ``batch_size`` at a time (envpool's ``async_reset``).

        Examples:
            >>> env = EnvpoolVectorEnv("CartPole-v1", num_envs=4, batch_size=2, autoreset_mode="next_step")
            >>> env.async_reset(seed=0)
            >>> obs, reward, terminated, truncated, info = env.recv()
            >>> obs.shape, info["env_id"].tolist() in ([0, 1], [2, 3])
            ((2, 4), True)
            >>> env.send(np.zeros(2, np.int64), info["env_id"])
        """
        self._needs_async("async_reset")
        mask, seeds, rest = self._reset_request(seed, options, started=self._last_observation is not None)
        if mask is not None or rest:
            raise ValueError(
                f"async_reset() takes a seed and no options (reset_mask resets some sub-envs, which envpool's"
                f" async mode does not; envpool's envs take no reset options); got options={options!r}."
            )
        self._build_if(seeds)
        self._pool.async_reset()
        self._in_flight[:], self._waiting[:] = True, False
        self._last_observation = np.zeros(0)  # (started: step() and reset() know it)
        self.failure = None

    def recv(self) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """The results of the next ``batch_size`` sub-envs envpool has done, their ids in ``info["env_id"]``
        (envpool's ``recv``, its results as this env gives them). Example: ``async_reset``."""
        self._needs_async("recv")
        if not self._in_flight.any():
            raise RuntimeError(
                "recv() has no sub-env to wait for: none was sent since their results were received. send()"
                " actions for the env_ids recv() returned, or async_reset()."
            )
        observation, reward, terminated, truncated, info = self._pool.recv()
        ids = info["env_id"]
        self._in_flight[ids], self._waiting[ids] = False, True
        info = {**_own_info(dict(info)), "env_id": ids.astype(np.int64)}
        out = self.results_of
        results = out(self._in_space_dtype(observation)), out(reward), out(terminated), out(truncated)
        return (*results, self._info_results(info))

    def send(self, actions: Any, env_id: Any = None) -> None:
        """Start the next step of the sub-envs ``env_id`` (ids ``recv()`` returned, waiting for actions)
        with ``actions``, a row each (envpool's ``send``). Example: ``async_reset``."""
        self._needs_async("send")
        ids = np.asarray(convert_to_numpy(env_id)).reshape(-1) if env_id is not None else None
        if (
            ids is None
            or ids.dtype.kind not in "iu"
            or not len(ids)
            or not ((ids >= 0) & (ids < self.num_envs)).all()
            or not self._waiting[ids].all()
        ):
            raise ValueError(
                f"send() takes the env_id of sub-envs recv() returned that wait for actions, but got"
                f" env_id={env_id!r}; waiting: {np.flatnonzero(self._waiting).tolist()} (pass info['env_id'])."
            )
        if len(np.unique(ids)) != len(ids):
            raise ValueError(f"send() got env_id={ids.tolist()}, which names a sub-env twice.")
        actions = ActionCheck(self.single_action_space, len(ids), "EnvpoolVectorEnv.send()")(actions)
        self._pool.send(actions, ids.astype(np.int32))
        self._waiting[ids], self._in_flight[ids] = False, True

    def _needs_async(self, method: str) -> None:
        if self.closed:
            raise closed_env_error(method, self)
        if not self._async:
            raise RuntimeError(
                f"{method}() steps async batches, which this EnvpoolVectorEnv does not have (batch_size ="
                " num_envs: every step() steps every sub-env). Make it with batch_size < num_envs."
            )

    def _refuse_in_flight(self, method: str) -> None:
        if self._in_flight.any():
            raise RuntimeError(
                f"{method} steps every sub-env at once, but sub-envs sent with send() have not all been"
                f" received ({np.flatnonzero(self._in_flight).tolist()}): recv() them first."
            )

    def _gathered(self) -> StepRows:
        """Every sub-env's results after a send or async_reset of them all, recv()'d batch by batch and put
        in sub-env order (``_own_info_in_order``, as a step of some sub-envs puts envpool's rows)."""
        parts = [self._pool.recv() for _ in range(self.num_envs // self._options["batch_size"])]
        rows = len(parts[0][0])
        info = {
            key: np.concatenate([part[-1][key] for part in parts])
            for key, value in parts[0][-1].items()
            if is_row_array(value, rows)
        }
        order = np.argsort(info["env_id"])
        observation, reward, terminated, truncated = (
            np.concatenate([part[i] for part in parts])[order] for i in range(4)
        )
        info = _own_info_in_order(np.arange(self.num_envs, dtype=np.int32), info)
        self._waiting[:] = True
        return self._in_space_dtype(observation), reward, terminated, truncated, info

    def step_rows_into(self, actions: np.ndarray, ids: np.ndarray, out: tuple[Any, ...]) -> dict[str, Any]:
        """Step the sub-envs ``ids`` with ``actions`` (a row each, in the order of ``ids``), writing their
        results into their rows of ``out`` (the engine's arrays); their info."""
        some = ids.astype(np.int32)
        observation, reward, terminated, truncated, info = self._pool.step(actions, some)
        rows = info["env_id"]  # (envpool's row order)
        out[0][rows], out[1][rows], out[2][rows], out[3][rows] = observation, reward, terminated, truncated
        return _own_info_in_order(some, info)

    def _in_space_dtype(self, observation: np.ndarray) -> np.ndarray:
        """``observation`` in the observation space's dtype: envpool gives Discrete states as int32, where
        gymnasium's Discrete (and the gym backend) say int64."""
        dtype = self.single_observation_space.dtype
        return observation if observation.dtype == dtype else observation.astype(dtype)

    def results_of(self, x: np.ndarray) -> Any:
        if self.array_type == "numpy":
            return x
        tensor = torch.from_numpy(x)
        return tensor if self._device is None else tensor.to(self._device)

    def reset_returned(self, observation: Any, info: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        observation, info = super().reset_returned(observation, info)
        return observation, self._info_results(info)

    def step_returned(
        self, observation: Any, reward: np.ndarray, terminated: np.ndarray, truncated: np.ndarray, info: Any
    ) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        *results, info = super().step_returned(observation, reward, terminated, truncated, info)
        return (*results, self._info_results(info))

    def _info_results(self, info: dict[str, Any]) -> dict[str, Any]:
        """``info`` as the results are: its numeric arrays tensors on the device, as the gym backend's."""
        if self.array_type == "numpy" or not info:
            return info
        return info_to_device(info, self._device or torch.device("cpu"))

    def __reduce__(self) -> NoReturn:
        raise TypeError(
            f"{self!r} cannot be pickled: it holds envpool's C++ pool. Pickle what made it instead (the name and"
            " keyword arguments of vecrl.make_vector_env) and make it again."
        )

    def close(self, **kwargs: Any) -> None:
        """Release the pool (its threads and envs); ``step()`` and ``reset()`` raise from now on."""
        if self._pool is not None:
            self._pool.close()
        self._pool = self._last_observation = None
        self.closed = True

    def __repr__(self) -> str:
        return (
            f"EnvpoolVectorEnv({self.env_id!r}, num_envs={self.num_envs}, num_episodes={self.num_episodes},"
            f" autoreset_mode={self._autoreset_mode!r})"
        )


@contextmanager
def _quiet_spaces() -> Iterator[None]:
    """Without the warnings gymnasium gives about envpool's spaces (float32 Boxes made from float64 bounds):
    they are envpool's to fix, and a user can do nothing about them."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*precision lowered by casting", category=UserWarning)
        yield


def _own_info(info: dict[str, Any]) -> dict[str, Any]:
    """envpool's ``info`` without the keys that name the rows of an async batch (row i is sub-env i)."""
    for key in _ROW_KEYS:
        info.pop(key, None)
    return info


def _own_info_in_order(ids: np.ndarray, info: dict[str, Any]) -> dict[str, Any]:
    """The ``info`` envpool returned for the sub-envs ``ids`` (ascending, int32), its row arrays in the order
    of ``ids`` (envpool's are in ``info["env_id"]``'s order), without the async batch's keys.

    Examples:
        >>> info = {"env_id": np.array([2, 0], np.int32), "elapsed_step": np.array([7, 5]), "players": {}}
        >>> _own_info_in_order(np.array([0, 2], np.int32), info)
        {'elapsed_step': array([5, 7])}
    """
    env_id = info["env_id"]
    if env_id.tobytes() != ids.tobytes():  # (the same ids in the same order have the same bytes)
        order = np.argsort(env_id)
        info = {key: value[order] if is_row_array(value, len(ids)) else value for key, value in info.items()}
    return _own_info(info)


def _checked_batch_size(batch_size: Any, num_envs: int, autoreset_mode: Any, num_episodes: Any) -> int:
    """The pool's ``batch_size`` (``num_envs`` for None; ``vecrl.checks.checked_batch_size``'s rule), and a
    ValueError for envpool's async mode (below ``num_envs``) with rules it does not keep: its sub-envs restart
    at their next step (``autoreset_mode="next_step"``) and run until told to stop (no ``num_episodes``)."""
    if batch_size is None:
        return num_envs
    size = checked_batch_size(batch_size, num_envs)
    if size < num_envs:
        if autoreset_mode_name(autoreset_mode) != "next_step":
            raise ValueError(
                f"envpool's async mode (batch_size={batch_size} < num_envs={num_envs}) restarts a sub-env whose"
                " episode ended at its next send(), as envpool does: pass autoreset_mode='next_step' (gym:: with"
                " batch_size keeps every autoreset mode)."
            )
        if num_episodes is not None:
            raise ValueError(
                f"envpool's async mode (batch_size={batch_size} < num_envs={num_envs}) runs each sub-env until"
                " told to stop, so it takes no num_episodes (gym:: with batch_size keeps episode budgets)."
            )
    return size


def _draws_with_mujoco(pool: Any) -> bool:
    """Whether ``pool`` is one of envpool's MuJoCo-based pools (MuJoCo, Gymnasium-Robotics, MetaWorld, ...), by
    the modules of its classes, as envpool tells them apart itself."""
    modules = [base.__module__ for base in type(pool).__mro__]
    return any(
        module.startswith(("envpool.mujoco", "envpool.robotics", "envpool.metaworld", "envpool.myosuite"))
        for module in modules
    )
