"""The torch threads ``evaluate`` runs its loop on."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """Run the block with torch's intra-op threads set to one, then restore the count.

    evaluate's per-step work in torch is a small batched matmul, which one thread does about as fast, while
    idle intra-op threads spin on the cores the env needs: measured on 2 cores, one thread made evaluate
    40% faster on envpool's Hopper (its C++ threads), 11-15% on brax (XLA's threads), 2% on gymnasium's
    Hopper, and 8% slower only on CartPole with 256 policies of 64-64 (a quiet machine); on a busy machine
    the spinning threads stall (a tiny matmul: 12 us to milliseconds at load 8). ``evaluate`` runs its checks
    and conversions on one thread too, for the same reason: beside a fused program's XLA threads.

    Examples:
        >>> with one_torch_thread():
        ...     torch.get_num_threads()
        1
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
