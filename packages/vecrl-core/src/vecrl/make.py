"""make_vector_env: ``"prefix::name"`` to a TorchWrapper, through the backend registry."""

from __future__ import annotations

import difflib
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from vecrl.arrays import ARRAY_TYPES, ArrayType
from vecrl.backend import COMMON_KEYWORDS, OPTIONAL_KEYWORDS, Backend
from vecrl.env_names import split_env_name
from vecrl.episodes import budget_under_wrappers_error
from vecrl.errors import UnknownKeywordError
from vecrl.numpy_view import JaxView, NumpyView, VectorWrapperMaker, with_vector_wrappers
from vecrl.registry import WELL_KNOWN_BACKENDS, backend_prefixes, get_backend
from vecrl.torch_wrapper import TorchWrapper

if TYPE_CHECKING:
    import torch

_KWARGS_SUFFIX = "_kwargs"
#: vecrl's own keywords: a near miss of one (``num_env``) is refused before it reaches the env's constructor,
#: where any other keyword goes.
SHARED_KEYWORDS = (*COMMON_KEYWORDS, *OPTIONAL_KEYWORDS, "vector_wrappers", "array_type")
#: make_vector_env's arguments that it applies itself, or passes to every backend: not for ``<prefix>_kwargs``.
_OWN_ARGUMENTS = (*COMMON_KEYWORDS, "vector_wrappers", "array_type")
#: The view that makes a torch-speaking env's results numpy or jax arrays.
_VIEWS: dict[str, type[NumpyView]] = {"numpy": NumpyView, "jax": JaxView}


@overload
def make_vector_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    dtype: torch.dtype | None = None,
    gym_kwargs: Mapping[str, Any] | None = None,
    brax_kwargs: Mapping[str, Any] | None = None,
    vector_wrappers: Sequence[VectorWrapperMaker] = (),
    array_type: Literal["torch"] = "torch",
    **kwargs: Any,
) -> TorchWrapper: ...
@overload
def make_vector_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    dtype: torch.dtype | None = None,
    gym_kwargs: Mapping[str, Any] | None = None,
    brax_kwargs: Mapping[str, Any] | None = None,
    vector_wrappers: Sequence[VectorWrapperMaker] = (),
    array_type: Literal["numpy", "jax"],
    **kwargs: Any,
) -> NumpyView: ...
def make_vector_env(
    env_name: str,
    *,
    force_classic_api: bool = False,
    num_envs: int | None = None,
    discrete_to_continuous_act: bool = False,
    clip_actions: bool = False,
    dtype: torch.dtype | None = None,
    gym_kwargs: Mapping[str, Any] | None = None,
    brax_kwargs: Mapping[str, Any] | None = None,
    vector_wrappers: Sequence[VectorWrapperMaker] = (),
    array_type: ArrayType = "torch",
    **kwargs: Any,
) -> TorchWrapper | NumpyView:
    """Make ``num_envs`` copies of an environment, batched and speaking torch (or numpy, or jax).

    ``env_name`` is ``"prefix::name"``: the prefix picks the backend (``gym`` when there is none). Plain
    ``**kwargs`` reach whichever backend is chosen; ``gym_kwargs``, ``brax_kwargs`` and, for any
    prefix, ``<prefix>_kwargs`` reach only the backend of that prefix (the gym backend takes
    ``wrappers=``, applied to each sub-env as ``gymnasium.make_vec`` does). One of vecrl's own keywords
    that the backend does not take (its ``Backend.keywords``: ``device=`` on brax) is an
    ``UnknownKeywordError`` naming the backend, raised before anything is made.

    The result is a ``gymnasium.vector.VectorEnv`` (for ``num_envs`` given), so gymnasium's vector
    wrappers wrap it. Those that compute on the results with numpy (``RecordEpisodeStatistics``,
    ``NormalizeObservation``, ``NormalizeReward``) go in ``vector_wrappers``: each is applied, in order, to
    a numpy view of the env, and the results become torch tensors (on the CPU) after the last of them.
    They cannot be combined with ``num_episodes``, whose spent sub-envs' NaN rows they would take in.
    ``dtype=torch.float32`` casts floating observations and rewards to float32 once (gym's MuJoCo
    observations and every gym reward are float64), and says so in the observation spaces.
    ``array_type="numpy"`` or ``"jax"`` makes the results numpy or jax arrays instead of torch tensors, on
    every backend alike (a ``NumpyView`` or ``JaxView`` of the torch env: on the CPU no value is copied).
    The env keeps these arguments as its ``recipe`` (a ``VectorEnvRecipe``), to be made again elsewhere.

    Args:
        env_name: ``"prefix::name"`` (``"gym::Hopper-v5"``, ``"brax::ant"``); a name without a prefix is gym's.
        force_classic_api: ``step`` returns ``(obs, reward, done, info)`` as gym before 0.26 did.
        num_envs: sub-envs, batched; None: one env, not batched (a ``gymnasium.Env``).
        discrete_to_continuous_act: a ``Discrete`` action space becomes a ``Box`` of one score per action
            (the argmax acts), so that a continuous policy acts on it.
        clip_actions: actions are clipped to the action space's bounds before the env sees them.
        dtype: floating observations and rewards cast to it once (``torch.float32``); None: as the env gives.
        gym_kwargs: keywords for the gym backend alone (and ``brax_kwargs``, ``<prefix>_kwargs``: for theirs).
        brax_kwargs: keywords for the brax backend alone.
        vector_wrappers: gymnasium's numpy vector wrappers (or callables of an env), applied in order to a
            numpy view of the env; not with ``num_episodes``.
        array_type: ``"torch"`` (the default), ``"numpy"`` or ``"jax"``: the arrays the env hands back.
        **kwargs: the backend's own keywords (``gymnasium.make``'s for gym: ``max_episode_steps``,
            ``render_mode``, an env's constructor arguments), and vecrl's keywords, each meaning the same
            on every backend that takes it (in brackets: the shipped backends that do; ``vecrl backends``
            lists the installed ones, and a backend refuses the others with an ``UnknownKeywordError``):

            - ``autoreset_mode`` (brax, envpool, gym, gymnax, pettingzoo, playground): ``"same_step"`` (the default),
              ``"next_step"`` or ``"disabled"``, gymnasium's ``AutoresetMode``.
            - ``batch_size`` (envpool, gym, pettingzoo): async stepping in batches of that many sub-envs
              (``async_reset``, ``send``, ``recv``), a divisor of ``num_envs``.
            - ``device`` (envpool, gym): the torch device of the tensors handed back.
            - ``empty_info`` (gym, pettingzoo): the sub-envs' infos left out (faster where nothing reads them).
            - ``episode_length`` (brax, gymnax, playground): the time limit of an episode, in steps.
            - ``num_episodes`` (brax, envpool, gym, gymnax, pettingzoo, playground): episodes per sub-env, then NaN
              rows until a reset (``vecrl.episodes``).
            - ``num_workers`` (gym, pettingzoo): sub-envs (worlds) stepped in that many worker processes
              (``vecrl_gym.ProcessVectorEnv``, ``vecrl_pettingzoo.world_group``); gym's ``"auto"`` picks by the step time.
            - ``observation_mode`` (gym): ``"same"`` or ``"different"``, as gymnasium's vector envs.
            - ``render_mode`` (brax, envpool, gym, gymnax, playground): ``"rgb_array"`` for
              ``render``/``render_snapshot``.
            - ``seed_rule`` (brax, envpool, gym, gymnax, pettingzoo, playground): how ``reset(seed=S)`` seeds the
              sub-envs (``vecrl.seeding``).
            - ``wrappers`` (gym): gymnasium wrappers applied to each sub-env, as ``gymnasium.make_vec``.

    Returns:
        A ``TorchWrapper`` (a ``gymnasium.vector.VectorEnv`` in torch tensors), or its ``NumpyView`` or
            ``JaxView`` for ``array_type="numpy"`` or ``"jax"``.

    Raises:
        UnknownKeywordError: a keyword of vecrl's that the backend does not take, or a near miss of one.
        TypeError: ``<prefix>_kwargs`` not a dict, or a backend's make returned no env.
        ValueError: a prefix no installed backend serves, a keyword given twice, a bad ``array_type``,
            ``vector_wrappers`` with ``num_episodes``, or a value the backend refuses.

    Examples:
        >>> env = make_vector_env("gym::CartPole-v1", num_envs=4)  # doctest: +SKIP
        >>> obs, info = env.reset(seed=0)  # doctest: +SKIP
        >>> obs.shape  # doctest: +SKIP
        torch.Size([4, 4])
    """
    recipe = VectorEnvRecipe(
        env_name,
        {
            "force_classic_api": force_classic_api,
            "num_envs": num_envs,
            "discrete_to_continuous_act": discrete_to_continuous_act,
            "clip_actions": clip_actions,
            "dtype": dtype,
            "gym_kwargs": gym_kwargs,
            "brax_kwargs": brax_kwargs,
            "vector_wrappers": vector_wrappers,
            "array_type": array_type,
            **kwargs,
        },
    )
    prefix, name = split_env_name(env_name)
    _check_array_type(array_type, force_classic_api=force_classic_api, num_envs=num_envs)
    _refuse_near_misses(env_name, kwargs)
    routed = {"gym": gym_kwargs, "brax": brax_kwargs}
    if any(key.endswith(_KWARGS_SUFFIX) for key in kwargs):
        prefixes = set(WELL_KNOWN_BACKENDS) | set(backend_prefixes())
        for key in [
            k for k in kwargs if k.endswith(_KWARGS_SUFFIX) and k[: -len(_KWARGS_SUFFIX)] in prefixes
        ]:
            routed[key[: -len(_KWARGS_SUFFIX)]] = kwargs.pop(key)
    for key, value in routed.items():
        if value is not None and not isinstance(value, Mapping):
            raise TypeError(
                f"{key}_kwargs must be a dict of keyword arguments, got {type(value).__qualname__}."
            )
    own = dict(routed.get(prefix) or {})
    misplaced = [key for key in _OWN_ARGUMENTS if key in own]
    if misplaced:
        raise ValueError(
            f"{prefix}_kwargs holds {', '.join(misplaced)}: make_vector_env's own argument(s), the same for every"
            f" backend; give them directly (make_vector_env({env_name!r}, {misplaced[0]}=...))."
        )
    clash = sorted(set(own) & set(kwargs))
    if clash:
        raise ValueError(
            f"The keyword argument(s) {', '.join(clash)} were given both directly and in {prefix}_kwargs;"
            " give each only once."
        )
    budget = own.get("num_episodes", kwargs.get("num_episodes"))
    if vector_wrappers and budget is not None:
        raise budget_under_wrappers_error(
            budget,
            "vector_wrappers",
            "Drop num_episodes (wrappers count episodes themselves), or drop vector_wrappers.",
        )
    backend = get_backend(prefix)
    backend.check_keywords(f"make_vector_env({env_name!r})", {**kwargs, **own})
    made = backend.make_function()(name, num_envs=num_envs, **kwargs, **own)
    options = {
        "force_classic_api": force_classic_api,
        "discrete_to_continuous_act": discrete_to_continuous_act,
        "clip_actions": clip_actions,
        "dtype": dtype,
    }
    try:
        env = _speaking_torch(backend, made, vector_wrappers, options)
    except BaseException:
        if hasattr(made, "close"):
            made.close()
        raise
    env.recipe = recipe
    if array_type == "torch":
        return env
    view = _VIEWS[array_type](env)
    view.recipe = recipe
    return view


def _speaking_torch(
    backend: Backend, made: Any, vector_wrappers: Sequence[VectorWrapperMaker], options: Mapping[str, Any]
) -> TorchWrapper:
    """What ``backend.make`` returned, speaking torch: wrapped once in a ``TorchWrapper`` with ``options``
    (``force_classic_api``, ``discrete_to_continuous_act``, ``clip_actions``), beneath it gymnasium's
    ``vector_wrappers`` on a numpy view. A ``TorchWrapper`` (what a make written to the contract before
    returned, having applied those options itself) is kept, and wrapped once more only for an option set
    or for vector wrappers. Anything but an env is a TypeError naming the backend.
    """
    if not isinstance(made, TorchWrapper) and not all(
        hasattr(made, attribute) for attribute in ("reset", "step", "observation_space", "action_space")
    ):
        raise TypeError(
            f"The {backend.prefix} backend's make returned {type(made).__qualname__}, not an env. A backend's make"
            " returns a gymnasium.vector.VectorEnv (a gymnasium.Env for num_envs=None), in numpy, torch or jax"
            " arrays; make_vector_env makes it speak torch."
        )
    if vector_wrappers:
        inner = made if isinstance(made, TorchWrapper) else TorchWrapper(made)
        return with_vector_wrappers(inner, vector_wrappers, **options)
    if isinstance(made, TorchWrapper) and not any(options.values()):
        return made
    return TorchWrapper(made, **options)


def _check_array_type(array_type: Any, *, force_classic_api: bool, num_envs: int | None) -> None:
    """A ValueError for an ``array_type`` that is not one, or one that cannot be combined with the others."""
    if array_type not in ARRAY_TYPES:
        raise ValueError(
            f"array_type must be 'torch', 'numpy' or 'jax' (what the results are), got {array_type!r}."
        )
    if array_type == "torch":
        return
    if force_classic_api:
        raise ValueError(
            f"array_type={array_type!r} cannot be combined with force_classic_api=True, which gives EvoTorch's"
            " classic API in torch; drop one of them."
        )
    if num_envs is None:
        raise ValueError(
            f"array_type={array_type!r} makes a vector env's results {array_type} arrays, and needs num_envs: pass"
            " num_envs=1 for one env."
        )
    if array_type == "jax" and importlib.util.find_spec("jax") is None:
        raise ImportError(
            "array_type='jax' hands back jax arrays, but jax is not installed: pip install jax (or install"
            " vecrl-brax, which brings it)."
        )


def _refuse_near_misses(env_name: str, kwargs: Mapping[str, Any]) -> None:
    """An UnknownKeywordError for a keyword that is not one of vecrl's shared keywords but nearly is."""
    for key, value in kwargs.items():
        if key in SHARED_KEYWORDS or key.endswith(_KWARGS_SUFFIX):
            continue
        close = difflib.get_close_matches(key, SHARED_KEYWORDS, n=1, cutoff=0.85)
        if close:
            prefix = split_env_name(env_name)[0]
            raise UnknownKeywordError(
                f"make_vector_env({env_name!r}) got {key}={value!r}, which is no option of vecrl's. Did you"
                f" mean {close[0]!r}? (If the env itself takes {key!r}, pass it as {prefix}_kwargs={{{key!r}:"
                " ...}.)"
            )


@dataclass(frozen=True)
class VectorEnvRecipe:
    """How an env was made: ``make_vector_env``'s arguments, kept as the env's ``recipe`` so that another
    process can make the same env (``vecrl_evaluate.evaluate(..., num_workers=K)`` does). It pickles with
    cloudpickle (lambdas among the arguments included).

    Examples:
        >>> recipe = VectorEnvRecipe("gym::CartPole-v1", {"num_envs": 8})
        >>> recipe.with_changes(num_envs=2).kwargs
        {'num_envs': 2}
    """

    env_name: str
    kwargs: dict[str, Any]

    def with_changes(self, **changes: Any) -> VectorEnvRecipe:
        """The same recipe with some arguments changed."""
        return VectorEnvRecipe(self.env_name, {**self.kwargs, **changes})

    def make(self) -> TorchWrapper:
        """Make the env: ``make_vector_env(env_name, **kwargs)``."""
        return make_vector_env(self.env_name, **self.kwargs)
