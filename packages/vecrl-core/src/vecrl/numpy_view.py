"""NumpyView and JaxView: a torch-speaking vector env seen in numpy or jax.

``make_vector_env(..., array_type="numpy")`` (or ``"jax"``) hands one back, on every backend. gymnasium's
``RecordEpisodeStatistics`` and ``NormalizeObservation`` compute on a step's results with numpy
(``returns += rewards``, ``np.mean(observations, axis=0)``), which torch tensors do not support:
``make_vector_env(..., vector_wrappers=[...])`` puts them between a ``NumpyView`` of the backend's env and
an outer ``TorchWrapper``. On the CPU the conversions share memory (numpy) or go through DLPack (jax), so
the values are not copied.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium
import torch
from packaging.version import Version

from vecrl.arrays import ArrayType, tree_from_torch
from vecrl.autoreset import declared_autoreset_mode
from vecrl.checks import checked_callables
from vecrl.compat import GYMNASIUM_VERSION, VECTOR_WRAPPER_BASE
from vecrl.episodes import budget_under_wrappers_error
from vecrl.torch_wrapper import SubEnvAccess, TorchWrapper, layers

VectorWrapperMaker = Callable[[Any], Any]


class NumpyView(SubEnvAccess, VECTOR_WRAPPER_BASE):
    """The torch-speaking vector env ``env`` (a ``TorchWrapper``), speaking numpy: observations, rewards,
    flags and the tensors in ``info`` come back as numpy arrays (on the host), actions may be numpy.

    Examples:
        >>> import vecrl
        >>> env = NumpyView(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))
        >>> obs, info = env.reset(seed=0)
        >>> type(obs).__name__, type(env.step(env.action_space.sample())[1]).__name__
        ('ndarray', 'ndarray')
    """

    #: What its results are (``make_vector_env``'s ``array_type``).
    result_type: ClassVar[ArrayType] = "numpy"

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset the env; the observations and info as ``result_type`` arrays."""
        observation, info = self.env.reset(seed=seed, options=options)
        return tree_from_torch(observation, self.result_type), _info_as(info, self.result_type)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step the env; ``(obs, reward, terminated, truncated, info)`` as ``result_type`` arrays."""
        observation, reward, terminated, truncated, info = self.env.step(actions)
        return (
            tree_from_torch(observation, self.result_type),
            tree_from_torch(reward, self.result_type),
            tree_from_torch(terminated, self.result_type),
            tree_from_torch(truncated, self.result_type),
            _info_as(info, self.result_type),
        )

    @property
    def autoreset_mode(self) -> Any:
        """The wrapped env's autoreset mode."""
        return self.env.autoreset_mode


class JaxView(NumpyView):
    """The torch-speaking vector env ``env``, speaking jax: the results come back as jax arrays (through
    DLPack, on the device of the tensors), actions may be jax arrays.

    Examples:
        >>> import vecrl
        >>> env = JaxView(vecrl.make_vector_env("gym::CartPole-v1", num_envs=2))  # doctest: +SKIP
        >>> type(env.reset(seed=0)[0]).__name__  # doctest: +SKIP
        'ArrayImpl'
    """

    result_type: ClassVar[ArrayType] = "jax"


def with_vector_wrappers(
    env: TorchWrapper, wrappers: Sequence[VectorWrapperMaker], **options: Any
) -> TorchWrapper:
    """``env`` with gymnasium's numpy vector ``wrappers`` applied in order between a ``NumpyView`` and an
    outer ``TorchWrapper`` (made with ``options``); the result speaks torch, on the CPU.

    Examples:
        >>> import vecrl
        >>> from gymnasium.wrappers.vector import RecordEpisodeStatistics
        >>> env = with_vector_wrappers(vecrl.make_vector_env("CartPole-v1", num_envs=2), [RecordEpisodeStatistics])
        >>> type(env.reset(seed=0)[0]).__name__, type(env.env).__name__
        ('Tensor', 'RecordEpisodeStatistics')
    """
    if not isinstance(env, gymnasium.vector.VectorEnv):
        raise ValueError(
            f"vector_wrappers wrap a vector env, but the env made is {env!r}, a single env. Pass num_envs=<number"
            " of copies>, or wrap the single env with gymnasium's wrappers yourself."
        )
    budget = getattr(env.unwrapped, "num_episodes", None)
    if budget is not None:
        raise budget_under_wrappers_error(
            budget,
            "vector_wrappers",
            "Make the env without num_episodes (wrappers count episodes themselves).",
        )
    hint = (
        "Give gymnasium vector wrapper classes or functions taking a vector env, e.g. [RecordEpisodeStatistics,"
        " functools.partial(NormalizeObservation, epsilon=1e-8)]."
    )
    wrapped: Any = NumpyView(env)
    for wrap in checked_callables(wrappers, "vector_wrappers", hint):
        wrapped = wrap(wrapped)
        _refuse_miscounting(wrapped, env)
    return TorchWrapper(wrapped, **options)


def _refuse_miscounting(wrapped: Any, env: TorchWrapper) -> None:
    """A ValueError where ``wrapped`` is gymnasium 1.0-1.3's ``RecordEpisodeStatistics`` over a same_step env:
    it takes the step after an episode's end for a reset step, so it drops that step's reward and length
    from every episode after the first (fixed in gymnasium 1.4)."""
    if not (Version("1.0.0a1") <= GYMNASIUM_VERSION < Version("1.4.0")):
        return
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    if isinstance(wrapped, RecordEpisodeStatistics) and declared_autoreset_mode(env.unwrapped) == "same_step":
        raise ValueError(
            f"gymnasium {gymnasium.__version__}'s RecordEpisodeStatistics counts episodes as next_step autoreset"
            " gives them, and this env resets in the same step: every episode after a sub-env's first would be"
            " recorded one step short, without its first reward. Make the env with autoreset_mode='next_step', or"
            " install gymnasium>=1.4 (whose wrapper reads the mode)."
        )


def _info_as(info: Mapping[str, Any], array_type: ArrayType) -> dict[str, Any]:
    """``info`` with its tensors (also in nested dicts) as ``array_type`` arrays."""
    return {
        key: _info_as(value, array_type)
        if isinstance(value, Mapping)
        else tree_from_torch(value, array_type)
        if isinstance(value, torch.Tensor)
        else value
        for key, value in info.items()
    }


#: gymnasium's vector wrappers that keep numpy state across steps (``returns += rewards``): they fail on torch
#: results. (Those that map a step's arrays through a function of the user's may well take tensors.)
_NUMPY_WRAPPERS = frozenset({"RecordEpisodeStatistics", "NormalizeObservation", "NormalizeReward"})


def check_numpy_wrappers(env: Any, who: str) -> None:
    """A TypeError, before anything steps, where ``env`` has gymnasium's vector wrappers (which compute with
    numpy) straight over a torch-speaking vecrl env: they would fail inside gymnasium at the first step with
    numpy's "Concatenation operation is not implemented". ``who`` names the caller.

    Examples:
        >>> import vecrl
        >>> from gymnasium.wrappers.vector import RecordEpisodeStatistics
        >>> check_numpy_wrappers(RecordEpisodeStatistics(vecrl.make_vector_env("CartPole-v1", num_envs=2)), "f")
        Traceback (most recent call last):
        ...
        TypeError: f got gymnasium's RecordEpisodeStatistics around a vecrl env that speaks torch; gymnasium's vector wrappers compute with numpy. Make the env with make_vector_env(..., vector_wrappers=[RecordEpisodeStatistics]) (torch outside, numpy inside), or with array_type="numpy".
    """
    outer = None
    for layer in layers(env):
        if isinstance(layer, (TorchWrapper, NumpyView)):
            break
        if type(layer).__name__ in _NUMPY_WRAPPERS and type(layer).__module__.startswith(
            "gymnasium.wrappers"
        ):
            outer = layer
    if outer is not None and isinstance(layer, TorchWrapper):
        name = type(outer).__name__
        raise TypeError(
            f"{who} got gymnasium's {name} around a vecrl env that speaks torch; gymnasium's vector wrappers"
            f" compute with numpy. Make the env with make_vector_env(..., vector_wrappers=[{name}]) (torch"
            ' outside, numpy inside), or with array_type="numpy".'
        )
