"""The loop behind ``evaluate``: the rows of a population run on the sub-envs of one env, and a sub-env
whose row is done takes the next row at once (a masked reset of that sub-env, the policy's parameters
and recurrent state for that slot replaced), so the cost follows the rows still running and only the
call's last rows form a tail.

Row ``r``'s episodes start from its own reset seeds and its action noise comes from its seed too
(``vecrl_evaluate.randomness``, the rule the fused program follows as well), whichever sub-env runs it:
its result depends on (the call's seed, ``r``) alone, not on ``num_envs``, on how the population is split
among workers, or on the rows beside it.

A backend whose masked reset cannot take seeds (``Capabilities(seeded_masked_reset=False)``: envpool fixes each
sub-env's seed when its pool is built) runs a seeded call in whole-env resets instead: the next
``num_envs`` rows start together once every sub-env is done.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
import torch

from vecrl.autoreset import declared_autoreset_mode
from vecrl.checks import SubEnvError
from vecrl.contract import capabilities_of
from vecrl.host_vector_env import HostVectorEnv
from vecrl.params import PARAMS_OPTION
from vecrl.torch_wrapper import TorchWrapper
from vecrl_evaluate.measures import step_info_values
from vecrl_evaluate.options import RowSettings
from vecrl_evaluate.randomness import RowSeeds, action_noise, episode_seed, random_row_seeds
from vecrl_evaluate.rollout import add_to_rows, episode_ends, refilled, started
from vecrl_policy.policy import Policy
from vecrl_policy.statistics import Moments

#: The rewards of this many steps are kept, then added to their rows at once (see ``_Fold``).
FOLD_STEPS = 64


class RowSource(Protocol):
    """Where a row loop gets the rows its free sub-envs start: all of them at once (``InOrder``), or a
    few at a time from another process (the evaluation workers' caller hands them out as processes free
    sub-envs)."""

    def take(self, count: int, *, wait: bool = False) -> list[int]:
        """Up to ``count`` rows to start now, fewer or none when fewer are at hand; with ``wait``, at least
        one unless ``done``."""
        ...

    def arrived(self) -> bool:
        """Whether rows came (from elsewhere) since the last ``take``; called between steps."""
        ...

    @property
    def done(self) -> bool:
        """No row is at hand and none will come."""
        ...


class InOrder:
    """Rows ``0 .. num_rows - 1``, in order.

    Examples:
        >>> rows = InOrder(3)
        >>> rows.take(2), rows.take(2), rows.done
        ([0, 1], [2], True)
    """

    def __init__(self, num_rows: int) -> None:
        self._next, self._stop = 0, num_rows

    def take(self, count: int, *, wait: bool = False) -> list[int]:
        first, self._next = self._next, min(self._next + count, self._stop)
        return list(range(first, self._next))

    def arrived(self) -> bool:
        return False

    @property
    def done(self) -> bool:
        return self._next == self._stop


def run_rows(
    policy: Policy,
    env: Any,
    rows: torch.Tensor,
    seeds: RowSeeds | None,
    settings: RowSettings,
    params: Mapping[str, np.ndarray] | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    source: RowSource | None = None,
) -> tuple[torch.Tensor, ...]:
    """Run each of ``rows`` for ``settings.num_episodes`` episodes on ``env``, row ``r`` reset with
    ``seeds[r]`` (unseeded when ``seeds`` is None) and, with ``params``, its episode ``e`` run with the env
    parameters ``params[name][r, e]`` (``vecrl.randomize.params_table``): each row's ``(total_return, episodes, steps, raw_return, measures)`` (``raw_return`` of the env's own rewards,
    ``measures`` of shape ``(rows, num_episodes, len(settings.measures))``: each episode's) on the
    device of ``rows``, and with ``settings.normalize``, the observations the rows saw as ``(count, sum,
    sum of squares)`` (one row each). ``progress`` hears how many rows are done whenever rows finish.
    ``source`` says which rows run (default: all, in order); the results of the others are zeros."""
    source = InOrder(len(rows)) if source is None else source
    loop = _RowLoop(policy, env, rows, seeds, settings, source, params)
    # the host engine's infos (gymnasium batches each sub-env's every step: half a MuJoCo step's cost) are
    # skipped where the call reads no info key; the env's own setting is back when the call returns
    reads_info = bool(loop.measures and loop.measures.keys)
    quiet = loop.engine if loop.engine is not None and not (loop.engine.empty_info or reads_info) else None
    try:
        if quiet is not None:
            quiet.empty_info = True
        return loop.run(progress)
    except SubEnvError as error:
        if error.row is not None:  # a worker's, which the caller heard between its steps: named already
            raise
        raise error.with_row(int(loop.held[error.index])) from error.__cause__
    finally:
        if quiet is not None:
            quiet.empty_info = False


class _RowLoop:
    """One ``run_rows`` call: which row each sub-env (slot) holds, and the results so far (on the CPU)."""

    def __init__(
        self,
        policy: Policy,
        env: Any,
        rows: torch.Tensor,
        seeds: RowSeeds | None,
        settings: RowSettings,
        source: RowSource,
        params: Mapping[str, np.ndarray] | None,
    ) -> None:
        self.policy, self.env, self.rows, self.seeds, self.source = policy, env, rows, seeds, source
        # each row's env parameters per episode, set by the reset that starts the episode; without them, the
        # env's defaults, set once (evaluate's resets then keep them, whatever the env had before)
        self.params = params
        self.has_params = bool(getattr(env.unwrapped, "default_params", None))
        self.num_episodes, self.discrete, self.flatten = (
            settings.num_episodes,
            settings.discrete,
            settings.flatten,
        )
        self.shaping, self.normalize = settings.shaping, settings.normalize
        self.num_rows, self.num_slots = len(rows), env.num_envs
        # masked resets start rows one sub-env at a time, where the backend can seed them so
        capabilities = capabilities_of(env)
        self.refills = seeds is None or capabilities.seeded_masked_reset
        # a seeded row's later episodes start from seeded masked resets, on every backend, with or without
        # params (vecrl_evaluate.randomness); an episode with parameters of its own starts from a masked reset
        # that gives them
        self.reseeds = self.refills and (seeds is not None or params is not None)
        # each row's seed (drawn for an unseeded call: its noise needs one)
        self.row_seed = torch.as_tensor(
            random_row_seeds(len(rows)) if seeds is None else seeds, dtype=torch.int64
        )
        self.held = torch.zeros(self.num_slots, dtype=torch.int64)  # the row each slot runs (or ran last)
        self.counting = torch.zeros(self.num_slots, dtype=torch.bool)  # slots whose row is not done
        self.idle: torch.Tensor | None = None  # (see _set_counting)
        # held where counting, else -1 (replaced, never changed in place)
        self.owner = torch.full((self.num_slots,), -1)
        self.slot_episodes = torch.zeros(self.num_slots, dtype=torch.int64)
        self.t = torch.zeros(self.num_slots, dtype=torch.int64)  # each episode's steps (alive bonus)
        self.row_steps = torch.zeros(self.num_slots, dtype=torch.int64)  # its row's steps so far (noise)
        # In next_step mode the step after an episode's end resets that sub-env (its action ignored, reward
        # 0): not an env step of the row, so it is not counted, draws no noise and is not one of ``t``.
        self.next_step = declared_autoreset_mode(env.unwrapped) == "next_step"
        self.no_slots = torch.zeros(self.num_slots, dtype=torch.bool)
        self.resetting = self.no_slots
        self.total = torch.zeros(self.num_rows, dtype=torch.float64)
        self.raw = torch.zeros(self.num_rows, dtype=torch.float64)  # the env's own rewards, where shaped
        self.episodes = torch.zeros(self.num_rows, dtype=torch.int64)
        self.steps = torch.zeros(self.num_rows, dtype=torch.int64)
        self.rows_done = 0
        self.progress: Callable[[int], None] | None = None
        self.fold = _Fold(self.num_rows, observed=self.normalize is not None)
        self.measures = settings.measures
        width = 0 if self.measures is None else len(self.measures.names)
        # each (row, episode)'s measures, and each slot's of its current episode (vecrl_evaluate.measures)
        self.measured = torch.zeros(self.num_rows * self.num_episodes, width, dtype=torch.float64)
        self.measuring = (
            None if self.measures is None else self.measures.start(torch, self.num_slots, torch.float64)
        )
        self.action_shape = () if self.discrete else tuple(env.single_action_space.shape)
        # Once the policy holds a quarter of slots that are done and no row will take them (the tail), it
        # drops them (keep_rows): from then on ``live`` maps its rows to slots, and the dropped slots
        # repeat their last action (under a budget the env skips them). The network costs what is left.
        self.live: torch.Tensor | None = None
        self.actions: torch.Tensor | None = None  # every slot's last action
        # the engine's pause, for the slots no row holds: the env then steps only the rows still running,
        # with or without a budget of its own
        self.engine = engine = _host_engine(env)
        self.pause = (
            engine.pause if engine is not None and declared_autoreset_mode(engine) == "same_step" else None
        )

    def run(self, progress: Callable[[int], None] | None) -> tuple[torch.Tensor, ...]:
        self.progress = progress
        features = self._start_together(self.source.take(self.num_slots, wait=True))
        with torch.no_grad():
            while True:
                seen = features
                if self.normalize is not None:
                    self.fold.observed.append(features)
                    features = self.normalize(features)
                live, resetting = self.live, self.resetting
                output = self.policy(features if live is None else features[live])
                if self.shaping.action_noise_stdev is not None:
                    output = output + self._noise(live)
                action = output.argmax(dim=-1) if self.discrete else output
                if live is not None:
                    assert self.actions is not None
                    self.actions[live] = action
                    action = self.actions
                self.actions = action
                observation, reward, terminated, truncated, info = self.env.step(action)
                if self.shaping.action_noise_stdev is not None:
                    self.row_steps += self.counting & ~resetting
                done = (terminated | truncated).cpu()
                reward = reward.to("cpu", torch.float64)
                if self.measures is not None:
                    self._measure(seen, action, reward, info, done, resetting)
                if self.shaping.changes_rewards:
                    self.fold.raw.append(reward)
                    self.t += ~resetting
                    reward = self.shaping.shaped(reward, self.t.to(torch.float64))
                    self.t = torch.where(done, 0, self.t)
                self.fold.rewards.append(reward)  # (before a refill: the new rows' steps start after it)
                self.fold.owners.append(
                    torch.where(resetting, -1, self.owner) if self.next_step else self.owner
                )
                self.resetting = self.no_slots
                features = self._features(observation, "step()", self.counting, done)
                ended = done & self.counting
                if ended.any():
                    features = self._episodes_ended(ended, features)
                    if not self.counting.any():  # (only an episode's end frees every slot)
                        features = self._start_more(features)
                        if not self.counting.any():
                            break
                elif self.refills and self.source.arrived():
                    features = self._restart(features)
                if len(self.fold.rewards) == FOLD_STEPS:
                    self.fold(self)
        self.fold(self)
        if progress is not None:
            progress(self.num_rows)
        device = self.rows.device
        raw = self.raw if self.shaping.changes_rewards else self.total
        measured = self.measured.reshape(self.num_rows, self.num_episodes, -1)
        results = tuple(
            result.to(device) for result in (self.total, self.episodes, self.steps, raw, measured)
        )
        return results if self.normalize is None else results + self.fold.statistics()

    def _measure(
        self,
        seen: torch.Tensor,
        action: torch.Tensor,
        reward: torch.Tensor,
        info: Any,
        done: torch.Tensor,
        resetting: torch.Tensor,
    ) -> None:
        """Count one step's measures for the slots that count it (not those a next_step reset restarted); the
        episodes that ended add theirs to their rows' (``vecrl_evaluate.measures``)."""
        assert self.measures is not None and self.measuring is not None
        ended = done & self.counting
        keys = self.measures.keys
        reported = step_info_values(info, keys, ended.numpy(), self.num_slots) if keys else {}
        values = self.measures.values(seen, action, reward.to(seen.device), reported, torch.float64)
        self.measuring = self.measures.accumulated(self.measuring, values, self.counting & ~resetting)
        if ended.any():
            cells = self.held * self.num_episodes + self.slot_episodes
            self.measured, self.measuring = self.measures.ended(self.measured, self.measuring, cells, ended)

    def _episodes_ended(self, ended: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        """Count the episodes that ended; a row done with its episodes frees its slot for the next row.
        Returns the features the policy sees next (new rows' first observations where rows started)."""
        self.slot_episodes, finished, continuing = episode_ends(ended, self.slot_episodes, self.num_episodes)
        self.episodes = add_to_rows(self.episodes, ended.long(), self.held, ended)
        again = None
        if continuing.any():  # their recurrent state starts afresh with the next episode
            self.policy.reset(continuing if self.live is None else continuing[self.live])
            if self.reseeds:
                again = continuing
            elif self.next_step:
                self.resetting = continuing
        if finished.any():
            self.rows_done += int(finished.sum())
            if self.progress is not None:
                self.progress(self.rows_done)
            self._set_counting(self.counting & ~finished)
        if self.refills and (again is not None or finished.any()):
            features = self._restart(features, again=again)
        if finished.any():
            if self.pause is not None:
                self.pause((finished & ~self.counting).numpy())
            self._drop_done_rows()
        return features

    def _start_more(self, features: torch.Tensor) -> torch.Tensor:
        """Every slot is free: the next rows (waiting for them if they are yet to come), by masked resets
        or by one reset of the whole env; ``features`` when no row is left."""
        if self.refills:
            return self._restart(features, wait=True)
        rows = self.source.take(self.num_slots, wait=True)
        return self._start_together(rows) if rows else features

    def _start_together(self, rows: list[int]) -> torch.Tensor:
        """Start ``rows`` (at most ``num_slots``; spare slots hold copies of the last one, not counted)
        with one reset of the whole env; the features of its first observations."""
        held = torch.tensor(rows, dtype=torch.int64)
        count = len(held)
        self.held = torch.cat([held, held[-1:].expand(self.num_slots - count)])
        self._set_counting(torch.arange(self.num_slots) < count)
        self.slot_episodes.zero_()
        self.t.zero_()
        self.row_steps.zero_()
        self.live = self.actions = None
        self.policy.set_parameters(self._rows_of(self.held))
        seeds = self._reset_seeds()
        options = self._params_option(None)
        observation, _ = self.env.reset(seed=seeds, options=options)
        return self._features(observation, "reset()", self.counting)

    def _restart(
        self, features: torch.Tensor, *, again: torch.Tensor | None = None, wait: bool = False
    ) -> torch.Tensor:
        """The rows at hand (waiting for some, with ``wait``) on the free slots, and the next episode of the
        rows on the slots of the mask ``again``, started by one masked reset, each seeded by the rule of
        ``vecrl_evaluate.randomness``; the features of the observations the reset returns (``features``
        when nothing starts)."""
        mask = self.no_slots if again is None else again
        if not self.source.done:  # (the tail, where the policy dropped done rows, comes after)
            free = ~self.counting
            new = torch.tensor(self.source.take(int(free.sum()), wait=wait), dtype=torch.int64)
            if len(new):
                took, self.held = refilled(free, self.held, new, len(new))
                self._set_counting(self.counting | took)
                self.slot_episodes, self.t, self.row_steps = started(
                    took, self.slot_episodes, self.t, self.row_steps
                )
                # (in slot order, as refilled gave them out; their recurrent state cleared)
                self.policy.set_parameters(self._rows_of(new), took.nonzero().flatten())
                mask = mask | took
        if mask is self.no_slots:
            return features
        seeds = self._reset_seeds()  # the unmasked slots' seeds are not used
        options = {"reset_mask": mask, **(self._params_option(mask) or {})}
        observation, _ = self.env.reset(seed=seeds, options=options)
        return self._features(observation, "reset()", mask)

    def _features(
        self, observation: Any, during: str, live: torch.Tensor, done: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The flat features of ``observation``: the rows of slots that hold no row zeroed (a spent sub-env
        reports NaN), and those of the other slots not ``live`` (or ``done``) too where they are not finite; a
        SubEnvError naming the sub-env (and so the row) where a live slot's observation holds NaN or inf,
        which the policy would otherwise turn into a score."""
        features = self.flatten(observation)
        if self.idle is not None:
            features = features.masked_fill(self.idle, 0.0)
        # one sum tells whether every value is finite (a finite sum that overflows only takes the long way)
        if math.isfinite(features.sum()):
            return features
        finite = torch.isfinite(features).all(dim=1)
        live = live if done is None else live & ~done
        broken = (~finite & live.to(finite.device)).nonzero().flatten().tolist()
        if broken:
            slot = broken[0]
            raise SubEnvError(
                slot,
                during,
                ValueError(
                    f"its observation holds NaN or inf ({features[slot].tolist()}), which evaluate cannot score;"
                    " look for where the env's state stops being finite"
                ),
            )
        return torch.where(finite[:, None], features, torch.zeros((), dtype=features.dtype))

    def _params_option(self, mask: torch.Tensor | None) -> dict[str, Any] | None:
        """The ``params`` option of a reset (of the slots of ``mask``, None: all): each slot's row's params for
        its next episode; the defaults at a full reset without them (no name given: every one back to its
        default); None where the env has no params."""
        if self.params is None:
            return {PARAMS_OPTION: {}} if mask is None and self.has_params else None
        rows = self.held.numpy()
        episodes = np.minimum(self.slot_episodes.numpy(), self.num_episodes - 1)
        return {PARAMS_OPTION: {name: value[rows, episodes] for name, value in self.params.items()}}

    def _noise(self, live: torch.Tensor | None) -> torch.Tensor:
        """The action noise of the slots ``live`` (all when None), by each one's row seed and step."""
        slots = slice(None) if live is None else live
        noise = action_noise(
            self.row_seed[self.held[slots]], self.row_steps[slots], math.prod(self.action_shape)
        )
        stdev = self.shaping.action_noise_stdev
        return (stdev * noise).reshape(-1, *self.action_shape).to(self.rows.device, self.rows.dtype)

    def _reset_seeds(self) -> list[int] | None:
        """Each slot's seed for a reset that starts its row's next episode (None for an unseeded call)."""
        if self.seeds is None:
            return None
        seeds = self.row_seed[self.held]
        # a row's first episode starts from its own seed (episode_seed's rule for episode 0); the hash, some
        # 15 tensor ops, is computed only where a slot is past it: not on the refills of one-episode calls
        if self.slot_episodes.any():
            seeds = episode_seed(seeds, self.slot_episodes)
        listed: list[int] = seeds.tolist()
        return listed

    def _rows_of(self, rows: torch.Tensor) -> torch.Tensor:
        """The parameter rows ``rows`` (index_select: advanced indexing copies 4x slower on the CPU)."""
        return self.rows.index_select(0, rows.to(self.rows.device))

    def _set_counting(self, counting: torch.Tensor) -> None:
        self.counting = counting
        self.owner = torch.where(counting, self.held, -1)
        # the slots holding no row, whose features nothing reads (None: none)
        self.idle = None if bool(counting.all()) else (~counting)[:, None].to(self.rows.device)

    def _drop_done_rows(self) -> None:
        """Drop the rows of done slots from the policy once they are a quarter of what it holds, unless a
        masked reset may still give those slots new rows."""
        if self.refills and not self.source.done:
            return
        held = self.counting if self.live is None else self.counting[self.live]
        if 4 * int(held.sum()) > 3 * len(held) or not held.any():
            return
        if self.live is None:
            self.live = torch.arange(self.num_slots)
            self.actions = self.actions.clone()  # type: ignore[union-attr]
        keep = held.nonzero().flatten()
        self.policy.keep_rows(keep)
        self.live = self.live[keep]


def _host_engine(env: Any) -> HostVectorEnv | None:
    """The host engine (``vecrl.HostVectorEnv``) right under ``env``, where nothing between them (vecrl's
    TorchWrapper alone, no vector wrappers) would see what the loop changes: a paused sub-env's NaN results
    (``pause``), infos left out (``empty_info``); None otherwise."""
    inner = env.env if isinstance(env, TorchWrapper) else None
    return inner if isinstance(inner, HostVectorEnv) else None


class _Fold:
    """The rewards of the last steps (and, where shaping changes them, the env's own) and the row each slot
    counted them for (-1: none), and with ``observed``, the features the policy saw; added to the rows
    every FOLD_STEPS steps."""

    def __init__(self, num_rows: int, *, observed: bool) -> None:
        self.num_rows = num_rows
        self.rewards: list[torch.Tensor] = []
        self.raw: list[torch.Tensor] = []
        self.owners: list[torch.Tensor] = []
        self.observed: list[torch.Tensor] = []
        self.moments = Moments.zero()

    def __call__(self, loop: _RowLoop) -> None:
        """Add the kept rewards and steps to ``loop``'s rows, in step order, and the observations counted to
        the statistics; the lists emptied. (Rewards counted for no row, NaN under a spent budget, are left
        out.)"""
        if not self.rewards:
            return
        owners = torch.stack(self.owners)
        counted = owners >= 0
        loop.total = add_to_rows(loop.total, torch.stack(self.rewards), owners, counted)
        if self.raw:
            loop.raw = add_to_rows(loop.raw, torch.stack(self.raw), owners, counted)
        loop.steps = add_to_rows(loop.steps, counted.long(), owners, counted)
        if self.observed:
            observed = torch.stack(self.observed).to(torch.float64)
            self.moments = self.moments.added(observed, counted.to(observed.device), axis=(0, 1))
        for kept in (self.rewards, self.raw, self.owners, self.observed):
            kept.clear()

    def statistics(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The observations counted so far: ``(count, sum, sum of squares)``, one row each."""
        return self.moments.unshifted(None)
