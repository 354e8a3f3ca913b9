"""Batched actions checked against the single action space before any sub-env steps.

The check is what lets a vector env's ``step()`` refuse a bad action without stepping anyone: the shape of
every array, and for discrete spaces (Discrete, MultiDiscrete, MultiBinary) integer values in range.

``ActionCheck`` is that check for one vector env (its space and number of sub-envs), shared by the
backends that step numpy actions (the gym backend's sync and process vector envs, the envpool backend), so
they refuse the same actions with the same words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Box, Dict, Discrete, MultiDiscrete, Space, Tuple

from vecrl.arrays import convert_to_numpy
from vecrl.spaces import ARRAY_SPACES


def value_range(space: Space) -> tuple[Any, Any]:
    """The lowest and highest valid value of a Discrete, MultiDiscrete or MultiBinary space's entries.

    Examples:
        >>> value_range(Discrete(3, start=-1))
        (-1, 1)
    """
    if isinstance(space, Discrete):
        return int(space.start), int(space.start) + int(space.n) - 1
    if isinstance(space, MultiDiscrete):
        return space.start, space.start + space.nvec - 1
    return 0, 1


def array_problem(
    space: Space, actions: np.ndarray, num_envs: int, rows: list[int] | None = None
) -> str | None:
    """What is wrong with ``actions``, the batched actions of the array space ``space`` (None: nothing); the
    values are checked in ``rows`` only, if given (the sub-envs that use their action).

    Examples:
        >>> array_problem(MultiDiscrete([2, 3]), np.array([[1, 3]]), 1)
        'values outside [[0 0], [1 2]] for sub-envs [0]: [[1, 3]]'
        >>> array_problem(Box(-1.0, 1.0, (1,)), np.array([[0.5], [np.nan]]), 2)
        'non-finite values (NaN or inf) for sub-envs [1]: [[nan]]'
    """
    expected = (num_envs, *(space.shape or ()))
    if actions.shape != expected:
        return f"shape {actions.shape}, where ({num_envs} sub-envs, *{space.shape}) = {expected} was expected"
    if isinstance(space, Box):
        if actions.dtype.kind not in "fc":
            return None
        bad = ~np.isfinite(actions).reshape(num_envs, -1).all(axis=1)
        what = "non-finite values (NaN or inf)"
    else:
        if actions.dtype.kind not in "iub":
            return f"dtype {actions.dtype}, where an integer dtype was expected"
        low, high = value_range(space)
        bad = ((actions < low) | (actions > high)).reshape(num_envs, -1).any(axis=1)
        what = (
            f"values outside [{np.array2string(np.asarray(low), separator=' ')},"
            f" {np.array2string(np.asarray(high), separator=' ')}]"
        )
    if rows is not None:
        bad &= np.isin(np.arange(num_envs), rows)
    if not bad.any():
        return None
    found = np.flatnonzero(bad).tolist()
    return f"{what} for sub-envs {found}: {actions[found].tolist()}"


def checked_tree(
    space: Space, actions: Any, num_envs: int, rows: list[int] | None = None, path: str = "actions"
) -> Any:
    """The batched actions ``actions`` of the Tuple or Dict space ``space`` as numpy arrays nested alike; a
    ValueError that names the part at fault otherwise (values are checked in ``rows`` only, if given).

    Examples:
        >>> import torch
        >>> space = Dict({"move": Box(-1.0, 1.0, (2,)), "grip": Discrete(2)})
        >>> tree = checked_tree(space, {"move": torch.zeros(3, 2), "grip": [0, 1, 1]}, 3)
        >>> tree["grip"]
        array([0, 1, 1])
    """
    if isinstance(space, Dict):
        if not isinstance(actions, Mapping) or set(actions) != set(space.spaces):
            got = sorted(actions) if isinstance(actions, Mapping) else type(actions).__qualname__
            raise ValueError(
                f"{path} must be a dict with the keys {sorted(space.spaces)} of the action space {space}, but"
                f" got {got}."
            )
        return {
            key: checked_tree(subspace, actions[key], num_envs, rows, f"{path}[{key!r}]")
            for key, subspace in space.spaces.items()
        }
    if isinstance(space, Tuple):
        if not isinstance(actions, Sequence) or isinstance(actions, str) or len(actions) != len(space.spaces):
            raise ValueError(
                f"{path} must be a tuple of {len(space.spaces)} batched actions, one per part of the action"
                f" space {space}, but got {type(actions).__qualname__}"
                f"{f' of length {len(actions)}' if isinstance(actions, Sequence) else ''}."
            )
        return tuple(
            checked_tree(subspace, part, num_envs, rows, f"{path}[{index}]")
            for index, (subspace, part) in enumerate(zip(space.spaces, actions, strict=True))
        )
    array = convert_to_numpy(actions)
    problem = array_problem(space, array, num_envs, rows)
    if problem is not None:
        raise ValueError(
            f"{path} (for the space {space}, one row per sub-env) has {problem}. No sub-env was stepped."
        )
    return array


#: From this many Discrete actions on, numpy's min and max check them faster than Python's.
_NUMPY_CHECK_FROM = 64
#: From this many Box action values on, numpy's isfinite checks them faster than Python's math.isfinite.
_NUMPY_FINITE_FROM = 32


def _finite(values: np.ndarray) -> bool:
    """Whether every value is finite: Python's ``math.isfinite`` over a few values (0.2 us for one,
    against numpy's 0.85 us, which cost Pendulum at 1 sub-env 9% of its rate in bench/gym_sync.py),
    numpy's from ``_NUMPY_FINITE_FROM`` on. Any numeric dtype (integers are finite).

    Examples:
        >>> _finite(np.array([[0.5], [np.inf]])), _finite(np.zeros((64, 3)))
        (False, True)
    """
    if values.size < _NUMPY_FINITE_FROM:
        return all(map(math.isfinite, values.ravel().tolist()))
    return bool(np.isfinite(values).all())


class ActionCheck:
    """The batched actions of ``num_envs`` sub-envs of ``space``, checked: call it with a step's actions.

    It returns a numpy array (array spaces) or numpy arrays nested as the Tuple or Dict space; bad actions
    raise before anything steps: a TypeError for a 0-d (scalar) action (as gymnasium raises), a ValueError
    for the wrong shape, a non-integer dtype, values out of range of a discrete space, or NaN or inf in a
    Box action (one ``isfinite`` reduction per step: 0.2 to 1 us). ``owner`` names the env in the
    messages.

    Examples:
        >>> check = ActionCheck(Discrete(2), 3, "SyncVectorEnv")
        >>> check([0, 1, 1])
        array([0, 1, 1])
        >>> check([0, 1, 2])
        Traceback (most recent call last):
        ...
        ValueError: SyncVectorEnv.step() expected actions in [0, 1] for the action space Discrete(2), but the actions of sub-envs [2] are [2]. No sub-env was stepped. Clip them, or take the argmax of the policy's scores (discrete_to_continuous_act=True does that).
    """

    def __init__(self, space: Space, num_envs: int, owner: str) -> None:
        self._space, self._num_envs, self._owner = space, num_envs, owner
        self._tree = not isinstance(space, ARRAY_SPACES)
        self._shape: tuple[int, ...] = (num_envs, *(space.shape or ()))
        self._discrete = isinstance(space, Discrete)
        # MultiDiscrete and MultiBinary actions have their values checked too, and Box actions for NaN and inf.
        self._other_integer = not self._tree and not isinstance(space, (Discrete, Box))
        self._box = isinstance(space, Box)
        if self._discrete:
            self._range = value_range(space)

    def __call__(self, actions: Any, rows: list[int] | None = None) -> Any:
        """The checked ``actions``; with ``rows`` (the sub-envs that use their action: not those of a spent
        budget, nor those a next_step autoreset resets), the values are checked in these rows only, so that
        the check costs in proportion to the sub-envs that step and ignored actions (the NaN a policy makes
        of a spent sub-env's NaN observation) pass."""
        if self._tree:
            return checked_tree(self._space, actions, self._num_envs, rows)
        if type(actions) is not np.ndarray:
            actions = convert_to_numpy(actions)
        if not self.valid(actions, rows):
            raise self._error(actions, rows)
        return actions

    def valid(self, actions: np.ndarray, rows: list[int] | None = None) -> bool:
        """Whether the numpy ``actions`` of an array space pass the check (in ``rows`` only, if given),
        without raising: for a caller that refuses them its own way (the jax backends check every row first,
        then only the rows that use their action).

        Examples:
            >>> ActionCheck(Discrete(2), 2, "env").valid(np.array([0, 2])), ActionCheck(Discrete(2), 2, "env").valid(np.array([0, 2]), [0])
            (False, True)
        """
        return not (
            actions.shape != self._shape
            or (self._discrete and not self._discrete_valid(actions, rows))
            or (self._box and not _finite(actions if rows is None else actions[rows]))
            or (self._other_integer and array_problem(self._space, actions, self._num_envs, rows))
        )

    def _discrete_valid(self, actions: np.ndarray, rows: list[int] | None) -> bool:
        """Whether Discrete ``actions`` (of the right shape) are integers within the space's range (in
        ``rows`` only, if given).

        Python's min and max over ``tolist()`` for small batches: numpy's reductions cost ~14 us per step at
        1 env inside the step loop (bench/gym_sync.py: CartPole at 1 env fell from 0.44 to 0.34 of the floor
        with them); numpy's from 64 values on, where ``tolist()`` costs more (9 us against 2 at 256 values,
        36 against 2.5 at 1024: bench/envpool_step.py steps 256 and 1024 envs in a few hundred us).
        """
        if actions.dtype.kind not in "iu":
            return False
        values = actions if rows is None else actions[rows]
        low, high = self._range
        if len(values) >= _NUMPY_CHECK_FROM:
            return bool(low <= values.min() and values.max() <= high)
        listed = values.tolist()
        return not listed or (low <= min(listed) and max(listed) <= high)

    def _error(self, actions: np.ndarray, rows: list[int] | None) -> Exception:
        """Say what ``step()`` expected of ``actions`` (in ``rows``), what it received and how to fix it."""
        expected, shape, space, owner = self._shape, actions.shape, self._space, self._owner
        if shape == expected and self._discrete and actions.dtype.kind in "iu":
            low, high = self._range
            bad = (actions < low) | (actions > high)
            if rows is not None:
                bad &= np.isin(np.arange(self._num_envs), rows)
            rows = np.flatnonzero(bad).tolist()
            return ValueError(
                f"{owner}.step() expected actions in [{low}, {high}] for the action space {space}, but the"
                f" actions of sub-envs {rows} are {actions[rows].tolist()}. No sub-env was stepped. Clip them, or"
                " take the argmax of the policy's scores (discrete_to_continuous_act=True does that)."
            )
        if shape == expected and self._discrete:
            return ValueError(
                f"{owner}.step() expected integer actions for the discrete action space {space}, but"
                f" received actions of dtype {actions.dtype}. Cast them to an integer dtype, or make the env with"
                " discrete_to_continuous_act=True to pass scores whose argmax is taken."
            )
        if shape == expected and self._box:
            return ValueError(
                f"{owner}.step() received actions with {array_problem(space, actions, self._num_envs, rows)},"
                f" for the action space {space}. No sub-env was stepped. NaN or inf actions make the"
                " sub-envs' states NaN: look for them where the actions are made (torch.isfinite(actions)),"
                " e.g. a policy whose parameters are not finite."
            )
        if shape == expected:
            return ValueError(
                f"{owner}.step() received actions with {array_problem(space, actions, self._num_envs, rows)},"
                f" for the action space {space}. No sub-env was stepped."
            )
        if len(shape) == 0:
            problem = "a 0-d (scalar) action"
        elif shape[0] != self._num_envs:
            problem = f"actions of shape {shape}, whose leading (batch) dimension is {shape[0]}"
        else:
            problem = f"actions of shape {shape}, i.e. one action of shape {shape[1:]} per sub-env"
        message = (
            f"{owner}.step() expected actions of shape {expected}: num_envs={self._num_envs} rows, one"
            f" per sub-env, each of shape {expected[1:]} for the single action space {space}. It received"
            f" {problem}. Give one action per sub-env, stacked along the first dimension."
        )
        return TypeError(message) if len(shape) == 0 else ValueError(message)
