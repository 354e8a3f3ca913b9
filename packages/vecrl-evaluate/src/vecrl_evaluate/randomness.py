"""Every random thing of an ``evaluate`` call, as a function of ``(seed, row, episode, step)`` alone.

This module is the one home of the rule; the stepped loop (torch), the fused program (``jax.numpy``) and
the host side (numpy) all call it, so a row's numbers do not depend on which path runs it:

- **Row seeds.** Row ``r`` of a call made with ``seed`` has the seed ``row_seeds`` gives it: word ``r``
  of ``numpy.random.SeedSequence(seed)``, modulo 2**31 - 1 (every backend takes seeds below that).
- **Episodes.** Episode ``e`` of row ``r`` starts from a reset seeded with
  ``episode_seed(row_seed, e)`` (the row's seed for ``e = 0``), on every backend, with or without env
  parameters: a row's episodes do not depend on whether other rows (or it) are given parameters, nor on
  where the backend's autoreset would have taken it.
- **Action noise.** The noise added to row ``r``'s action at its ``k``-th step (counted over its
  episodes) is ``action_noise`` of ``(row_seed, k)``: a standard normal per action component, by the
  Box-Muller transform of two uniforms from a counter-based hash.

The hash works on 32-bit words: jax and numpy ``uint32`` arrays, or torch ``int64`` tensors holding
values below 2**32 (torch has no full ``uint32`` arithmetic); every product stays below 2**63, so each
library gives the same words bit for bit. The normals agree to float32 rounding (``log`` and ``cos``
round within an ulp of each other across libraries).

Examples:
    >>> import numpy as np
    >>> seeds = row_seeds(7, 3)
    >>> episode_seed(np.asarray(seeds), np.asarray([0, 0, 0])).tolist() == list(seeds)
    True
    >>> noise = action_noise(torch.tensor(seeds), torch.tensor([0, 0, 5]), 2)
    >>> tuple(noise.shape), bool(noise[0, 0] != noise[2, 0])
    ((3, 2), True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from vecrl.arrays import array_namespace

#: Seeds every backend takes (envpool's are int32, below 2**31 - 1).
SEED_MODULUS = 2**31 - 1

_MASK = 0xFFFFFFFF
_INIT_B, _MULT_B, _XSHIFT = 0x8B51F9DD, 0x58F38DED, 16  # numpy's SeedSequence.generate_state's hash
_MULTIPLIER = 0x45D9F3B  # the "hash32" finalizer's: below 2**27, so a word times it stays below 2**59
_STRIDE = 0x2C1B3C6D  # an odd constant below 2**30 that spreads a word before a counter is added
_EPISODE_SALT = 0x68E31DA4
_NOISE_SALT = 0x1B873593


#: The rows' seeds of an evaluate call: one int per row, as an array (``row_seeds``) or a sequence.
RowSeeds = Sequence[int] | np.ndarray


def row_seeds(seed: int | None, num_rows: int) -> np.ndarray | None:
    """The reset seed of each row of an ``evaluate`` call made with ``seed`` (None: unseeded), as an int64
    array: word ``r`` of ``numpy.random.SeedSequence(seed).generate_state(num_rows)``, modulo 2**31 - 1.
    Row ``r``'s seed is the same whatever ``num_rows``, and seeds of nearby calls (``seed``, ``seed + 1``)
    do not overlap.

    Examples:
        >>> bool((row_seeds(7, 3) == row_seeds(7, 5)[:3]).all())
        True
    """
    if seed is None:
        return None
    return seed_sequence_words(seed, num_rows).astype(np.int64) % SEED_MODULUS


def seed_sequence_words(seed: int, num_words: int) -> np.ndarray:
    """``numpy.random.SeedSequence(seed).generate_state(num_words, np.uint32)``, the same words by array
    arithmetic: numpy's own ``generate_state`` runs a Python loop a word, which a generation's ``evaluate``
    pays for every row (``bench/evosax_race.py`` times both). numpy's SeedSequence mixes the seed into its
    pool; word ``i`` is pool word ``i % 4`` hashed with the ``i``-th constant of numpy's sequence.

    Examples:
        >>> bool((seed_sequence_words(7, 9) == np.random.SeedSequence(7).generate_state(9, np.uint32)).all())
        True
    """
    pool = np.random.SeedSequence(seed).pool
    cycle, before, after = _hash_constants(num_words, len(pool))
    words = (pool.astype(np.uint64)[cycle] ^ before) * after & _MASK  # (uint64: no overflow to mask)
    return (words ^ (words >> _XSHIFT)).astype(np.uint32)


@functools.lru_cache(maxsize=16)
def _hash_constants(num_words: int, pool_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of ``num_words`` words of numpy's ``generate_state``: the pool word it starts from and the
    constant it is hashed with, before and after its multiplication (one population size's, made once)."""
    constants = [_INIT_B]
    for _ in range(num_words):
        constants.append(constants[-1] * _MULT_B & _MASK)
    table = np.asarray(constants, np.uint64)
    return np.arange(num_words) % pool_size, table[:-1], table[1:]


def random_row_seeds(num_rows: int) -> np.ndarray:
    """Seeds for the rows of an unseeded call, drawn from fresh entropy: the rule above, on seeds
    nobody chose."""
    return np.random.default_rng().integers(0, SEED_MODULUS, num_rows)


def episode_seed(row_seed: Any, episode: Any) -> Any:
    """The reset seed of episode ``episode`` of the rows with ``row_seed`` (arrays of one shape: numpy
    or jax ``uint32``, or torch ``int64``): ``row_seed`` itself for episode 0, else a hash of both,
    below 2**31 - 1."""
    seed, episode = _words(row_seed), _words(episode)
    later = _combine(_mix(seed ^ _EPISODE_SALT), episode) % SEED_MODULUS
    return array_namespace(seed).where(episode == 0, seed, later)


def action_noise(row_seed: Any, step: Any, size: int) -> Any:
    """Standard normal noise of shape ``(n, size)`` for ``n`` rows with seeds ``row_seed`` at their step
    ``step`` (1-D arrays: numpy or jax ``uint32``, or torch ``int64``), as float32 of the same library.
    Scale it by the noise's standard deviation and reshape it to the action's shape."""
    xp = array_namespace(row_seed)
    start = _combine(_mix(_words(row_seed) ^ _NOISE_SALT), _words(step))[:, None]
    component = _words(xp.arange(size)) * 2
    first = _uniform(_combine(start, component))
    second = _uniform(_combine(start, component + 1))
    return xp.sqrt(-2.0 * xp.log(first)) * xp.cos((2 * math.pi) * second)


def _uniform(word: Any) -> Any:
    """A float32 in (0, 1) from the top 24 bits of ``word`` (exact in float32)."""
    return (_floats(word >> 8) + 0.5) * 2.0**-24


def _mix(word: Any) -> Any:
    """The "hash32" finalizer of a 32-bit word."""
    word = _wrap(((word >> 16) ^ word) * _MULTIPLIER)
    word = _wrap(((word >> 16) ^ word) * _MULTIPLIER)
    return (word >> 16) ^ word


def _combine(word: Any, counter: Any) -> Any:
    """A new word from ``word`` and a counter below 2**32."""
    return _mix(_wrap(word * _STRIDE + counter))


def _wrap(word: Any) -> Any:
    """``word`` modulo 2**32: torch's int64 words are masked, uint32 arrays wrap by themselves."""
    return word & _MASK if isinstance(word, torch.Tensor) else word


def _words(array: Any) -> Any:
    """``array`` as 32-bit words: int64 for torch, uint32 for numpy and jax."""
    if isinstance(array, torch.Tensor):
        return array.long()
    return array.astype("uint32")


def _floats(words: Any) -> Any:
    return words.float() if isinstance(words, torch.Tensor) else words.astype("float32")
