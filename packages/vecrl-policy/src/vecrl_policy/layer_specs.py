"""A network as plain data: the layers a fused jax rollout can run, each with where its parameters live.

``describe(module, layout)`` reads a ``Chain`` or ``nn.Sequential`` of the layers of
``vecrl_policy.layer_table`` and returns one ``LayerSpec`` per layer, or None when a layer has no
jax twin (an ``nn.Module`` of the user's own: ``vecrl_policy.layer_table.why_not_fused`` says which). The specs are hashable: they key the cache of compiled programs.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from vecrl_policy.chain import Chain
from vecrl_policy.fastpath import has_hooks
from vecrl_policy.flat import ParameterLayout, Slot
from vecrl_policy.layer_table import LAYERS


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
        return self.kind in ("RNN", "LSTM", "GRU")


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
    entry = LAYERS.get(kind)
    if entry is None or entry.no_twin is not None or (bool(names) != entry.weights):
        return False
    if entry.weights and entry.kind != "Linear" and not threads_states:
        return False  # nn.Sequential hands a recurrent layer no state: torch decides what happens
    specs.append(LayerSpec(entry.kind, slots, tuple((a, getattr(module, a)) for a in entry.settings)))
    return True
