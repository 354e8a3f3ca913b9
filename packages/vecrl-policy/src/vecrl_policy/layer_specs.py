"""A network as plain data: the layers a fused jax rollout can run, each with where its parameters live.

``describe(module, layout)`` reads a ``Chain`` or ``nn.Sequential`` of layers that vecrl-policy's string
language builds (``Linear``, the activations, ``RNN``/``LSTM``/``GRU``, ``Clip``, ``Bin``, ``Slice``,
``Round``) and returns one :class:`LayerSpec` per layer, or None when a layer has no jax twin (an
``nn.Module`` of the user's own). The specs are hashable: they key the cache of compiled programs.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from vecrl_policy import layers
from vecrl_policy.chain import Chain
from vecrl_policy.fastpath import has_hooks
from vecrl_policy.flat import ParameterLayout, Slot

#: Parameter-free torch modules with a jax twin, and the attributes that configure them.
ACTIVATIONS: dict[type[nn.Module], tuple[str, ...]] = {
    nn.Identity: (),
    nn.Tanh: (),
    nn.ReLU: (),
    nn.Sigmoid: (),
    nn.ELU: ("alpha",),
    nn.SELU: (),
    nn.GELU: ("approximate",),
    nn.SiLU: (),
    nn.LeakyReLU: ("negative_slope",),
    nn.Hardtanh: ("min_val", "max_val"),
    nn.ReLU6: (),
    nn.Softplus: ("beta", "threshold"),
    nn.Softsign: (),
    layers.Clip: ("lb", "ub"),
    layers.Bin: ("lb", "ub"),
    layers.Slice: ("from_index", "to_index"),
    layers.Round: ("ndigits",),
}

_CELLS = {layers.RNN: "RNN", layers.LSTM: "LSTM", layers.GRU: "GRU"}


@dataclass(frozen=True)
class LayerSpec:
    """One layer: its ``kind`` (``"Linear"``, ``"RNN"``, ``"LSTM"``, ``"GRU"`` or an activation's class
    name), its parameters' slots in the flat vector by name (``weight``, ``bias``; ``weight_ih``, ...), and
    its settings (an activation's attributes; an RNN's ``nonlinearity``).

    Examples:
        >>> net = nn.Sequential(nn.Linear(3, 2), nn.LeakyReLU(0.1))
        >>> [spec.kind for spec in describe(net, ParameterLayout(net))]
        ['Linear', 'LeakyReLU']
    """

    kind: str
    slots: tuple[tuple[str, Slot], ...] = ()
    settings: tuple[tuple[str, object], ...] = ()

    @property
    def recurrent(self) -> bool:
        return self.kind in _CELLS.values()


def describe(module: nn.Module, layout: ParameterLayout) -> tuple[LayerSpec, ...] | None:
    """The layers of ``module`` in order, or None if one of them has no jax twin (see the module docstring).

    Examples:
        >>> from vecrl_policy import str_to_net
        >>> net = str_to_net("Linear(4, 8) >> Tanh() >> LSTM(8, 2)")
        >>> [spec.kind for spec in describe(net, ParameterLayout(net))]
        ['Linear', 'Tanh', 'LSTM']
    """
    specs: list[LayerSpec] = []
    used: set[str] = set()
    if not _describe(module, "", layout, specs, used, threads_states=True):
        return None
    return tuple(specs) if used == set(layout.slots) else None  # (shared parameters: not ours to fuse)


def _describe(
    module: nn.Module,
    prefix: str,
    layout: ParameterLayout,
    specs: list[LayerSpec],
    used: set[str],
    threads_states: bool,
) -> bool:
    kind = type(module)
    if has_hooks(module) or any(True for _ in module.buffers(recurse=False)):
        return False
    if kind in (Chain, nn.Sequential):
        return all(
            _describe(child, f"{prefix}{name}.", layout, specs, used, threads_states and kind is Chain)
            for name, child in module.named_children()
        )
    names = [name for name, _ in module.named_parameters()]
    if any(prefix + name not in layout.slots for name in names):
        return False
    slots = tuple((name, layout.slots[prefix + name]) for name in names)
    used.update(prefix + name for name in names)
    if kind is nn.Linear:
        specs.append(LayerSpec("Linear", slots))
        return True
    if kind in _CELLS:
        if not threads_states:  # nn.Sequential hands a recurrent layer no state: torch decides what happens
            return False
        settings = (("nonlinearity", module.nonlinearity),) if kind is layers.RNN else ()
        specs.append(LayerSpec(_CELLS[kind], slots, settings))
        return True
    if kind in ACTIVATIONS and not names:
        specs.append(LayerSpec(kind.__name__, (), tuple((a, getattr(module, a)) for a in ACTIVATIONS[kind])))
        return True
    return False
