"""TensorRows hands out each row once, zeroed, as arrays and tensors sharing memory; SyncVectorEnv's
CPU tensors, which are such rows, stay valid however long they are kept."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from vecrl_gym import SyncVectorEnv
from vecrl_gym.tensor_rows import MAX_BLOCK_BYTES, MAX_ROWS_PER_BLOCK, TensorRows


def test_every_row_is_new_zeroed_memory_shared_by_its_arrays_and_tensors():
    rows = TensorRows([((3, 2), np.dtype(np.float32)), ((3,), np.dtype(np.bool_))])
    kept, seen = [], set()  # kept: rows whose memory is alive, so that its address cannot come back
    for _ in range(3 * rows.rows_per_block + 1):  # across several blocks
        (values, flags), (values_tensor, flags_tensor) = rows.next_row()
        assert values.shape == (3, 2) and values.dtype == np.float32 and flags.dtype == np.bool_
        assert values_tensor.dtype == torch.float32 and flags_tensor.dtype == torch.bool
        assert not values.any() and not flags.any()
        values[:] = 1.0
        flags[1] = True
        assert values_tensor.sum() == 6 and flags_tensor.tolist() == [False, True, False]
        assert values_tensor.data_ptr() not in seen
        seen.add(values_tensor.data_ptr())
        kept.append(values_tensor)


def test_a_block_holds_at_most_its_byte_budget_and_at_least_one_row():
    assert TensorRows([((4,), np.dtype(np.float32))]).rows_per_block == MAX_ROWS_PER_BLOCK
    row_bytes = 100 * 8
    assert TensorRows([((100,), np.dtype(np.float64))]).rows_per_block == MAX_BLOCK_BYTES // row_bytes
    big = TensorRows([((84, 84, 4), np.dtype(np.uint8))])
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
