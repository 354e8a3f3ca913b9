"""Time per call of a batch of policies: vecrl_policy.Policy against EvoTorch's Policy, a Python loop
over rows, and a hand-written batched forward (the practical floor on CPU), all in one run.

Networks: an MLP 17-64-64-6 (tanh) and LSTM(17, 32) >> Linear(32, 6). Batch 1 uses 1-D parameters and
is compared with a plain nn.Module call; batches 64 and 1024 are compared with the floor, a forward
with one torch.baddbmm per weight matrix on stacked, contiguous weights prepared outside the timing
(the faster of two storage layouts). Each candidate is timed in many short interleaved rounds and its
best round is kept (the CPU may be shared).

    python bench/policy_forward.py            # full run
    python bench/policy_forward.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from collections.abc import Callable

import torch
from torch import nn
from torch.nn.utils import vector_to_parameters

from vecrl_policy import Policy

NETWORKS = {
    "mlp": "Linear(17, 64) >> Tanh() >> Linear(64, 64) >> Tanh() >> Linear(64, 6)",
    "lstm": "LSTM(17, 32) >> Linear(32, 6)",
}
OBS, ACT, HIDDEN = 17, 6, 32


def best_time_per_call(fn: Callable[[], object], calls: int, rounds: int) -> list[float]:
    """Seconds per call in each of ``rounds`` rounds of ``calls`` calls."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return times


def floor_forward(
    kind: str, parameters: torch.Tensor, template: nn.Module, storage: str
) -> Callable[[torch.Tensor], object]:
    """Hand-batched forward on contiguous stacked weights, prepared here (untimed).

    ``storage`` is "in-out" (each matrix stored ``(in, out)``) or "out-in" (stored ``(out, in)`` as
    nn.Linear does, used transposed): which one BLAS prefers depends on the shapes, so both are timed
    and the faster is the floor.
    """
    batch = parameters.shape[0]
    stacked: dict[str, torch.Tensor] = {}
    offset = 0
    for name, p in template.named_parameters():
        rows = parameters[:, offset : offset + p.numel()].reshape(batch, *p.shape)
        offset += p.numel()
        if p.ndim == 1:
            stacked[name] = rows.unsqueeze(1).contiguous()
        elif storage == "in-out":
            stacked[name] = rows.transpose(1, 2).contiguous()
        else:
            stacked[name] = rows.contiguous().transpose(1, 2)
    if kind == "mlp":
        w1, b1, w2, b2, w3, b3 = (stacked[f"{i}.{n}"] for i in (0, 2, 4) for n in ("weight", "bias"))

        def mlp(x: torch.Tensor) -> torch.Tensor:
            h = torch.tanh(torch.baddbmm(b1, x.unsqueeze(1), w1))
            h = torch.tanh(torch.baddbmm(b2, h, w2))
            return torch.baddbmm(b3, h, w3).squeeze(1)

        return mlp
    w_ih, w_hh = stacked["0.weight_ih"], stacked["0.weight_hh"]
    bias = stacked["0.bias_ih"] + stacked["0.bias_hh"]
    w_out, b_out = stacked["1.weight"], stacked["1.bias"]
    state: list[torch.Tensor] = [torch.zeros(batch, 1, HIDDEN), torch.zeros(batch, 1, HIDDEN)]

    def lstm(x: torch.Tensor) -> torch.Tensor:
        h, c = state
        gates = torch.baddbmm(torch.baddbmm(bias, x.unsqueeze(1), w_ih), h, w_hh)
        i, f, _, o = torch.sigmoid(gates).chunk(4, dim=-1)
        g = torch.tanh(gates[..., 2 * HIDDEN : 3 * HIDDEN])
        c = torch.addcmul(f * c, i, g)
        h = o * torch.tanh(c)
        state[:] = [h, c]
        return torch.baddbmm(b_out, h, w_out).squeeze(1)

    return lstm


def loop_forward(kind: str, parameters: torch.Tensor) -> Callable[[torch.Tensor], object]:
    """Load each row into one nn.Module and run it on its observation, row after row."""
    net = Policy(NETWORKS[kind]).to_torch_module(parameters[0])
    states: list[object] = [None] * parameters.shape[0]

    def run(x: torch.Tensor) -> torch.Tensor:
        outputs = []
        with torch.no_grad():
            for i, row in enumerate(parameters):
                vector_to_parameters(row, net.parameters())
                if kind == "mlp":
                    outputs.append(net(x[i]))
                else:
                    y, states[i] = net(x[i], states[i])
                    outputs.append(y)
        return torch.stack(outputs)

    return run


def plain_module_forward(kind: str, vector: torch.Tensor) -> Callable[[torch.Tensor], object]:
    """One nn.Module holding the parameters, called directly (the batch-1 baseline)."""
    net = Policy(NETWORKS[kind]).to_torch_module(vector)
    state: list[object] = [None]

    def run(x: torch.Tensor) -> object:
        if kind == "mlp":
            return net(x)
        y, state[0] = net(x, state[0])
        return y

    return run


def evotorch_forward(kind: str, parameters: torch.Tensor) -> Callable[[torch.Tensor], object] | None:
    try:
        from evotorch.neuroevolution.net.vecrl import Policy as EvoPolicy
    except ImportError:
        return None
    policy = EvoPolicy(NETWORKS[kind])
    if policy.parameter_length != parameters.shape[-1]:
        raise RuntimeError("EvoTorch's network has another parameter layout; the comparison would be unfair.")
    policy.set_parameters(parameters)
    return policy


def measure(
    candidates: dict[str, Callable[[torch.Tensor], object] | None],
    x: torch.Tensor,
    rounds: int,
    budget: float,
) -> dict[str, float]:
    """Best seconds per call of each candidate over interleaved rounds of about ``budget`` seconds."""
    present = {name: fn for name, fn in candidates.items() if fn is not None}
    calls = {}
    for name, fn in present.items():
        fn(x)  # warm up, and start the recurrent state
        once = min(best_time_per_call(functools.partial(fn, x), 3, 3))
        calls[name] = max(1, int(budget / max(once, 1e-7)))
    best = dict.fromkeys(present, float("inf"))
    for _ in range(rounds):
        for name, fn in present.items():
            best[name] = min(best[name], *best_time_per_call(functools.partial(fn, x), calls[name], 1))
    return best


def ratio(best: dict[str, float], name: str) -> str:
    if name not in best:
        return "n/a (evotorch not installed)" if name == "evotorch" else "-"
    return f"{best[name] / best['baseline']:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: stable)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rounds = 5 if args.quick else 30  # many short interleaved rounds: the best one dodges the noise
    budget = 0.01 if args.quick else 0.03  # seconds per round and candidate, roughly

    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"torch {torch.__version__}, {args.threads} thread(s), {os.cpu_count()} CPUs, load average {load}")
    print("ratios of time per call to the baseline of the row (lower is better)")
    print(
        f"{'network':7} {'batch':>5} {'baseline (time)':>19} {'vecrl Policy':>13} {'(vmap path)':>10}"
        f" {'EvoTorch':>10} {'loop':>9}"
    )
    for kind in NETWORKS:
        template = Policy(NETWORKS[kind]).wrapped_module
        length = sum(p.numel() for p in template.parameters())
        for batch in (1, 64, 1024):
            if args.quick and batch == 1024:
                continue
            if batch == 1:
                parameters = torch.randn(length) * 0.3
                x = torch.randn(OBS)
                baseline_name, baseline = "nn.Module call", plain_module_forward(kind, parameters)
            else:
                parameters = torch.randn(batch, length) * 0.3
                x = torch.randn(batch, OBS)
                baseline_name, baseline = "baddbmm floor", floor_forward(kind, parameters, template, "in-out")
            ours = Policy(NETWORKS[kind])
            ours.set_parameters(parameters)
            ours_vmap = Policy(NETWORKS[kind])
            ours_vmap.fast_path = False
            ours_vmap.set_parameters(parameters)
            candidates: dict[str, Callable[[torch.Tensor], object] | None] = {
                "baseline": baseline,
                "floor-out-in": None if batch == 1 else floor_forward(kind, parameters, template, "out-in"),
                "ours": ours,
                "ours-vmap": ours_vmap,
                "evotorch": evotorch_forward(kind, parameters),
                "loop": None if batch == 1 else loop_forward(kind, parameters),
            }
            best = measure(candidates, x, rounds, budget)
            best["baseline"] = min(best["baseline"], best.pop("floor-out-in", float("inf")))
            base = f"{baseline_name} {best['baseline'] * 1e6:.0f}us"
            ratios = [ratio(best, name) for name in ("ours", "ours-vmap", "evotorch", "loop")]
            print(
                f"{kind:7} {batch:>5} {base:>19} {ratios[0]:>13} {ratios[1]:>10} {ratios[2]:>10} {ratios[3]:>9}"
            )


if __name__ == "__main__":
    main()
