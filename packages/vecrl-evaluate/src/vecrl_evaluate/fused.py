"""evaluate's loop as one compiled jax program, for envs that give their episodes as pure jax functions.

On a jax backend (``brax::``, ``playground::``, ``gymnax::``, any env whose ``unwrapped.jax_env`` is a
``vecrl_jax.JaxEnv``) and a network that ``vecrl_policy.layer_specs`` describes, ``evaluate`` runs the
policy (its jax twins, ``vecrl_policy.jax_layers``), the env's step and the bookkeeping of the returns
inside a ``lax.while_loop``, as EvoJAX, evosax and brax's evaluator do: no Python, no torch and no host
round trip per step. The population enters and the results leave through DLPack.

The rules are those of the stepped loop (``vecrl_evaluate.row_loop``), so the same population, network
and seed give the same results on either path, within float tolerance (jax sums returns in float32, the
stepped loop in float64; XLA rounds the network's matmuls otherwise than torch). On chaotic physics
(brax's ant, long episodes) that rounding grows: a row's actions differ by 1e-7 at first, and contacts
make another trajectory of it within a few dozen steps, so single rows' returns part between the paths
(the fused path equals an EvoJAX-style rollout's to 1e-5: ``bench/brax_evaluate.py``).

- ``env.num_envs`` slots (fewer for a smaller population) start rows 0, 1, ...; episode ``e`` of row ``r``
  starts from ``jax.random.PRNGKey(episode_seed(seed_r, e))`` and its action noise is ``action_noise(seed_r,
  k)`` at its ``k``-th step (``vecrl_evaluate.randomness``, the rule the stepped loop follows with
  seeded masked resets). A slot whose row is done takes the next row (refill); the loop ends when every
  row is done (the early exit). With env parameters per row and episode (``evaluate(randomize=)``), each
  episode's fresh state gets its own (the env's ``with_params``).
- Recurrent states are zeroed where an episode starts; the observation normalization of the call's start,
  the statistics of what counted rows saw, ``decrease_rewards_by`` and ``alive_bonus_schedule`` are those
  of the stepped loop.

A call runs one compiled program from the first step to the last (``_program``), which hands out the
results alone; about every quarter second it polls the host (``vecrl_evaluate.host_poll``), which
hears the rows done and stops the loop on a Ctrl-C, and a short call is not polled at all.
``steps_per_check`` env steps run between two checks of the loop's predicate (a ``lax.scan`` inside the
``lax.while_loop``), and finished slots restart under a ``lax.cond`` or by selection (the GPU's shape, its
default). The results are the same, bit for bit, whatever ``steps_per_check`` and the polls, and those of
``vecrl_evaluate.rollout_function``, which runs the same loop inside a caller's own compiled program.

One program is compiled per (env configuration, network, episode settings, population size, number of
slots, loop shape), and kept: an evolution run compiles once, in its first generation.
"""

from __future__ import annotations

import functools
import math
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import torch
from gymnasium.spaces import Box

from vecrl.checks import listed
from vecrl_evaluate.host_poll import host_poll
from vecrl_evaluate.measures import Measures
from vecrl_evaluate.options import EvaluateOptions, RowSettings
from vecrl_evaluate.randomness import RowSeeds, action_noise, episode_seed, random_row_seeds
from vecrl_evaluate.rollout import add_to_rows, episode_ends, refilled, started
from vecrl_policy.layer_specs import LayerSpec
from vecrl_policy.layer_table import why_not_fused
from vecrl_policy.normalization import Normalize, normalized
from vecrl_policy.policy import Policy
from vecrl_policy.statistics import Moments

if TYPE_CHECKING:
    from vecrl_jax import JaxEnv


class _Settings(NamedTuple):
    """What the compiled program depends on, besides shapes (hashable: the key of its cache): the call's
    options as every row reads them (``RowSettings.options``, with the loop's shape and devices resolved) and
    what the plan derived from the env, the network and the normalization."""

    episodes: JaxEnv  # hashable: one object per env configuration (vecrl_jax.protocol)
    specs: tuple[LayerSpec, ...]
    options: EvaluateOptions  # steps_per_check, select_restarts and devices resolved (never None)
    clip: float | None
    normalize: bool
    observe: bool
    discrete: bool  # the argmax of the network's scores is the action
    width: int  # the slots of each device: as many rows run at once there
    randomized: bool  # the rows' episodes have env parameters of their own

    @property
    def devices(self) -> tuple[Any, ...]:
        """The jax devices the rows are split over (resolved: never None)."""
        return tuple(self.options.devices or ())


def fused_episodes(policy: Policy, env: Any, parameters: torch.Tensor, settings: RowSettings) -> JaxEnv | str:
    """The env's ``JaxEnv`` if evaluate can run this call as one program (a jax env, a network with jax
    twins, float32 parameters on jax's device), else why not: a sentence saying what to change."""
    episodes: JaxEnv | None = getattr(env.unwrapped, "jax_env", None)
    if episodes is None:
        return f"{type(env.unwrapped).__name__} is not a jax env (brax::, playground::, gymnax::)."
    wrapped = _wrapper_problem(env)
    if wrapped is not None:
        return wrapped
    if policy.layer_specs is None:
        return (
            f"the network has a layer without a jax twin: {why_not_fused(policy.wrapped_module)}. Build it"
            " from the layers of a network string (vecrl_policy.str_to_net)."
        )
    if parameters.dtype != torch.float32:
        return f"the parameters are {parameters.dtype}; the program runs float32. Pass parameters.float()."
    import jax

    if parameters.device.type != ("cpu" if jax.default_backend() == "cpu" else "cuda"):
        return (
            f"the parameters are on {parameters.device}, not on the device jax computes on"
            f" ({jax.default_backend()}). Move them there."
        )
    if not isinstance(env.unwrapped.single_observation_space, Box):
        return (
            f"the env's observations are a {type(env.unwrapped.single_observation_space).__name__}, and the"
            " program's network takes one flat array."
        )
    if settings.measures is not None:
        size = math.prod(env.unwrapped.single_observation_space.shape)
        why = _measures_problem(episodes, settings.measures, size)  # type: ignore[arg-type]  # (hashable: vecrl_jax.protocol)
        if why is not None:
            return why
    return episodes


# traced once per configuration, not at each of a run's calls; bounded as PROGRAMS
@functools.lru_cache(maxsize=16)
def _measures_problem(episodes: JaxEnv, measures: Measures, obs_size: int) -> str | None:
    """Why the program cannot take ``measures`` on flat observations of ``obs_size``: a function that does not
    run on jax arrays (None if each does)."""
    import jax

    observation = jax.ShapeDtypeStruct((2, obs_size), np.float32)
    action_space = episodes.action_space
    discrete = not isinstance(action_space, Box)
    action = jax.ShapeDtypeStruct(
        (2, *(() if discrete else action_space.shape)), np.int32 if discrete else np.float32
    )
    reward = jax.ShapeDtypeStruct((2,), np.float32)
    for name, item in zip(measures.names, measures.items, strict=True):
        if not isinstance(item.source, str):
            try:
                jax.eval_shape(item.source, observation, action, reward)
            except Exception as error:  # (a function written for torch alone: the stepped loop runs it)
                return (
                    f"the measure {name!r} does not run on jax arrays ({type(error).__name__}: {error}); write it"
                    " with array operators and methods alone (observation[:, 0], (action ** 2).sum(-1)) to run fused."
                )
    return None


@functools.cache
def observation_size(episodes: JaxEnv) -> int:
    """The length of one flat observation of ``episodes`` (without stepping)."""
    import jax

    keys = jax.ShapeDtypeStruct((1, 2), np.uint32)
    return math.prod(
        jax.eval_shape(lambda k: episodes.outcome(episodes.reset(k)).observation, keys).shape[1:]
    )


@functools.cache
def info_shapes(episodes: JaxEnv, num_envs: int) -> dict[str, tuple[int, ...]]:
    """The shapes of what ``episodes``' outcome info holds for a batch of ``num_envs`` states (without stepping)."""
    import jax

    keys = jax.ShapeDtypeStruct((num_envs, 2), np.uint32)
    info = jax.eval_shape(lambda k: dict(episodes.outcome(episodes.reset(k)).info), keys)
    return {name: tuple(leaf.shape) for name, leaf in info.items()}


def _wrapper_problem(env: Any) -> str | None:
    """Why the program, which steps ``env.unwrapped``'s jax functions, would skip a wrapper of ``env``:
    one other than vecrl's torch conversion, or that conversion where it changes the actions; None if
    none would be skipped."""
    from vecrl.torch_wrapper import TorchWrapper, layers

    for layer in layers(env):
        if layer is env.unwrapped:
            break
        if not isinstance(layer, TorchWrapper):
            return (
                f"the env is wrapped in {type(layer).__name__}, which the compiled program, stepping the jax env"
                " within, would skip. Leave the wrapper out to run it fused."
            )
        if layer.changes_actions:
            return (
                "the env changes the actions it is given (made with clip_actions=True or"
                " discrete_to_continuous_act=True), which the compiled program would skip. Make it without."
            )
    return None


def run_fused(
    episodes: JaxEnv,
    policy: Policy,
    num_slots: int,
    parameters: torch.Tensor,
    seeds: RowSeeds | None,
    settings: RowSettings,
    params: Mapping[str, np.ndarray] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[torch.Tensor, ...]:
    """Every row of ``parameters`` for ``settings.num_episodes`` episodes in one compiled program; what
    ``vecrl_evaluate.row_loop.run_rows`` returns for the same call, on the device of ``parameters``.

    The program polls the host about every ``POLL_SECONDS`` (``_run``): ``progress`` hears how many rows are
    done (0 first), and a Ctrl-C stops the call there.

    With several devices (``settings.devices``, default every local device of jax's default platform) the
    rows are split into as many contiguous shares (the last ones shorter where they do not divide), and
    one program (``shard_map``) runs each share on its device with ``num_slots`` split alike: each row's
    results are those of the one-device call, since nothing of a row depends on where it runs."""
    import jax
    import jax.numpy as jnp

    normalize = settings.normalize if settings.normalize is not None else _carried(policy, parameters)
    mean, std = _mean_and_std(normalize, parameters)
    normalizing = mean is not None
    if normalize is not None and not normalizing:  # (statistics without observations: the same program, idle)
        size = observation_size(episodes)  # type: ignore[arg-type]  # (hashable: vecrl_jax.protocol)
        mean, std = torch.zeros(size).to(parameters), torch.ones(size).to(parameters)
    devices = local_devices(settings.options.devices)
    num_rows, shares = len(parameters), len(devices)
    share = -(-num_rows // shares)  # rows per device; the padding rows (repeats of the last) never run
    padding = share * shares - num_rows
    population = parameters.detach().contiguous()
    row_seeds = np.asarray(random_row_seeds(num_rows) if seeds is None else seeds, dtype=np.uint32)
    table = None if params is None else dict(params)
    if padding:
        population = torch.cat([population, population[-1:].expand(padding, -1)])
        row_seeds = np.concatenate([row_seeds, np.repeat(row_seeds[-1:], padding)])
        if table is not None:
            table = {
                name: np.concatenate([v, np.repeat(v[-1:], padding, axis=0)]) for name, v in table.items()
            }
    inputs = Inputs(
        _to_program(population),
        row_seeds,  # (numpy arrays, as the valid rows below, go to the device with the call: no dispatch of their own)
        None if mean is None else _to_program(mean),
        None if std is None else _to_program(std),
        None if normalize is None else np.bool_(normalizing),
        np.array([min(max(num_rows - share * device, 0), share) for device in range(shares)], np.int32),
        None if table is None else {name: jnp.asarray(value) for name, value in table.items()},
    )
    if shares > 1:
        inputs = _placed(inputs, devices)
    programs = _programs(
        _Settings(
            episodes,
            policy.layer_specs,  # type: ignore[arg-type]  # (fused_episodes checked it)
            program_options(settings.options, devices),
            None if normalize is None else normalize.clip,
            normalize is not None,
            settings.normalize is not None,
            settings.discrete,
            min(-(-num_slots // shares), share),
            table is not None,
        ),
        inputs,
    )
    results, status = _run(programs, inputs, progress)
    if shares > 1:  # gathered on the first device (a few numbers per row), where torch can view them
        results = jax.device_put(results, devices[0])

    on_cpu = devices[0].platform == "cpu"

    def column(values: Any, dtype: torch.dtype) -> torch.Tensor:
        return _from_program(values, dtype, num_rows if padding else None, on_cpu)

    if status[:, 3].any():  # (the status says so: the counts themselves are read only then)
        rows = column(results.non_finite, torch.int64).nonzero().flatten().tolist()
        raise ValueError(
            f"The network's actions for parameter rows {listed(rows)} hold NaN or inf (non-finite values), which make"
            " the env's states NaN; no result is returned. Look for them where the actions are made, e.g."
            " parameters so large that a layer overflows."
        )
    total = column(results.total, torch.float64)
    per_row = (
        total,
        column(results.episodes, torch.int64),
        column(results.steps, torch.int64),
        column(results.raw, torch.float64) if settings.shaping.changes_rewards else total,
        _measured(results.measured, num_rows, settings, parameters.device, on_cpu),
    )
    if settings.normalize is None:
        return per_row
    return per_row + tuple(part.to(parameters.device) for part in Moments(*results.moments).unshifted(mean))


def _to_program(tensor: torch.Tensor) -> Any:
    """A tensor as the program takes it: a CPU tensor's numpy view, which jax places with the call (without
    DLPack's Python around it: a generation's call pays each library call dearly), else a jax array on the
    tensor's device through DLPack."""
    from vecrl.arrays import convert_from_torch

    return convert_from_torch(tensor, "numpy" if tensor.device.type == "cpu" else "jax")


#: The numpy dtypes of the torch dtypes that results take (``_from_program``).
_NUMPY_DTYPES = {torch.float64: np.float64, torch.int64: np.int64}


def _from_program(values: Any, dtype: torch.dtype, num_rows: int | None, on_cpu: bool) -> torch.Tensor:
    """A result of the program as a ``dtype`` tensor, its first ``num_rows`` rows (None: all): on a CPU one
    numpy copy that torch views (DLPack's Python and a torch cast are each dear after a generation's program),
    else through DLPack on the program's device."""
    from vecrl.arrays import convert_to_torch

    if on_cpu:
        return convert_to_torch(np.asarray(values, _NUMPY_DTYPES[dtype])[:num_rows])
    return convert_to_torch(values)[:num_rows].to(dtype)


def _measured(
    measured: Any, num_rows: int, settings: RowSettings, device: torch.device, on_cpu: bool
) -> torch.Tensor:
    """The call's ``(rows, episodes, measures)`` values (float64, on ``device``), from the program's table of
    (row, episode) cells (None without measures)."""
    width = 0 if settings.measures is None else len(settings.measures.names)
    if measured is None:
        return torch.zeros(num_rows, settings.num_episodes, width, dtype=torch.float64, device=device)
    table = _from_program(measured, torch.float64, None, on_cpu).reshape(-1, settings.num_episodes, width)
    return table[:num_rows].to(device)


def program_options(options: EvaluateOptions, devices: tuple[Any, ...]) -> EvaluateOptions:
    """``options`` as a compiled program reads them (and keys its cache on them): the loop's shape resolved
    for the devices' platform (``_loop_shape``), the devices named, whichever path was asked for."""
    steps_per_check, select_restarts = _loop_shape(options, devices[0].platform)
    return options.settled(
        steps_per_check=steps_per_check, select_restarts=select_restarts, devices=devices, fused=None
    )


def _loop_shape(options: EvaluateOptions, platform: str) -> tuple[int, bool]:
    """The env steps between two checks of the loop's predicate and whether finished slots restart by
    selection: the call's (``options.steps_per_check``, ``options.select_restarts``), else the platform's. A GPU reads a
    loop's predicate on the host and runs a ``lax.cond`` in a loop slowly, so there the loop checks every
    ``GPU_STEPS_PER_CHECK`` steps and restarts by selection; on a CPU both are cheap, and a ``cond`` skips the
    fresh states no slot takes."""
    gpu = platform in ("gpu", "cuda", "rocm")
    steps = options.steps_per_check or (GPU_STEPS_PER_CHECK if gpu else CPU_STEPS_PER_CHECK)
    return steps, gpu if options.select_restarts is None else options.select_restarts


def _run(
    programs: _Programs, inputs: Inputs, progress: Callable[[int], None] | None
) -> tuple[Results, np.ndarray]:
    """The results once every row is done, from the configuration's one program, and its status (``_loop``'s).
    Where it polls (one device), the host hears the rows done at each poll, about every ``POLL_SECONDS``
    (``progress``, which hears 0 first), and a Ctrl-C stops the loop at the next poll: the KeyboardInterrupt
    then rises here. The first poll of a call comes after the checks the last call made in ``POLL_SECONDS``
    (``FIRST_POLL`` on a configuration's first call), so a short call is not polled at all."""
    from vecrl.interrupts import sigint_watched

    if progress is not None:
        progress(0)
    first = FIRST_POLL if programs.checks_per_second is None else _checks_to_poll(programs.checks_per_second)
    with sigint_watched() as ctrl_c_seen:
        watch = _Watch(progress, ctrl_c_seen)
        _WATCHING[:] = [watch]
        try:
            results, status = programs.program(inputs, np.int32(first))
            status = np.asarray(status)  # (the host waits for the program here)
        finally:
            _WATCHING.clear()
    if watch.error is not None:  # (a progress callback's, KeyboardInterrupt among them)
        raise watch.error
    if watch.stopped:  # (Ctrl-C, whose KeyboardInterrupt Python raised above, unless a handler swallowed it)
        raise KeyboardInterrupt
    programs.checks_per_second = watch.rate(status[:, 2].max())
    return results, status


def _checks_to_poll(checks_per_second: float) -> int:
    """The checks about ``POLL_SECONDS`` take at ``checks_per_second`` (at least one)."""
    return max(1, min(int(checks_per_second * POLL_SECONDS), UNBOUNDED))


class _Watch:
    """What the polls of one call tell the host, and what it answers: whether to stop, and the checks until
    the next poll (about ``POLL_SECONDS`` at the rate seen so far)."""

    def __init__(self, progress: Callable[[int], None] | None, ctrl_c_seen: Callable[[], bool]) -> None:
        self.progress, self.ctrl_c_seen = progress, ctrl_c_seen
        self.began = time.perf_counter()
        self.stopped = False
        self.error: BaseException | None = None

    def rate(self, checks_done: Any) -> float:
        """The checks a second the call has made so far."""
        return int(checks_done) / max(time.perf_counter() - self.began, 1e-6)

    def poll(self, rows_done: Any, checks_done: Any) -> tuple[np.bool_, np.int32]:
        interval = _checks_to_poll(self.rate(checks_done))
        if self.progress is not None and self.error is None:
            self.progress(int(rows_done))
        self.stopped = self.stopped or self.ctrl_c_seen()
        stop = self.stopped or self.error is not None
        return np.bool_(stop), np.int32(interval)


#: The watch of the fused call running now (one at a time: a program's poll reaches it from jax's thread).
_WATCHING: list[_Watch] = []


def _poll(rows_done: Any, checks_done: Any) -> tuple[np.bool_, np.int32]:
    """The poll compiled into every one-device program: the running call's watch answers it."""
    if not _WATCHING:  # (a program run by hand, as the benches do)
        return np.bool_(False), np.int32(UNBOUNDED)
    watch = _WATCHING[0]
    try:
        return watch.poll(rows_done, checks_done)
    except BaseException as error:  # (a progress callback's, KeyboardInterrupt among them: _run raises it)
        watch.error = watch.error or error
        return np.bool_(True), np.int32(1)


def _carried(policy: Policy, parameters: torch.Tensor) -> Normalize | None:
    """The normalization a policy carries (``policy.obs_norm``), which it applies itself on the stepped path."""
    if policy.obs_norm is None:
        return None
    return policy.obs_norm.normalizer(parameters.dtype, parameters.device)


def _mean_and_std(normalize: Normalize | None, parameters: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
    if normalize is None or normalize.mean is None or normalize.std is None:
        return None, None
    return normalize.mean.to(parameters).contiguous(), normalize.std.to(parameters).contiguous()


#: The compiled rollouts by settings and population size, least recently used first. A program holds
#: its machine code and buffers (tens of MiB for a physics env), so at most ``MAX_PROGRAMS`` are kept: a
#: run that evaluates many population sizes compiles again rather than growing without bound.
PROGRAMS: OrderedDict[tuple[_Settings, int], _Programs] = OrderedDict()
MAX_PROGRAMS = 8
#: About how long the program runs between two polls of the host, where a Ctrl-C stops it and progress is
#: heard (each call's rate of checks sets the next interval).
POLL_SECONDS = 0.25
#: The checks before the first poll of a configuration's first call, before its rate is known.
FIRST_POLL = 16
#: The checks a program may make: enough for every row to end (the loop stops when none is left).
UNBOUNDED = 2**30
#: The env steps between two checks of the loop's predicate, by platform (``evaluate(steps_per_check=)``).
CPU_STEPS_PER_CHECK = 1
GPU_STEPS_PER_CHECK = 16
_compiling = [0.0]  # the seconds this process has spent compiling programs


def compile_seconds() -> float:
    """The seconds this process has spent compiling fused programs so far (``evaluate`` reports the
    difference a call made: ``EvaluationResult.compile_seconds``).

    Examples:
        >>> compile_seconds() >= 0.0
        True
    """
    return _compiling[0]


def local_devices(devices: Sequence[Any] | None) -> tuple[Any, ...]:
    """``devices`` as a tuple, or for None every local device of the platform jax computes on by default
    (where a jax env steps and where the population arrives through DLPack)."""
    if devices is not None:
        return tuple(devices)
    return _default_devices()


@functools.cache
def _default_devices() -> tuple[Any, ...]:
    import jax

    return tuple(jax.local_devices(backend=jax.devices()[0].platform))


def _placed(inputs: Inputs, devices: tuple[Any, ...]) -> Inputs:
    """The program's inputs on the devices it runs on: rows (and each device's count of them) split over
    the devices, the normalization's mean and std on each."""
    import jax

    mesh = _mesh(devices)
    return jax.device_put(
        inputs, _input_specs(*(jax.sharding.NamedSharding(mesh, spec) for spec in _specs()))
    )


def _input_specs(split: Any, whole: Any) -> Inputs:
    """How each of the inputs is placed: row by row (``split``) or whole on every device."""
    return Inputs(
        population=split, seeds=split, mean=whole, std=whole, normalizing=whole, valid=split, params=split
    )


def _mesh(devices: tuple[Any, ...]) -> Any:
    import jax

    return jax.sharding.Mesh(np.asarray(devices, dtype=object), ("rows",))


def _specs() -> tuple[Any, Any]:
    """The partition of what is split over the devices (row by row), and of what each holds whole."""
    from jax.sharding import PartitionSpec

    return PartitionSpec("rows"), PartitionSpec()


@dataclass
class _Programs:
    """A configuration's one compiled ``program`` (``_program``), and the checks of its loop a second when
    it last ran (None before its first call), which set when a call first polls."""

    program: Any
    checks_per_second: float | None = None


def _programs(settings: _Settings, inputs: Inputs) -> _Programs:
    """The rollout's program for ``settings`` compiled for ``inputs``' shapes, once while it stays cached;
    over several devices one ``shard_map`` (every output split by rows, as the inputs), which does not poll."""
    key = (settings, inputs.population.shape[0])
    programs = PROGRAMS.pop(key, None)
    if programs is None:
        while len(PROGRAMS) >= MAX_PROGRAMS:
            PROGRAMS.popitem(last=False)
        program = functools.partial(_program, settings)
        if len(settings.devices) > 1:
            split, whole = _specs()
            mesh = _mesh(settings.devices)
            program = _shard_map(
                program, mesh, in_specs=(_input_specs(split, whole), whole), out_specs=(split, split)
            )
        programs = _Programs(_compiled(program, inputs, np.int32(1)))
    PROGRAMS[key] = programs
    return programs


def _compiled(function: Callable[..., Any], inputs: Inputs, first_poll: Any) -> Any:
    """``function`` compiled for ``inputs``' shapes, announced on stderr with the seconds it took, which
    ``compile_seconds`` counts (the rates that evaluate's callers print leave them out)."""
    import jax

    rows = inputs.population.shape[0]
    print(
        f"vecrl: compiling the rollout of {rows} rows as one jax program (once per configuration) ...",
        file=sys.stderr,
        flush=True,
    )
    began = time.perf_counter()
    compiled = jax.jit(function).lower(inputs, first_poll).compile()
    took = time.perf_counter() - began
    _compiling[0] += took
    print(f"vecrl: compiled in {took:.1f} s", file=sys.stderr, flush=True)
    return compiled


def _shard_map(function: Any, mesh: Any, **specs: Any) -> Any:
    """jax's ``shard_map`` (``jax.shard_map`` from jax 0.7 on, ``jax.experimental.shard_map`` before), without
    its check that values vary across devices as declared: the env's own code is traced in it, and some
    (brax's physics, through jaxopt) mixes varying and replicated values in one ``cond``."""
    import jax

    if hasattr(jax, "shard_map"):
        return jax.shard_map(function, mesh=mesh, check_vma=False, **specs)
    from jax.experimental.shard_map import shard_map

    return shard_map(function, mesh=mesh, check_rep=False, **specs)


class Inputs(NamedTuple):
    """What a call gives its program: the ``population`` (one parameter row each), the rows' ``seeds``, the
    normalization's ``mean`` and ``std`` and whether it applies yet (``normalizing``: statistics that have
    seen no observation leave observations as they are; all three None where the call does not normalize),
    ``valid`` (the rows of each device's share that run: the others pad it), and ``params``, the env
    parameters of each row's episodes (None: the env's)."""

    population: Any
    seeds: Any
    mean: Any
    std: Any
    normalizing: Any
    valid: Any
    params: Any


class Results(NamedTuple):
    """A call's per-row results, as the loop leaves them: the (shaped) ``total`` return, the ``episodes``
    finished, the ``steps`` taken, the ``raw`` return (of the env's own rewards, where shaping changes them),
    the steps whose action was not finite, the ``moments`` of what the slots saw, and the ``measured`` (row,
    episode) cells (None without measures)."""

    total: Any
    episodes: Any
    steps: Any
    raw: Any
    non_finite: Any
    moments: Moments
    measured: Any


class Carry(NamedTuple):
    """The loop's state: each slot's env ``state`` and ``observation``, its row's network ``parameters`` and
    recurrent ``hidden`` state, the row it ``held``s and whether it is ``counting`` for it, its episodes and
    the step ``t`` of its episode; the ``next_row`` to start (an array, split by device as the rest); the
    ``results`` so far; and with measures, each slot's current episode's values (``measuring``)."""

    state: Any
    observation: Any
    parameters: Any
    hidden: Any
    held: Any
    counting: Any
    slot_episodes: Any
    t: Any
    next_row: Any
    results: Results
    measuring: Any


def _start(settings: _Settings, inputs: Inputs) -> Carry:
    """The loop's carry before its first step: the first ``width`` rows of the population in the slots, their
    first episodes reset. Of the rows the first ``inputs.valid[0]`` run (the others pad a device's share and
    stay zero)."""
    import jax
    import jax.numpy as jnp

    from vecrl_policy import jax_layers

    episodes, specs, options = settings.episodes, settings.specs, settings.options
    num_rows, width = inputs.population.shape[0], settings.width
    held = jnp.arange(width)
    keys = jax.vmap(jax.random.PRNGKey)(inputs.seeds[:width])
    zeros_w = jnp.zeros(width, jnp.int32)
    state = _with_params(settings, episodes.reset(keys), inputs.params, held, zeros_w)
    observation = _flat(episodes.outcome(state).observation)
    parameters = _take(jax_layers.unpack(specs, inputs.population), held)
    size = observation.shape[1]
    measures = options.checked_measures
    rows = jnp.zeros(num_rows, jnp.float32)
    results = Results(
        total=rows,
        episodes=jnp.zeros(num_rows, jnp.int32),
        steps=jnp.zeros(num_rows, jnp.int32),
        raw=rows,
        non_finite=jnp.zeros(num_rows, jnp.int32),
        moments=Moments(
            zeros_w, jnp.zeros((width, size), jnp.float32), jnp.zeros((width, size), jnp.float32)
        ),
        measured=None  # each (row, episode) cell's measures
        if measures is None
        else jnp.zeros((num_rows * options.num_episodes, len(measures.names)), jnp.float32),
    )
    return Carry(
        state=state,
        observation=observation,
        parameters=parameters,
        hidden=jax_layers.initial_states(specs, parameters),
        held=held,
        counting=held < inputs.valid[0],
        slot_episodes=zeros_w,
        t=zeros_w,
        next_row=jnp.full(1, width, jnp.int32),
        results=results,
        measuring=None if measures is None else measures.start(jnp, width, jnp.float32),
    )


def _loop(
    settings: _Settings,
    carry: Carry,
    inputs: Inputs,
    checks: Any,
    poll: Callable[..., Any] | None = None,
    first_poll: Any = UNBOUNDED,
) -> tuple[Carry, Any]:
    """The loop from ``carry``, for at most ``checks`` checks of its predicate (each after
    ``settings.options.steps_per_check`` env steps) or until every row is done: the carry then, and its status
    ``[[slots still counting, rows done, checks made, rows with a non-finite action]]``. With ``poll``,
    ``poll(rows done, checks made)`` is called on the host after ``first_poll`` checks and then when it says:
    it answers ``(stop, checks until the next poll)``."""
    import jax
    import jax.numpy as jnp

    from vecrl_policy import jax_layers

    population, seeds, mean, std, normalizing, valid, params = inputs
    episodes, specs, options = settings.episodes, settings.specs, settings.options
    shaping, measures, num_episodes = options.shaping, options.checked_measures, options.num_episodes
    num_rows, width = population.shape[0], settings.width
    runs = valid[0]
    every_row = jax_layers.unpack(specs, population)
    shift = jnp.zeros(carry.observation.shape[1], jnp.float32) if mean is None else mean
    # Without refills (every row has a slot of its own from the start) slot i holds row i for the whole
    # loop: a slot's values go to its row by plain arithmetic rather than by gathers and scatters, and
    # there is no refill bookkeeping to carry.
    refills = width < num_rows

    def of_rows(values: Any, held: Any) -> Any:
        return values[held] if refills else values

    def step(c: Carry, _: Any = None) -> tuple[Carry, None]:
        x, counting, held, r = c.observation, c.counting, c.held, c.results
        seen = x
        moments = c.results.moments
        if settings.observe:  # one sum per slot (summed once the loop is done)
            moments = moments.added(x, counting, shift)
        if settings.normalize:
            x = jnp.where(normalizing, normalized(x, mean, std, settings.clip), x)
        action, hidden = jax_layers.forward(specs, c.parameters, x, c.hidden)
        if shaping.action_noise_stdev is not None:
            noise = action_noise(of_rows(seeds, held), of_rows(r.steps, held), math.prod(action.shape[1:]))
            action = action + (shaping.action_noise_stdev * noise).reshape(action.shape)
        finite = jnp.isfinite(action.reshape(width, -1)).all(axis=1)
        rows = held if refills else None
        non_finite = add_to_rows(r.non_finite, (~finite).astype(jnp.int32), rows, counting)
        if settings.discrete:  # as the stepped loop: the first of the highest scores
            action = jnp.argmax(action, axis=-1).astype(jnp.int32)
        state = episodes.step(c.state, action)
        outcome = episodes.outcome(state)
        observation, reward = _flat(outcome.observation), outcome.reward
        done = outcome.terminated | outcome.truncated
        measuring = c.measuring
        if measures is not None:
            values = measures.values(seen, action, reward, outcome.info, jnp.float32)
            measuring = measures.accumulated(measuring, values, counting)
        t, raw = c.t, r.raw
        if shaping.changes_rewards:  # (t, each episode's step count, is the alive bonus's clock alone)
            t = t + 1
            raw = add_to_rows(raw, reward, rows, counting)
            reward = shaping.shaped(reward, t.astype(reward.dtype), jnp.where)
            t = jnp.where(done, 0, t)
        total = add_to_rows(r.total, reward, rows, counting)
        steps = add_to_rows(r.steps, counting.astype(jnp.int32), rows, counting)
        ended = done & counting
        slot_episodes, finished, continuing = episode_ends(ended, c.slot_episodes, num_episodes)
        row_episodes = add_to_rows(r.episodes, ended.astype(jnp.int32), rows, counting)
        counting = counting & ~finished
        measured = r.measured
        if measures is not None:  # (held: the rows of the episodes that ended, before any refill)
            cells = (held if refills else jnp.arange(width)) * num_episodes + slot_episodes - 1
            measured, measuring = measures.ended(measured, measuring, cells, ended)
        took = restarting = continuing
        next_row = c.next_row
        if refills:  # the next rows, in order
            took, held = refilled(finished, held, next_row[0] + jnp.arange(width), runs - next_row[0])
            next_row = next_row + took.sum(dtype=jnp.int32)
            counting = counting | took
            slot_episodes, t = started(took, slot_episodes, t)
            restarting = took | continuing

        def restart(parts: tuple[Any, ...]) -> tuple[Any, ...]:
            state, observation, parameters, hidden = parts
            fresh = episodes.reset(
                jax.vmap(jax.random.PRNGKey)(episode_seed(of_rows(seeds, held), slot_episodes))
            )
            fresh = _with_params(settings, fresh, params, held, slot_episodes)
            fresh_observation = _flat(episodes.outcome(fresh).observation)
            state = _where_rows(restarting, fresh, state)
            observation = jnp.where(restarting[:, None], fresh_observation, observation)
            if refills:
                parameters = _where_rows(took, _take(every_row, held), parameters)
            hidden = _where_rows(restarting, jax_layers.initial_states(specs, parameters), hidden)
            return state, observation, parameters, hidden

        parts = (state, observation, c.parameters, hidden)
        if refills or num_episodes > 1:  # (else no slot ever restarts: nothing to compile)
            if options.select_restarts:  # (a GPU's shape: no conditional in the loop)
                parts = restart(parts)
            else:
                parts = jax.lax.cond(restarting.any(), restart, lambda parts: parts, parts)
        results = Results(total, row_episodes, steps, raw, non_finite, moments, measured)
        return Carry(*parts, held, counting, slot_episodes, t, next_row, results, measuring), None

    def done(c: Carry) -> Any:
        """The rows done so far."""
        return ((jnp.arange(num_rows) < runs) & (c.results.episodes >= num_episodes)).sum(dtype=jnp.int32)

    def steps(loop: tuple[Any, Carry, Any, Any]) -> tuple[Any, Carry, Any, Any]:
        # (steps past every row's end change nothing counted: each value is added where a slot counts)
        done_checks, c, stop, next_poll = loop
        if options.steps_per_check == 1:
            c = step(c)[0]
        else:
            c = jax.lax.scan(step, c, length=options.steps_per_check)[0]
        done_checks = done_checks + 1
        if poll is not None:  # (the host hears the rows done, may stop the loop, and says when to poll next)
            stop, interval = jax.lax.cond(
                done_checks >= next_poll,
                lambda: host_poll(poll, done(c), done_checks, settings.devices[0].platform),
                lambda: (jnp.bool_(False), next_poll - done_checks),
            )
            next_poll = done_checks + interval
        return done_checks, c, stop, next_poll

    done_checks, carry, _, _ = jax.lax.while_loop(
        lambda loop: (loop[0] < checks) & loop[1].counting.any() & ~loop[2],
        steps,
        (jnp.int32(0), carry, jnp.bool_(False), jnp.asarray(first_poll, jnp.int32)),
    )
    rows_done = done(carry)
    non_finite_rows = (carry.results.non_finite > 0).sum(dtype=jnp.int32)
    status = [carry.counting.any().astype(jnp.int32), rows_done, done_checks, non_finite_rows]
    return carry, jnp.stack(status)[None]


def _program(settings: _Settings, inputs: Inputs, first_poll: Any) -> tuple[Results, Any]:
    """The loop from the start to the end, the results and the status (``_loop``'s) handed out (not the
    carry: XLA then keeps no more of the env's states than the steps read); on one device it polls the host
    (``_poll``), first after ``first_poll`` checks."""
    import jax.numpy as jnp

    poll = _poll if len(settings.devices) == 1 else None
    carry, status = _loop(settings, _start(settings, inputs), inputs, jnp.int32(UNBOUNDED), poll, first_poll)
    return carry.results, status


def _with_params(settings: _Settings, state: Any, params: Any, held: Any, slot_episodes: Any) -> Any:
    """``state``, the states of the slots' rows' episodes, with their env params (``params`` None: as they are)."""
    import jax.numpy as jnp

    if params is None:
        return state
    episode = jnp.minimum(slot_episodes, settings.options.num_episodes - 1)
    rows = {name: value[held, episode] for name, value in params.items()}
    return settings.episodes.with_params(state, rows)  # type: ignore[attr-defined]  # (an optional member)


def _take(every_row: Any, rows: Any) -> Any:
    """The parameters of ``rows``, from every row's (``jax_layers.unpack``'s)."""
    import jax

    return jax.tree_util.tree_map(lambda leaf: leaf[rows], every_row)


def _where_rows(mask: Any, on_true: Any, on_false: Any) -> Any:
    """Row ``i`` of every leaf of ``on_true`` where ``mask[i]``, else of ``on_false``."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(
        lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b), on_true, on_false
    )


def _flat(observation: Any) -> Any:
    """A batch of observations as float32 rows, as evaluate's stepped loop flattens a Box observation."""
    return observation.reshape(observation.shape[0], -1).astype("float32")
