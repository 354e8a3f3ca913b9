"""TensorRows hands out each row once, a copy of its initial arrays, as arrays and tensors sharing memory;
SyncVectorEnv's CPU tensors, which are such rows, stay valid however long they are kept."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from vecrl_gym import SyncVectorEnv
from vecrl_gym.tensor_rows import MAX_BLOCK_BYTES, MAX_ROWS_PER_BLOCK, MIN_ROWS_PER_BLOCK, TensorRows


@pytest.mark.parametrize("width", [3, 1000], ids=["blocks", "one-row-at-a-time"])
def test_every_row_is_new_memory_shared_by_its_arrays_and_tensors_and_starts_as_given(width):
    rows = TensorRows([np.zeros((width, 2), np.float32), np.arange(width) == 0])
    assert (rows.rows_per_block > 1) == (width == 3)
    kept, seen = [], set()  # kept: rows whose memory is alive, so that its address cannot come back
    for _ in range(3 * rows.rows_per_block + 2):  # across several blocks
        (values, flags), (values_tensor, flags_tensor) = rows.next_row()
        assert values.shape == (width, 2) and values.dtype == np.float32 and flags.dtype == np.bool_
        assert values_tensor.dtype == torch.float32 and flags_tensor.dtype == torch.bool
        assert (values == 0.0).all()
        assert flags.tolist() == [True] + [False] * (width - 1)
        values[:] = 1.0
        flags[1] = True
        assert values_tensor.sum() == 2 * width and bool(flags_tensor[1])
        assert values_tensor.data_ptr() not in seen
        seen.add(values_tensor.data_ptr())
        kept.append(values_tensor)


def test_a_block_holds_at_most_its_byte_budget_and_at_least_the_rows_worth_a_block():
    assert TensorRows([np.zeros(4, np.float32)]).rows_per_block == MAX_ROWS_PER_BLOCK
    row_bytes = 100 * 8
    assert TensorRows([np.zeros(100)]).rows_per_block == MAX_BLOCK_BYTES // row_bytes >= MIN_ROWS_PER_BLOCK
    assert TensorRows([np.zeros(MAX_BLOCK_BYTES // 8 // 2)]).rows_per_block == 1  # 2 rows fit: no block
    big = TensorRows([np.zeros((84, 84, 4), np.uint8)])
    assert big.rows_per_block == 1
    first, second = big.next_row()[1][0], big.next_row()[1][0]
    assert first.data_ptr() != second.data_ptr()


def test_cpu_results_kept_over_many_steps_keep_their_values():
    env = SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 3, device="cpu")
    env.reset(seed=0)
    kept, copies = [], []
    for t in range(3 * MAX_ROWS_PER_BLOCK):  # several blocks of rows
        result = env.step(np.array([t % 2, 1, 0]))
        assert all(isinstance(item, torch.Tensor) for item in result[:4])
        kept.append(result[:4])
        copies.append(tuple(item.clone() for item in result[:4]))
    assert any(bool(step[2].any() or step[3].any()) for step in kept), "episodes should end on the way"
    for step, copy in zip(kept, copies, strict=True):
        for item, item_copy in zip(step, copy, strict=True):
            assert torch.equal(item, item_copy)
