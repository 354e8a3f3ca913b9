"""PettingZoo's parallel envs as one vecrl vector env of seats: a row per (world, agent), agents flattened into
the env axis as SuperSuit's ``pettingzoo_env_to_vec_env_v1`` + ``concat_vec_envs_v1`` flatten them, on vecrl's
episode engine (``vecrl.HostVectorEnv``), so the autoreset modes, budgets and seeds are vecrl's, per world.

Row ``w * A + i`` is agent ``i`` (of the env's ``possible_agents``) in world ``w``; every step's and reset's
info says each row's ``world``, ``agent`` and whether the agent is ``active`` (still in its world). A world's
rows end together: when its last agent leaves, each row's episode ends, ``terminated`` where its agent
terminated and ``truncated`` where it was truncated. An agent that leaves before then is masked: its row
observes zeros, is rewarded 0 and is not ended until its world ends (its actions are not passed on).
Resets (a full one, an autoreset, a masked one) are per world: a reset mask covers whole worlds, and a
world is seeded with the seed of its first row.

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
from gymnasium.spaces import Box, Discrete, Space
from pettingzoo import ParallelEnv

from vecrl.checks import checked_num_envs
from vecrl.contract import EpisodeOptions
from vecrl.host_vector_env import HostVectorEnv


class PettingZooVectorEnv(HostVectorEnv):
    """``num_envs / A`` worlds made by ``make_world`` (a PettingZoo ``ParallelEnv`` of ``A`` agents), their
    agents the rows (see the module).

    Args:
        make_world: makes one world: a PettingZoo ``ParallelEnv`` (``mpe2.simple_spread_v3.parallel_env``).
        num_envs: the rows, ``A`` per world: a multiple of the env's number of agents.
        empty_info: every info ``{}`` (no ``world``, ``agent``, ``active`` keys).
        batch_size: async batches of that many rows (``vecrl.gathered_batches``).
        **episode_options: ``vecrl.EpisodeOptions``' ``num_episodes``, ``autoreset_mode`` and ``seed_rule``,
            applied per world.

    Raises:
        ValueError: ``num_envs`` not a positive multiple of the agents per world, agents whose action spaces
            differ, or observation spaces that padding cannot make alike (naming the agents).
        TypeError: ``make_world`` making no PettingZoo parallel env.
    """

    def __init__(
        self,
        make_world: Callable[[], Any],
        num_envs: int,
        *,
        empty_info: bool = False,
        batch_size: int | None = None,
        **episode_options: Any,
    ) -> None:
        options = EpisodeOptions(**episode_options)  # (checked before any world is made)
        num_envs = checked_num_envs(num_envs)
        first = make_world()
        if not isinstance(first, ParallelEnv):
            raise TypeError(
                f"make_world made {type(first).__qualname__}, not a PettingZoo ParallelEnv: give the module's"
                " parallel_env (pettingzoo.butterfly.pistonball_v6.parallel_env), not its env (the AEC one)."
            )
        agents = list(first.possible_agents)
        if num_envs % len(agents):
            first.close()
            worlds = max(1, num_envs // len(agents))
            raise ValueError(
                f"num_envs must be a positive multiple of the {len(agents)} agents of a world (a row per agent"
                f" of each world), got {num_envs!r}: give num_envs={len(agents) * worlds} for {worlds} world(s)."
            )
        try:
            observation_space, self.observation_lengths = seat_observation_space(first, agents)
            action_space = seat_action_space(first, agents)
        except ValueError:
            first.close()
            raise
        #: The agents of a world, in the order of its rows (the env's ``possible_agents``).
        self.agents: list[str] = agents
        #: Worlds stepped together; row ``w * len(agents) + i`` is agent ``i`` of world ``w``.
        self.num_worlds: int = num_envs // len(agents)
        #: The rows of a world (its agents' seats): ``vecrl_evaluate.evaluate(..., opponents=...)`` seats a
        #: population by it.
        self.seats_per_world: int = len(agents)
        self.worlds = [first] + [make_world() for _ in range(self.num_worlds - 1)]
        super().__init__(
            num_envs,
            observation_space,
            action_space,
            episode_options=options,
            reward_dtype=np.float32,
            empty_info=empty_info,
            batch_size=batch_size,
        )
        seats = len(agents)
        self._world_of_row = np.repeat(np.arange(self.num_worlds), seats)
        self._agent_of_row = np.tile(np.arange(seats), self.num_worlds)
        self.active = np.zeros(num_envs, np.bool_)  # (whether each row's agent is in its world)
        self._terminated = np.zeros(num_envs, np.bool_)  # (each row's agent left by termination)
        self._observation_dtype = observation_space.dtype
        self._row_shape: tuple[int, ...] = observation_space.shape or ()
        self._discrete_actions = isinstance(action_space, Discrete)

    # -- the engine's hooks -----------------------------------------------------------------------------

    def reset_rows(
        self, ids: np.ndarray | None, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        worlds = self._whole_worlds(ids, "reset")
        seats = len(self.agents)
        observation = np.zeros((len(worlds) * seats, *self._row_shape), self._observation_dtype)
        for k, world in enumerate(worlds):
            seed = None if seeds is None else seeds[k * seats]
            observations, _ = self.worlds[world].reset(seed=seed, options=options)
            rows = slice(world * seats, (world + 1) * seats)
            self.active[rows] = [agent in observations for agent in self.agents]
            self._terminated[rows] = False
            self._write(observation, k * seats, observations)
        return observation, self._info(worlds)

    def step_rows(self, actions: Any, ids: np.ndarray | None) -> Any:
        worlds = self._whole_worlds(ids, "step")
        seats = len(self.agents)
        count = len(worlds) * seats
        observation = np.zeros((count, *self._row_shape), self._observation_dtype)
        reward = np.zeros(count, np.float32)
        terminated = np.zeros(count, np.bool_)
        truncated = np.zeros(count, np.bool_)
        # (a Discrete space's actions as Python ints at once: PettingZoo's envs take them so)
        given_actions = actions.tolist() if self._discrete_actions else actions
        for k, world_id in enumerate(worlds):
            world, first = self.worlds[world_id], world_id * seats
            live = self.active[first : first + seats]
            given = {agent: given_actions[k * seats + i] for i, agent in enumerate(self.agents) if live[i]}
            observations, rewards, terminations, _, _ = world.step(given)  # (truncation: the world ends)
            self._write(observation, k * seats, observations)
            for i, agent in enumerate(self.agents):
                reward[k * seats + i] = rewards.get(agent, 0.0)
                if terminations.get(agent, False):
                    self._terminated[first + i] = True
            remaining = set(world.agents)  # (read once: PettingZoo's wrappers forward it through __getattr__)
            self.active[first : first + seats] = [agent in remaining for agent in self.agents]
            if not remaining:  # the world has ended: each of its rows ends, as its agent left it
                ended = self._terminated[first : first + seats]
                terminated[k * seats : (k + 1) * seats] = ended
                truncated[k * seats : (k + 1) * seats] = ~ended
        return observation, reward, terminated, truncated, self._info(worlds)

    def close_extras(self, **kwargs: Any) -> None:
        for world in self.worlds:
            world.close()

    # -- rows and worlds --------------------------------------------------------------------------------

    def _whole_worlds(self, ids: np.ndarray | None, doing: str) -> np.ndarray:
        """The worlds whose rows are ``ids`` (None: every world); a ValueError where ``ids`` holds part of a
        world (a reset mask that splits one: a world resets as a whole)."""
        if ids is None:
            return np.arange(self.num_worlds)
        seats = len(self.agents)
        worlds = np.unique(np.asarray(ids) // seats)
        if len(ids) != len(worlds) * seats or not np.array_equal(np.asarray(ids), self._rows_of(worlds)):
            raise ValueError(
                f"cannot {doing} part of a world: rows {list(map(int, ids))} split world(s)"
                f" {sorted(set(map(int, worlds)))}, whose {seats} agents are rows w*{seats} to w*{seats}+{seats - 1};"
                " give a reset_mask that holds every row of a world or none."
            )
        return worlds

    def _rows_of(self, worlds: np.ndarray) -> np.ndarray:
        """The rows of ``worlds``, world after world."""
        seats = len(self.agents)
        return (worlds[:, None] * seats + np.arange(seats)).ravel()

    def _write(self, out: np.ndarray, start: int, observations: dict[str, Any]) -> None:
        """The agents' ``observations`` into their rows of ``out`` from row ``start``, each padded with zeros
        (an agent that has left keeps zeros)."""
        lengths = self.observation_lengths
        for i, agent in enumerate(self.agents):
            if agent in observations:
                if lengths is None:
                    out[start + i] = observations[agent]
                else:
                    out[start + i, : lengths[i]] = np.asarray(observations[agent]).ravel()

    def _info(self, worlds: np.ndarray) -> dict[str, Any]:
        if self.empty_info:
            return {}
        rows = self._rows_of(worlds)
        return {
            "world": self._world_of_row[rows],
            "agent": self._agent_of_row[rows],
            "active": self.active[rows].copy(),
        }


def seat_observation_space(world: Any, agents: list[str]) -> tuple[Space, list[int] | None]:
    """The observation space of every row (the agents' one space, or their 1-D Boxes padded to the longest)
    and, where padded, each agent's own length; a ValueError naming the agents whose spaces cannot be made
    alike.

    Examples:
        >>> from mpe2 import simple_tag_v3
        >>> space, lengths = seat_observation_space(simple_tag_v3.parallel_env(), ["adversary_0", "agent_0"])
        >>> space.shape, lengths
        ((16,), [16, 14])
        >>> seat_observation_space(simple_tag_v3.parallel_env(), ["adversary_0", "adversary_1"])[1] is None
        True
    """
    spaces = [world.observation_space(agent) for agent in agents]
    if all(space == spaces[0] for space in spaces):
        return spaces[0], None
    if not all(isinstance(space, Box) and len(space.shape) == 1 for space in spaces):
        kinds = {agent: str(space) for agent, space in zip(agents, spaces, strict=True)}
        raise ValueError(
            f"the agents' observation spaces differ, and only 1-D Boxes are padded alike: {kinds}; give an env"
            " whose agents observe alike (or wrap it with SuperSuit's pad_observations_v0 and flatten them)."
        )
    lengths = [space.shape[0] for space in spaces]
    longest = max(lengths)
    dtype = np.result_type(*(space.dtype for space in spaces))
    low, high = (
        np.zeros(longest, dtype),
        np.zeros(longest, dtype),
    )  # (0: the padding, where an agent has none)
    for space, length in zip(spaces, lengths, strict=True):
        low[:length], high[:length] = (
            np.minimum(low[:length], space.low),
            np.maximum(high[:length], space.high),
        )
    return Box(low, high, (longest,), dtype), lengths


def seat_action_space(world: Any, agents: list[str]) -> Space:
    """The one action space of every agent; a ValueError naming them where they differ."""
    spaces = {agent: world.action_space(agent) for agent in agents}
    first = spaces[agents[0]]
    if any(space != first for space in spaces.values()):
        raise ValueError(
            f"the agents' action spaces differ ({ {agent: str(space) for agent, space in spaces.items()} }): a"
            " row's action must mean the same for every agent. Give an env whose agents act alike (SuperSuit's"
            " pad_action_space_v0 makes them so)."
        )
    return first
