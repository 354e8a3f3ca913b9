"""Policy: a torch module driven by flat parameter vectors, one network or a batch of them."""

from __future__ import annotations

import copy as copying
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch
from torch import nn

import vecrl
from vecrl.checks import checked_flag
from vecrl.nests import map_nest
from vecrl_policy.fastpath import FastNet, Forward
from vecrl_policy.flat import FunctionalNet, ParameterLayout
from vecrl_policy.layer_specs import LayerSpec, describe
from vecrl_policy.normalization import Normalize, NormalizedNet, ObsNorm
from vecrl_policy.parser import MAX_PARAMETERS, str_to_net

Indices = Sequence[int] | Sequence[bool] | torch.Tensor


class Policy:
    """Run a network whose parameters come from a flat vector (1-D) or a batch of them (2-D).

    ``net`` is an ``nn.Module``, a callable building one (called with ``**kwargs``) or a network string
    for ``vecrl_policy.str_to_net`` (``**kwargs`` are its constants). The flat vector follows the
    order of ``net.named_parameters()``. With 2-D parameters, row ``i`` drives the network that sees
    observation ``i``. A recurrent network (``forward(x, h=None) -> (y, h)``) keeps its state between
    calls until ``reset``.

    Known layers (``Linear``, elementwise activations, ``RNN``/``LSTM``/``GRU``), alone or in a
    ``Chain``/``nn.Sequential``, run on a batched fast path (one ``baddbmm`` per weight matrix, weights
    packed once per ``set_parameters``); other layers of a chain run through
    ``torch.func.functional_call`` + ``vmap`` on their own, and so does any other network as a whole.

    The network runs in eval mode (a policy is scored, not trained by backprop: dropout is off).
    A policy pickles (``pickle``, ``torch.save``; load the latter with ``torch.load(path,
    weights_only=False)``) with its parameters, hidden state, path and ``obs_norm``.

    Args:
        net: an ``nn.Module``, a callable building one, or a network string (``"Linear(4, 16) >> Tanh()
            >> Linear(16, 2)"``).
        max_parameters: the most parameters a network string may build (``vecrl_policy.str_to_net``'s
            limit, checked before anything is allocated).
        **kwargs: the network string's constants (``obs_length=4``), or the callable's arguments.

    Raises:
        ValueError: an ``nn.Module`` given with ``kwargs``, or a network string ``str_to_net`` refuses
            (an unknown layer, more than ``max_parameters``), naming what to change.
        TypeError: ``net`` none of the three, or a callable that returns no ``nn.Module``.

    Examples:
        >>> policy = Policy("Linear(3, 8) >> Tanh() >> LSTM(8, 2)")
        >>> policy.set_parameters(torch.randn(10, policy.parameter_length))  # 10 networks
        >>> actions = policy(torch.randn(10, 3))
        >>> policy.reset([0, 4])  # new episodes for rows 0 and 4
        >>> actions.shape
        torch.Size([10, 2])
    """

    def __init__(
        self,
        net: str | nn.Module | Callable[..., nn.Module],
        *,
        max_parameters: int = MAX_PARAMETERS,
        **kwargs: Any,
    ) -> None:
        if isinstance(net, str):
            module = str_to_net(net, max_parameters=max_parameters, **kwargs)
        elif isinstance(net, nn.Module):
            if kwargs:
                raise ValueError(
                    f"Policy got an nn.Module instance and also keyword arguments {sorted(kwargs)}; they are"
                    " only used to build a network from a string or a callable. Drop them, or pass the class."
                )
            module = net
        elif callable(net):
            module = net(**kwargs)
            if not isinstance(module, nn.Module):
                raise TypeError(
                    f"Policy called {net!r} to build the network and got a {type(module).__name__};"
                    " the callable must return an nn.Module."
                )
        else:
            raise TypeError(
                f"Policy expects an nn.Module, a callable returning one, or a network string;"
                f" got {type(net).__name__}."
            )
        self._compile(module)
        self._parameters: torch.Tensor | None = None
        self._bound: Forward | None = None
        self._state: Any = None
        self.obs_norm = None

    @classmethod
    def for_env(cls, net: str | nn.Module | Callable[..., nn.Module], env: Any, **kwargs: Any) -> Policy:
        """A policy for ``env``'s observations and actions: a network string or callable gets the env's
        lengths as the constants ``obs_length`` and ``act_length`` (also spelled ``obs`` and ``act``):
        the flat observation's length, and the action's (one score per action of a Discrete space); more
        constants come from ``kwargs``. An ``nn.Module`` instance is taken as it is.

        Examples:
            >>> from types import SimpleNamespace
            >>> from gymnasium.spaces import Box, Discrete
            >>> env = SimpleNamespace(single_observation_space=Box(-1.0, 1.0, (4,)), single_action_space=Discrete(2))
            >>> Policy.for_env("Linear(obs_length, act_length)", env).parameter_length  # a CartPole's sizes
            10
        """
        if isinstance(net, nn.Module):
            return cls(net, **kwargs)
        from gymnasium.spaces import Discrete

        from vecrl_policy.observations import flat_observation_length

        space = env.single_action_space
        act_length = int(space.n) if isinstance(space, Discrete) else math.prod(space.shape or ())
        obs_length = flat_observation_length(env.single_observation_space)
        lengths = {"obs_length": obs_length, "act_length": act_length, "obs": obs_length, "act": act_length}
        return cls(net, **{**lengths, **kwargs})

    def _compile(self, module: nn.Module) -> None:
        """Lay out the module's parameters and build its forward paths (what pickling leaves out). The
        module runs in eval mode: a policy is scored, not trained by backprop (dropout off, batch norm on
        its running statistics), so the same parameters and seed give the same actions."""
        module.eval()
        self._module = module
        self._layout = ParameterLayout(module)
        self._general = FunctionalNet(module, self._layout.slots)
        self._fast_net = FastNet.compile(module, self._layout)
        self._use_fast = self._fast_net is not None
        self._layer_specs = describe(module, self._layout)
        self._input_width = _input_width(module)

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle`` and ``torch.save`` keep: the module, the parameters, the hidden state and the
        choice of path; the compiled forward functions are rebuilt on load.

        Examples:
            >>> import pickle
            >>> policy = Policy("Linear(2, 1)")
            >>> policy.set_parameters(torch.ones(3, policy.parameter_length))
            >>> pickle.loads(pickle.dumps(policy))(torch.ones(3, 2)).tolist()
            [[3.0], [3.0], [3.0]]
        """
        return {
            "module": self._module,
            "parameters": self._parameters,
            "state": self._state,
            "fast_path": self._use_fast,
            "obs_norm": self._obs_norm,
        }

    def __setstate__(self, saved: dict[str, Any]) -> None:
        self._compile(saved["module"])
        self._parameters, self._state = None, None
        if saved["parameters"] is not None:
            self.set_parameters(saved["parameters"], reset=True)
        self._state = saved["state"]
        self.fast_path = saved["fast_path"]
        self.obs_norm = saved.get("obs_norm")

    def __repr__(self) -> str:
        shape = None if self._parameters is None else tuple(self._parameters.shape)
        path = "fast" if self._use_fast else "vmap"
        return f"Policy({self._module!r}, parameters={shape}, path={path!r})"

    # -- parameters -------------------------------------------------------------------------------

    def set_parameters(
        self, parameters: torch.Tensor, indices: Indices | None = None, *, reset: bool = True
    ) -> None:
        """Use ``parameters``: 1-D for one network, 2-D for a batch (one row per network).

        With ``indices`` (row indices, an index tensor or a boolean mask), only those rows of the
        current 2-D parameters are replaced by the rows of ``parameters`` (the tensor given before
        is not modified). ``reset=True`` clears the hidden state of the changed rows (of all rows
        without ``indices``). Gradients flow into the tensor if it requires them. The values are read
        here (the fast path packs a batch once, per layer): after changing the tensor in place, call
        set_parameters again.

        Examples:
            >>> policy = Policy(nn.Linear(3, 2))
            >>> policy.set_parameters(torch.zeros(4, 8))
            >>> policy.set_parameters(torch.ones(2, 8), [1, 3])
            >>> policy.parameters[:, 0]
            tensor([0., 1., 0., 1.])
        """
        _check_is_float_tensor(parameters)
        if indices is None:
            self._check_whole_batch(parameters, reset)
            new, rows = parameters, None
        else:
            new, rows = self._with_rows_replaced(parameters, indices)
        self._bound = self._bind(new) if self._use_fast else None
        self._parameters = new
        if reset:
            self._state = None if rows is None else self._cleared(self._state, rows)

    def _check_whole_batch(self, parameters: torch.Tensor, reset: bool) -> None:
        length = self._layout.length
        if parameters.ndim not in (1, 2) or parameters.shape[-1] != length:
            raise ValueError(
                f"Expected parameters of shape ({length},) for one network or (num_networks, {length})"
                f" for a batch; got shape {tuple(parameters.shape)}."
            )
        old = self._parameters
        if (
            not reset
            and self._state is not None
            and old is not None
            and old.shape[:-1] != parameters.shape[:-1]
        ):
            raise ValueError(
                f"set_parameters(..., reset=False) must keep the batch shape of the hidden state:"
                f" it was {tuple(old.shape)}, got {tuple(parameters.shape)}. Use reset=True."
            )

    def _with_rows_replaced(
        self, rows_values: torch.Tensor, indices: Indices
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The current batch with the selected rows replaced (a new tensor), and those row numbers."""
        current = self._parameters
        if current is None or current.ndim != 2:
            raise ValueError(
                "set_parameters(parameters, indices) replaces rows of a batch, so it needs 2-D"
                " parameters set before; call set_parameters(batch) first."
            )
        rows = _row_indices(indices, current.shape[0])
        if rows.unique().numel() != rows.numel():
            raise ValueError(f"indices select some row more than once: {rows.tolist()}; name each row once.")
        expected = (rows.numel(), self._layout.length)
        if rows_values.shape != expected:
            raise ValueError(
                f"Expected {expected[0]} replacement rows, shape {expected}, for the rows selected by"
                f" indices; got shape {tuple(rows_values.shape)}."
            )
        return current.index_put((rows.to(current.device),), rows_values.to(current)), rows

    def _bind(self, parameters: torch.Tensor) -> Forward:
        assert self._fast_net is not None
        with torch.enable_grad():  # weights packed from parameters that require grad must track them
            return self._fast_net.bind(parameters)

    @property
    def parameters(self) -> torch.Tensor | None:
        """The current parameters (1-D or 2-D), or None before ``set_parameters``."""
        return self._parameters

    @property
    def parameter_length(self) -> int:
        """How many numbers one network needs (the length of a parameter row)."""
        return self._layout.length

    @property
    def wrapped_module(self) -> nn.Module:
        """The module the policy runs (its own parameters are not used)."""
        return self._module

    @property
    def layer_specs(self) -> tuple[LayerSpec, ...] | None:
        """The network's layers as plain data, for a fused jax rollout (``evaluate`` on a jax env); None
        when a layer has no jax twin (see ``vecrl_policy.layer_specs``).

        Examples:
            >>> [spec.kind for spec in Policy("Linear(3, 4) >> ReLU()").layer_specs]
            ['Linear', 'ReLU']
        """
        return self._layer_specs

    @property
    def fast_path(self) -> bool:
        """Whether calls use the batched fast path; set False to force the general vmap path."""
        return self._use_fast

    @fast_path.setter
    def fast_path(self, enabled: bool) -> None:
        enabled = checked_flag(enabled, "fast_path")
        if enabled and self._fast_net is None:
            raise ValueError(
                f"The fast path does not support this network ({type(self._module).__name__}): it needs a"
                " known layer (Linear, an elementwise activation, RNN/LSTM/GRU) or a Chain/Sequential"
                " without parameters shared between layers."
            )
        self._use_fast = bool(enabled)
        self._bound = (
            self._bind(self._parameters) if self._use_fast and self._parameters is not None else None
        )

    # -- running ----------------------------------------------------------------------------------

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """The network's output for ``x``: one observation (1-D parameters) or a batch (2-D).

        ``x`` is brought to the dtype of the parameters (a float64 MuJoCo observation runs through a
        float32 network as float32); the policy never changes its own dtype.
        """
        parameters = self._parameters
        if parameters is None:
            raise ValueError("The policy has no parameters yet; call policy.set_parameters(...) first.")
        if not isinstance(x, torch.Tensor):
            raise TypeError(
                f"The policy expects observations as a torch.Tensor, got {type(x).__name__};"
                " convert them with vecrl.convert_to_torch(...) or wrap the env in vecrl.TorchWrapper."
            )
        batched = parameters.ndim == 2
        if batched and (x.ndim == 0 or x.shape[0] != parameters.shape[0]):
            raise ValueError(
                f"The policy holds {parameters.shape[0]} parameter rows, so it expects a batch of"
                f" {parameters.shape[0]} observations (leading dimension); got shape {tuple(x.shape)}."
            )
        width = self._input_width
        if width is not None and x.ndim >= 1 and x.shape[-1] != width[0]:
            raise ValueError(
                f"The policy's network takes observations of length {width[0]} (its first layer is {width[1]}),"
                f" got a tensor of shape {tuple(x.shape)}."
            )
        if x.dtype != parameters.dtype:  # float64 (MuJoCo) or integer observations meet float32 weights
            x = x.to(parameters.dtype)
        if self._obs_norm is not None:
            x = self._normalize(x)
        bound = self._bound
        if bound is not None and (not batched or x.ndim == 2):
            result = bound(x, self._state)
        else:
            result = self._general(parameters, x, self._state)
        if isinstance(result, torch.Tensor):
            return result
        if isinstance(result, tuple) and len(result) == 2:
            y, self._state = result
            return y
        raise TypeError(
            f"The network returned a {type(result).__name__}; expected a tensor, or a pair (output, state)"
            " from a recurrent network."
        )

    @property
    def obs_norm(self) -> ObsNorm | None:
        """The observation statistics the policy normalizes its input with (None: it does not).

        Setting it keeps a copy of the statistics as they stand (set it again after they change), so a
        saved policy runs on its own as it was evaluated. ``evaluate(..., obs_norm=...)`` refuses a policy
        that carries one (the observations would be normalized twice).

        Examples:
            >>> stats = ObsNorm()
            >>> stats.update(torch.tensor([[0.0], [4.0]]))
            >>> policy = Policy("Linear(1, 1)")
            >>> policy.set_parameters(torch.tensor([1.0, 0.0]))  # y = x
            >>> policy.obs_norm = stats
            >>> policy(torch.tensor([4.0])).tolist()  # (4 - 2) / 2
            [1.0]
        """
        return self._obs_norm

    @obs_norm.setter
    def obs_norm(self, stats: ObsNorm | None) -> None:
        if stats is not None and not isinstance(stats, ObsNorm):
            raise TypeError(
                f"policy.obs_norm must be a vecrl_policy.ObsNorm or None, got {type(stats).__qualname__}."
            )
        self._obs_norm = None if stats is None else stats.copy()
        self._normalizers: dict[tuple[torch.dtype, torch.device], Normalize] = {}

    def _normalize(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.dtype, x.device)
        normalize = self._normalizers.get(key)
        if normalize is None:
            normalize = self._normalizers[key] = self._obs_norm.normalizer(*key)  # type: ignore[union-attr]
        return normalize(x)

    # -- hidden state ---------------------------------------------------------------------------------

    def reset(self, indices: Indices | None = None, *, copy: bool = True) -> None:
        """Clear the hidden state: all of it, or only the rows ``indices`` selects (list, tensor or mask).

        With ``copy=True`` the rows are zeroed in a copy of the state, so an output tensor that is also
        part of the state (an RNN's ``y`` is its ``h``) is not changed behind your back; ``copy=False``
        zeroes them in place.

        Examples:
            >>> policy = Policy("RNN(2, 3)")
            >>> policy.set_parameters(torch.randn(4, policy.parameter_length))
            >>> y = policy(torch.ones(4, 2))
            >>> policy.reset(torch.tensor([True, False, False, True]))
            >>> policy.h[:, 0].eq(0).tolist(), bool((y != 0).all())
            ([True, False, False, True], True)
        """
        if indices is None:
            self._state = None
            return
        parameters = self._parameters
        if parameters is None or parameters.ndim != 2:
            raise ValueError(
                "reset(indices) clears rows of a batch, so it needs 2-D parameters; with one network"
                " (1-D parameters) call reset() to clear the whole state."
            )
        rows = _row_indices(indices, parameters.shape[0])
        if copy:
            self._state = self._cleared(self._state, rows)
        elif self._state is not None:
            vecrl.reset_tensors(self._state, rows)

    def keep_rows(self, indices: Indices) -> None:
        """Keep only the rows ``indices`` selects, in that order: their parameters and their hidden state.

        ``evaluate`` drops the rows whose episodes are over this way, so that each step runs the network on
        the rows still playing only.

        Examples:
            >>> policy = Policy("RNN(2, 3)")
            >>> policy.set_parameters(torch.randn(4, policy.parameter_length))
            >>> y = policy(torch.ones(4, 2))
            >>> policy.keep_rows([3, 1])
            >>> policy.parameters.shape, bool((policy.h == y[[3, 1]]).all())
            (torch.Size([2, 21]), True)
        """
        parameters = self._parameters
        if parameters is None or parameters.ndim != 2:
            raise ValueError("keep_rows(indices) selects rows of a batch, so it needs 2-D parameters.")
        rows = _row_indices(indices, parameters.shape[0]).to(parameters.device)
        state = self._state
        # (index_select: torch's advanced indexing copies rows 4x slower on the CPU, 250 against 67 us for
        # 192 rows of 4,610 floats)
        self.set_parameters(parameters.index_select(0, rows))
        self._state = _select_rows(state, rows)

    @staticmethod
    def _cleared(state: Any, rows: torch.Tensor) -> Any:
        if state is None or rows.numel() == 0:
            return state
        state = _clone_tensors(state)
        vecrl.reset_tensors(state, rows)
        return state

    @property
    def h(self) -> Any:
        """The hidden state of a recurrent network (None before the first call or after reset())."""
        return self._state

    # -- export -------------------------------------------------------------------------------------

    def to_torch_module(self, vector: torch.Tensor) -> nn.Module:
        """A standalone copy of the network with the parameters ``vector`` (1-D), on its device (behind
        the normalization of ``obs_norm``, in a ``NormalizedNet``, when the policy carries one).

        Examples:
            >>> policy = Policy(nn.Linear(3, 2))
            >>> net = policy.to_torch_module(torch.zeros(8))
            >>> net(torch.ones(3)).tolist()
            [0.0, 0.0]
        """
        if not isinstance(vector, torch.Tensor) or vector.ndim != 1 or vector.numel() != self._layout.length:
            shape = tuple(vector.shape) if isinstance(vector, torch.Tensor) else type(vector).__name__
            raise ValueError(
                f"to_torch_module expects one parameter vector of shape ({self._layout.length},), got {shape};"
                " for a row of a batch, pass policy.parameters[i]."
            )
        net = copying.deepcopy(self._module).to(vector.device)
        with torch.no_grad():
            for name, parameter in net.named_parameters():
                parameter.copy_(self._layout.slots[name].view(vector))
        if self._obs_norm is not None:  # the normalization first, as the policy applies it
            return NormalizedNet(self._obs_norm.normalizer(vector.dtype, vector.device), net)
        return net


def _input_width(module: nn.Module) -> tuple[int, str] | None:
    """The input length the network takes and the layer that says so, where the network is a layer with
    its own input length (``Linear``, a recurrent cell) alone or first in a ``Sequential``/``Chain``; None
    otherwise (a module of the user's own may read its input in any way)."""
    first = module
    while isinstance(first, nn.Sequential) and len(first) > 0:
        first = first[0]
    width = getattr(first, "in_features", getattr(first, "input_size", None))
    return (width, repr(first)) if isinstance(width, int) and not isinstance(width, bool) else None


def _check_is_float_tensor(parameters: Any) -> None:
    if not isinstance(parameters, torch.Tensor):
        raise TypeError(
            f"set_parameters expects a torch.Tensor, got {type(parameters).__name__};"
            " convert it with torch.as_tensor(...)."
        )
    if not parameters.is_floating_point():
        raise TypeError(
            f"Parameters must be a floating-point tensor, got dtype {parameters.dtype};"
            " convert them with .float()."
        )


def _row_indices(indices: Indices, num_rows: int) -> torch.Tensor:
    """Row indices (int64, CPU) from a list of ints, an index tensor or a boolean mask over ``num_rows``."""
    if isinstance(indices, torch.Tensor):
        rows = indices.detach().cpu()
    elif isinstance(indices, Iterable) and not isinstance(indices, (str, bytes)):
        rows = torch.as_tensor(list(indices))
    else:
        raise TypeError(
            f"indices must be a list/tensor of row numbers or a boolean mask, got {type(indices).__name__};"
            " for one row i, pass [i]."
        )
    if rows.ndim != 1 or not (
        rows.dtype == torch.bool or not (rows.is_floating_point() or rows.is_complex())
    ):
        raise ValueError(
            f"indices must be a 1-D list/tensor of row numbers or a boolean mask; got {rows.dtype} with"
            f" shape {tuple(rows.shape)}."
        )
    if rows.dtype == torch.bool:
        if rows.numel() != num_rows:
            raise ValueError(
                f"A boolean mask over the rows must have {num_rows} entries; got {rows.numel()}."
            )
        return rows.nonzero().flatten()
    rows = rows.to(torch.int64)
    if rows.numel() and (rows.min() < -num_rows or rows.max() >= num_rows):
        raise ValueError(f"Row indices must lie in [-{num_rows}, {num_rows}); got {rows.tolist()}.")
    return rows % num_rows


def _select_rows(state: Any, rows: torch.Tensor) -> Any:
    """``state`` (a tensor or a nesting of tuples, lists and dicts) with every tensor's rows ``rows``."""
    return map_nest(
        lambda x: x.index_select(0, rows.to(x.device)) if isinstance(x, torch.Tensor) else x, state
    )


def _clone_tensors(state: Any) -> Any:
    """A copy of ``state`` (a tensor or a nesting of tuples, lists and dicts) with every tensor cloned."""
    return map_nest(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, state)
