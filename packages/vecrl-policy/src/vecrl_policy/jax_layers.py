"""jax twins of the layers ``vecrl_policy.layer_specs`` describes: the same flat parameter rows and the same
math as the torch layers (``vecrl_policy.layers``), one network per row, for evaluate's fused rollout.

Only the fused rollout imports this module (it imports jax); ``import vecrl_policy`` never does.

Examples:
    >>> import jax.numpy as jnp
    >>> from vecrl_policy import Policy
    >>> policy = Policy("Linear(3, 2) >> Tanh()")
    >>> specs = policy.layer_specs
    >>> parameters = unpack(specs, jnp.zeros((5, policy.parameter_length)))
    >>> y, states = forward(specs, parameters, jnp.ones((5, 3)), initial_states(specs, parameters))
    >>> y.shape
    (5, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from vecrl_policy.layer_specs import LayerSpec

#: One layer's parameters, one row per network: ``{"weight": (rows, out, in), "bias": (rows, out), ...}``.
LayerParameters = dict[str, jax.Array]


def unpack(specs: Sequence[LayerSpec], population: jax.Array) -> list[LayerParameters]:
    """Each layer's parameters as arrays with a leading row axis, cut from ``population`` (rows, length)."""
    rows = population.shape[0]
    return [
        {name: population[:, slot.start : slot.stop].reshape(rows, *slot.shape) for name, slot in spec.slots}
        for spec in specs
    ]


def initial_states(specs: Sequence[LayerSpec], parameters: Sequence[LayerParameters]) -> list[Any]:
    """Zero recurrent states (what the torch layers start from), one entry per layer (``()`` if stateless)."""
    states: list[Any] = []
    for spec, layer in zip(specs, parameters, strict=True):
        if not spec.recurrent:
            states.append(())
            continue
        weight_hh = layer["weight_hh"]
        h = jnp.zeros((weight_hh.shape[0], weight_hh.shape[2]), weight_hh.dtype)
        states.append((h, h) if spec.kind == "LSTM" else h)
    return states


def forward(
    specs: Sequence[LayerSpec], parameters: Sequence[LayerParameters], x: jax.Array, states: Sequence[Any]
) -> tuple[jax.Array, list[Any]]:
    """Row ``i`` of ``x`` through network ``i``; the output and each layer's new state."""
    new_states: list[Any] = []
    for spec, layer, state in zip(specs, parameters, states, strict=True):
        if spec.kind == "Linear":
            x = _linear(x, layer["weight"], layer.get("bias"))
        elif spec.recurrent:
            x, state = _CELLS[spec.kind](spec, layer, x, state)
        else:
            x = _ACTIVATIONS[spec.kind](x, **dict(spec.settings))
        new_states.append(state)
    return x, new_states


def _linear(x: jax.Array, weight: jax.Array, bias: jax.Array | None) -> jax.Array:
    y = jnp.einsum("ri,roi->ro", x, weight)
    return y if bias is None else y + bias


def _gates(layer: LayerParameters, x: jax.Array, h: jax.Array) -> tuple[jax.Array, jax.Array]:
    return _linear(x, layer["weight_ih"], layer.get("bias_ih")), _linear(
        h, layer["weight_hh"], layer.get("bias_hh")
    )


def _rnn(spec: LayerSpec, layer: LayerParameters, x: jax.Array, h: jax.Array) -> tuple[jax.Array, jax.Array]:
    gi, gh = _gates(layer, x, h)
    y = (jnp.tanh if dict(spec.settings)["nonlinearity"] == "tanh" else jax.nn.relu)(gi + gh)
    return y, y


def _lstm(spec: LayerSpec, layer: LayerParameters, x: jax.Array, state: Any) -> tuple[jax.Array, Any]:
    h, c = state
    gi, gh = _gates(layer, x, h)
    i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
    c_new = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h_new = jax.nn.sigmoid(o) * jnp.tanh(c_new)
    return h_new, (h_new, c_new)


def _gru(spec: LayerSpec, layer: LayerParameters, x: jax.Array, h: jax.Array) -> tuple[jax.Array, jax.Array]:
    gi, gh = _gates(layer, x, h)
    hidden = h.shape[-1]
    r, z = jnp.split(jax.nn.sigmoid(gi[:, : 2 * hidden] + gh[:, : 2 * hidden]), 2, axis=-1)
    n = jnp.tanh(gi[:, 2 * hidden :] + r * gh[:, 2 * hidden :])
    y = n + z * (h - n)  # torch.lerp(n, h, z)
    return y, y


_CELLS: dict[str, Callable[..., tuple[jax.Array, Any]]] = {"RNN": _rnn, "LSTM": _lstm, "GRU": _gru}


def _softplus(x: jax.Array, beta: float, threshold: float) -> jax.Array:
    return jnp.where(x * beta > threshold, x, jnp.log1p(jnp.exp(beta * x)) / beta)


def _bin(x: jax.Array, lb: float, ub: float) -> jax.Array:
    return jnp.sign(x - (ub + lb) / 2.0) * ((ub - lb) / 2.0) + (ub + lb) / 2.0


_ACTIVATIONS: dict[str, Callable[..., jax.Array]] = {
    "Identity": lambda x: x,
    "Tanh": jnp.tanh,
    "ReLU": jax.nn.relu,
    "Sigmoid": jax.nn.sigmoid,
    "ELU": lambda x, alpha: jax.nn.elu(x, alpha),
    "SELU": jax.nn.selu,
    "GELU": lambda x, approximate: jax.nn.gelu(x, approximate=approximate == "tanh"),
    "SiLU": jax.nn.silu,
    "LeakyReLU": lambda x, negative_slope: jax.nn.leaky_relu(x, negative_slope),
    "Hardtanh": lambda x, min_val, max_val: jnp.clip(x, min_val, max_val),
    "ReLU6": jax.nn.relu6,
    "Softplus": _softplus,
    "Softsign": lambda x: x / (1 + jnp.abs(x)),
    "CELU": lambda x, alpha: jax.nn.celu(x, alpha),
    "Mish": lambda x: x * jnp.tanh(jax.nn.softplus(x)),
    "Tanhshrink": lambda x: x - jnp.tanh(x),
    "Hardswish": jax.nn.hard_swish,
    "Hardsigmoid": jax.nn.hard_sigmoid,
    "Clip": lambda x, lb, ub: jnp.clip(x, lb, ub),
    "Bin": _bin,
    "Slice": lambda x, from_index, to_index: x[..., from_index:to_index],
    "Round": lambda x, ndigits: jnp.round(x, ndigits),
}
