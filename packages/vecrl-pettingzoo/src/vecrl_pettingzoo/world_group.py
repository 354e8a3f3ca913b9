"""Worlds stepped together: their agents' rows written into arrays, in this process (``WorldGroup``) or in a
worker process of their own (``WorkerWorlds``), so that ``PettingZooVectorEnv`` steps its worlds in
``num_workers`` processes at once with the same numbers as in one.

A group's worlds are numbered from 0 within it; ``reset`` and ``step`` take some of them (ascending) and
return their rows, ``seats`` a world, world after world. An agent that has left its world is masked: its row
observes zeros, is rewarded 0 and its actions are not passed on; when a world's last agent leaves, each of
its rows ends, ``terminated`` where its agent terminated and ``truncated`` where it was truncated.

Examples:
    >>> from mpe2 import simple_spread_v3
    >>> layout = Layout.of(simple_spread_v3.parallel_env(max_cycles=5))
    >>> group = WorldGroup(lambda: simple_spread_v3.parallel_env(max_cycles=5), 2, layout)
    >>> observation, active = group.reset(np.arange(2), [0, 1], None)
    >>> observation.shape, active.tolist()
    ((6, 18), [True, True, True, True, True, True])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle
import numpy as np
from gymnasium.spaces import Box, Discrete, Space

from vecrl.processes import RemoteFailure, WorkerProcess, ignore_interrupts, messages, pickled


@dataclass(frozen=True)
class Layout:
    """How a world's agents become rows: the agents in row order, the rows' observation space and action
    space, and, where observations are padded, each agent's own length."""

    agents: list[str]
    observation_space: Space
    action_space: Space
    observation_lengths: list[int] | None

    @classmethod
    def of(cls, world: Any) -> Layout:
        """The layout of ``world``'s agents (``possible_agents``); a ValueError naming them where their spaces
        cannot be made alike (``seat_observation_space``, ``seat_action_space``)."""
        agents = list(world.possible_agents)
        observation_space, lengths = seat_observation_space(world, agents)
        return cls(agents, observation_space, seat_action_space(world, agents), lengths)

    @property
    def seats(self) -> int:
        return len(self.agents)


class WorldGroup:
    """``count`` worlds made by ``make_world`` (``first`` the first of them, where already made), stepped in
    this process."""

    def __init__(self, make_world: Callable[[], Any], count: int, layout: Layout, first: Any = None) -> None:
        self.layout = layout
        self.worlds = [first] if first is not None else []
        self.worlds += [make_world() for _ in range(count - len(self.worlds))]
        seats = layout.seats
        self.active = np.zeros(count * seats, np.bool_)  # (whether each row's agent is in its world)
        self._terminated = np.zeros(count * seats, np.bool_)  # (each row's agent left by termination)
        space = layout.observation_space
        self._row_shape: tuple[int, ...] = space.shape or ()
        self._observation_dtype = space.dtype
        self._discrete_actions = isinstance(layout.action_space, Discrete)

    def reset(
        self, worlds: np.ndarray, seeds: list[Any] | None, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Reset ``worlds`` (with ``seeds``, one a world); their rows' observations and whether each row's
        agent is in its world."""
        seats = self.layout.seats
        observation = np.zeros((len(worlds) * seats, *self._row_shape), self._observation_dtype)
        for k, world in enumerate(worlds):
            observations, _ = self.worlds[world].reset(
                seed=None if seeds is None else seeds[k], options=options
            )
            rows = slice(world * seats, (world + 1) * seats)
            self.active[rows] = [agent in observations for agent in self.layout.agents]
            self._terminated[rows] = False
            self._write(observation, k * seats, observations)
        return observation, self._active_of(worlds)

    def step(self, worlds: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Step ``worlds`` with ``actions`` (their rows'); their rows' observations, rewards, terminated and
        truncated flags, and whether each row's agent is still in its world."""
        agents, seats = self.layout.agents, self.layout.seats
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
            given = {agent: given_actions[k * seats + i] for i, agent in enumerate(agents) if live[i]}
            observations, rewards, terminations, _, _ = world.step(given)  # (truncation: the world ends)
            self._write(observation, k * seats, observations)
            for i, agent in enumerate(agents):
                reward[k * seats + i] = rewards.get(agent, 0.0)
                if terminations.get(agent, False):
                    self._terminated[first + i] = True
            remaining = set(world.agents)  # (read once: PettingZoo's wrappers forward it through __getattr__)
            self.active[first : first + seats] = [agent in remaining for agent in agents]
            if not remaining:  # the world has ended: each of its rows ends, as its agent left it
                ended = self._terminated[first : first + seats]
                terminated[k * seats : (k + 1) * seats] = ended
                truncated[k * seats : (k + 1) * seats] = ~ended
        return observation, reward, terminated, truncated, self._active_of(worlds)

    def close(self) -> None:
        for world in self.worlds:
            world.close()

    def _active_of(self, worlds: np.ndarray) -> np.ndarray:
        seats = self.layout.seats
        return self.active.reshape(-1, seats)[worlds].ravel()

    def _write(self, out: np.ndarray, start: int, observations: dict[str, Any]) -> None:
        """The agents' ``observations`` into their rows of ``out`` from row ``start``, each padded with zeros
        (an agent that has left keeps zeros)."""
        lengths = self.layout.observation_lengths
        for i, agent in enumerate(self.layout.agents):
            if agent in observations:
                if lengths is None:
                    out[start + i] = observations[agent]
                else:
                    out[start + i, : lengths[i]] = np.asarray(observations[agent]).ravel()


class LocalWorlds:
    """A ``WorldGroup`` behind the interface of ``WorkerWorlds``: a call runs at ``start`` and its result waits
    for ``result``."""

    def __init__(self, group: WorldGroup) -> None:
        self.group = group
        self._result: Any = None

    def start(self, method: str, *args: Any) -> None:
        self._result = getattr(self.group, method)(*args)

    def result(self) -> Any:
        result, self._result = self._result, None
        return result

    def close(self) -> None:
        self.group.close()


class WorkerWorlds(WorkerProcess):
    """A ``WorldGroup`` in a worker process of its own: ``start`` sends a call, ``result`` waits for its
    answer (the worker's exception raised here, its death a RuntimeError naming it)."""

    def __init__(self, make_world: Callable[[], Any], count: int, layout: Layout, first_world: int) -> None:
        maker = pickled(
            cloudpickle.dumps, make_world, {"make_world": make_world}, "pettingzoo:: worker processes"
        )
        super().__init__(_serve, (maker, count, layout), name="vecrl-pettingzoo")
        self.first_world, self.count = first_world, count

    def start(self, method: str, *args: Any) -> None:
        try:
            self.connection.send((method, args))
        except OSError:
            raise self._death() from None

    def result(self) -> Any:
        self.wait()
        try:
            message = self.connection.recv()
        except (EOFError, OSError):
            raise self._death() from None
        if isinstance(message, RemoteFailure):
            raise message.exception()
        return message

    def close(self) -> None:
        self.end()

    def _death(self) -> RuntimeError:
        last = self.first_world + self.count - 1
        return RuntimeError(
            f"The pettingzoo:: worker process of worlds {self.first_world}-{last} (pid {self.process.pid}) died"
            f" ({self.how_it_ended()}); close the env and make it again."
        )


def _serve(connection: Connection, maker: bytes, count: int, layout: Layout) -> None:
    """A worker's loop: make its worlds, then answer each call the caller sends until it says to exit."""
    ignore_interrupts()
    group = WorldGroup(cloudpickle.loads(maker), count, layout)
    try:
        for method, args in messages(connection):
            try:
                connection.send(getattr(group, method)(*args))
            except Exception as error:
                connection.send(RemoteFailure.of(error))
    finally:
        group.close()


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
