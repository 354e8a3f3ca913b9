"""The rows' seeds are the words of numpy's SeedSequence, as the seeding rule says (vecrl_evaluate.randomness)."""

import numpy as np
import pytest

from vecrl_evaluate.randomness import SEED_MODULUS, row_seeds, seed_sequence_words


@pytest.mark.parametrize("seed", [0, 1, 7, 2**31 - 1, 2**32, 2**63 + 5, 12345678901234567890123])
def test_the_words_are_numpy_s_seed_sequence_words(seed):
    for num_words in (1, 3, 4, 5, 64, 1000, 1024, 4099):
        expected = np.random.SeedSequence(seed).generate_state(num_words, np.uint32)
        words = seed_sequence_words(seed, num_words)
        assert words.dtype == np.uint32 and (words == expected).all()


def test_row_seeds_are_the_words_below_the_modulus_whatever_the_population_size():
    for seed in np.random.default_rng(0).integers(0, 2**62, 50).tolist():
        expected = np.random.SeedSequence(seed).generate_state(300, np.uint32).astype(np.int64) % SEED_MODULUS
        assert (row_seeds(seed, 300) == expected).all()
        assert (row_seeds(seed, 17) == expected[:17]).all()
    assert row_seeds(None, 5) is None
