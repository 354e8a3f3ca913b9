"""PettingZoo's parallel envs as one vecrl vector env of seats: a row per (world, agent), agents flattened into
the env axis as SuperSuit's ``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1`` flatten them, on vecrl's
episode engine (``vecrl.HostVectorEnv``), so the autoreset modes, budgets and seeds are vecrl's, per world.

Row ``w * A + i`` is agent ``i`` (of the env's ``possible_agents``) in world ``w``; every step's and reset's
info says each row's ``world``, ``agent`` and whether the agent is ``active`` (still in its world). A world's
rows end together: when its last agent leaves, each row's episode ends, ``terminated`` where its agent
terminated and ``truncated`` where it was truncated. An agent that leaves before then is masked: its row
observes zeros, is rewarded 0 and is not ended until its world ends (its actions are not passed on).
Resets (a full one, an autoreset, a masked one) are per world: a reset mask covers whole worlds, and a
world is seeded with the seed of its first row. With ``num_workers=k`` the worlds step in k worker processes at
once (``vecrl_pettingzoo.world_group``), each holding a contiguous share of them, with the same numbers.

Agents whose observation spaces are 1-D Boxes of different lengths (predators and prey) are made alike by
padding: every row observes a Box of the longest length, an agent's own observation first and zeros after
it (bounds 0 there). Other differences (action spaces, observation spaces of other kinds) are refused.

Examples:
    >>> from mpe2 import simple_spread_v3
    >>> env = PettingZooVectorEnv(lambda: simple_spread_v3.parallel_env(max_cycles=5), num_envs=6)
    >>> env.num_worlds, env.agents
    (2, ['agent_0', 'agent_1', 'agent_2'])
    >>> observation, info = env.reset(seed=0)
    >>> observation.shape, info["world"].tolist(), info["agent"].tolist()
    ((6, 18), [0, 0, 0, 1, 1, 1], [0, 1, 2, 0, 1, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from pettingzoo import ParallelEnv

from vecrl.checks import checked_num_envs
from vecrl.contract import EpisodeOptions
from vecrl.host_vector_env import HostVectorEnv
from vecrl.worlds import NotWholeWorldsError, rows_of
from vecrl_pettingzoo.world_group import Layout, LocalWorlds, WorkerWorlds, WorldGroup


class PettingZooVectorEnv(HostVectorEnv):
    """``num_envs / A`` worlds made by ``make_world`` (a PettingZoo ``ParallelEnv`` of ``A`` agents), their
    agents the rows (see the module).

    Args:
        make_world: makes one world: a PettingZoo ``ParallelEnv`` (``mpe2.simple_spread_v3.parallel_env``).
        num_envs: the rows, ``A`` per world: a multiple of the env's number of agents.
        empty_info: every info ``{}`` (no ``world``, ``agent``, ``active`` keys).
        batch_size: async batches of that many rows (``vecrl.gathered_batches``).
        num_workers: worker processes stepping the worlds at once (None: this process), each a contiguous
            share of them; ``make_world`` must pickle (cloudpickle).
        **episode_options: ``vecrl.EpisodeOptions``' ``num_episodes``, ``autoreset_mode`` and ``seed_rule``,
            applied per world.

    Raises:
        ValueError: ``num_envs`` not a positive multiple of the agents per world (``vecrl.worlds``'
            ``NotWholeWorldsError``), agents whose action spaces differ, or observation spaces that padding
            cannot make alike (naming the agents), ``num_workers`` not a positive int.
        TypeError: ``make_world`` making no PettingZoo parallel env, or not pickling for worker processes.
    """

    def __init__(
        self,
        make_world: Callable[[], Any],
        num_envs: int,
        *,
        empty_info: bool = False,
        batch_size: int | None = None,
        num_workers: int | None = None,
        **episode_options: Any,
    ) -> None:
        options = EpisodeOptions(**episode_options)  # (checked before any world is made)
        num_envs = checked_num_envs(num_envs)
        if num_workers is not None and (
            isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1
        ):
            raise ValueError(
                f"num_workers must be None (the worlds step in this process) or a positive int (worker processes"
                f" stepping a share of the worlds each), got {num_workers!r}."
            )
        first = make_world()
        if not isinstance(first, ParallelEnv):
            raise TypeError(
                f"make_world made {type(first).__qualname__}, not a PettingZoo ParallelEnv: give the module's"
                " parallel_env (pettingzoo.butterfly.pistonball_v6.parallel_env), not its env (the AEC one)."
            )
        try:
            seats = len(first.possible_agents)
            if num_envs % seats:
                raise NotWholeWorldsError(num_envs, seats)
            layout = Layout.of(first)
        except ValueError:
            first.close()
            raise
        #: The agents of a world, in the order of its rows (the env's ``possible_agents``).
        self.agents: list[str] = layout.agents
        #: Each agent's own observation length where observations are padded (None: they are alike).
        self.observation_lengths: list[int] | None = layout.observation_lengths
        #: Worlds stepped together; row ``w * len(agents) + i`` is agent ``i`` of world ``w``.
        self.num_worlds: int = num_envs // seats
        #: The rows of a world (its agents' seats), as ``vecrl.worlds`` reads them:
        #: ``vecrl_evaluate.evaluate(..., opponents=...)`` seats a population by it.
        self.seats_per_world: int = seats
        super().__init__(
            num_envs,
            layout.observation_space,
            layout.action_space,
            episode_options=options,
            reward_dtype=np.float32,
            empty_info=empty_info,
            batch_size=batch_size,
        )
        self._world_of_row = np.repeat(np.arange(self.num_worlds), seats)
        self._agent_of_row = np.tile(np.arange(seats), self.num_worlds)
        self.active = np.zeros(num_envs, np.bool_)  # (whether each row's agent is in its world)
        self._groups: list[LocalWorlds | WorkerWorlds] = []
        #: The first world of each group, and past the last one the number of worlds.
        self._group_starts = np.zeros(1, np.int64)
        if num_workers is None:
            self._groups.append(LocalWorlds(WorldGroup(make_world, self.num_worlds, layout, first)))
        else:
            first.close()
            shares = np.array_split(np.arange(self.num_worlds), min(num_workers, self.num_worlds))
            try:
                for share in shares:
                    self._groups.append(WorkerWorlds(make_world, len(share), layout, int(share[0])))
            except BaseException:
                self.close_extras()
                raise
            self._group_starts = np.array([int(share[0]) for share in shares], np.int64)
        self._group_starts = np.append(self._group_starts, self.num_worlds)

    # -- the engine's hooks -----------------------------------------------------------------------------

    def reset_rows(
        self, ids: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        worlds = self._whole_worlds(ids)
        seats = self.seats_per_world
        world_seeds = None if seeds is None else seeds[::seats]  # (a world takes its first row's seed)
        observation, active = self._call_groups(
            "reset",
            worlds,
            lambda k: (
                None if world_seeds is None else world_seeds[k[0] : k[-1] + 1],
                options,
            ),
        )
        self.active[rows_of(worlds, self.seats_per_world)] = active
        return observation, self._info(worlds)

    def step_rows(self, actions: Any, ids: np.ndarray | None) -> Any:
        worlds = self._whole_worlds(ids)
        seats = self.seats_per_world
        actions = np.asarray(actions)
        observation, reward, terminated, truncated, active = self._call_groups(
            "step", worlds, lambda k: (actions[k[0] * seats : (k[-1] + 1) * seats],)
        )
        self.active[rows_of(worlds, self.seats_per_world)] = active
        return observation, reward, terminated, truncated, self._info(worlds)

    def close_extras(self, **kwargs: Any) -> None:
        for group in self._groups:
            group.close()
        self._groups = []

    # -- rows, worlds and groups ------------------------------------------------------------------------

    def _call_groups(
        self, method: str, worlds: np.ndarray, arguments: Callable[[np.ndarray], tuple[Any, ...]]
    ) -> tuple[np.ndarray, ...]:
        """``method`` of each group holding some of ``worlds`` (ascending), all started before any is waited
        for (worker processes step at once); their results joined, world after world. ``arguments(k)`` gives
        the call's arguments past the worlds for the positions ``k`` (into ``worlds``) of a group's worlds."""
        group_of = np.searchsorted(self._group_starts, worlds, side="right") - 1
        called = []
        for g in np.unique(group_of):
            positions = np.flatnonzero(group_of == g)
            local = worlds[positions] - self._group_starts[g]
            self._groups[g].start(method, local, *arguments(positions))
            called.append(self._groups[g])
        results, failure = [], None
        for group in called:  # (every answer read, an error's too: no group is left a reply behind)
            try:
                results.append(group.result())
            except Exception as error:
                failure = failure or error
        if failure is not None:
            raise failure
        if len(results) == 1:
            return results[0]
        return tuple(np.concatenate(parts) for parts in zip(*results, strict=True))

    def _whole_worlds(self, ids: np.ndarray | None) -> np.ndarray:
        """The worlds whose rows are ``ids`` (None: every world): whole worlds, as the engine keeps them (a
        reset mask that splits one is refused before it comes here: ``vecrl.worlds``)."""
        if ids is None:
            return np.arange(self.num_worlds)
        return np.unique(np.asarray(ids) // self.seats_per_world)

    def _info(self, worlds: np.ndarray) -> dict[str, Any]:
        if self.empty_info:
            return {}
        rows = rows_of(worlds, self.seats_per_world)
        return {
            "world": self._world_of_row[rows],
            "agent": self._agent_of_row[rows],
            "active": self.active[rows].copy(),
        }
