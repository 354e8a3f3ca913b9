import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from vecrl import array_type, convert_from_torch, convert_to_torch, convert_to_torch_bool, reset_tensors

DTYPES = st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_])


def test_array_type_names_each_library():
    assert array_type(np.zeros(2)) == "numpy"
    assert array_type(torch.zeros(2)) == "torch"


def test_array_type_falls_back_or_names_the_unknown_type():
    assert array_type([1, 2], fallback="numpy") == "numpy"
    with pytest.raises(TypeError, match="list"):
        array_type([1, 2])


def test_numpy_to_torch_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = convert_to_torch(a)
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0


def test_read_only_and_reversed_numpy_arrays_are_copied_not_refused():
    a = np.arange(4.0)
    a.flags.writeable = False
    assert convert_to_torch(a).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert convert_to_torch(np.arange(4.0)[::-1]).tolist() == [3.0, 2.0, 1.0, 0.0]
    assert convert_to_torch(np.arange(3, dtype=">f4")).tolist() == [0.0, 1.0, 2.0]


def test_tensors_pass_through_and_other_iterables_become_tensors():
    t = torch.ones(2)
    assert convert_to_torch(t) is t
    assert convert_to_torch([1.0, 2.0]).tolist() == [1.0, 2.0]
    assert convert_to_torch(3).item() == 3


def test_torch_to_numpy_shares_memory():
    t = torch.zeros(3)
    a = convert_from_torch(t, "numpy")
    a[1] = 5.0
    assert t[1].item() == 5.0


def test_convert_from_torch_rejects_unknown_array_types():
    with pytest.raises(ValueError, match="'tensorflow'.*jax, torch, numpy"):
        convert_from_torch(torch.zeros(1), "tensorflow")  # type: ignore[arg-type]


@given(hnp.arrays(DTYPES, hnp.array_shapes(min_dims=0, max_dims=3)))
def test_numpy_round_trip_preserves_values_dtype_and_shape(a):
    back = convert_from_torch(convert_to_torch(a), "numpy")
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)


@settings(deadline=None)  # the first example pays for jax's import and device set-up
@given(
    hnp.arrays(st.sampled_from([np.float32, np.int32, np.bool_]), hnp.array_shapes(min_dims=1, max_dims=3))
)
def test_jax_round_trip_preserves_values_dtype_and_shape(a):
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray(a)
    t = convert_to_torch(x)
    assert array_type(x) == "jax"
    back = convert_from_torch(t, "jax")
    assert array_type(back) == "jax" and back.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(back), a)


def test_jax_to_torch_is_zero_copy():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(8.0)
    t = convert_to_torch(x)
    assert t.data_ptr() == x.unsafe_buffer_pointer()


def test_torch_to_jax_is_zero_copy():
    pytest.importorskip("jax")
    t = torch.arange(8.0)
    x = convert_from_torch(t, "jax")
    assert x.unsafe_buffer_pointer() == t.data_ptr()


def test_bool_conversion_follows_the_dtype():
    assert convert_to_torch_bool(np.array([True, False])).tolist() == [True, False]
    assert convert_to_torch_bool(np.array([0.0, 5e-5, -0.3])).tolist() == [False, False, True]
    assert convert_to_torch_bool(np.array([0, 2, -1])).tolist() == [False, True, True]
    assert convert_to_torch_bool(True).dtype == torch.bool


def test_reset_tensors_zeros_listed_rows_in_nested_containers():
    a, b, c = torch.ones(3, 2), torch.ones(3, 3), torch.ones(3)
    nested = [a, {"b": b, "rest": (c, "text", b"bytes")}]
    reset_tensors(nested, [1, 2])
    for t in (a, b, c):
        assert t[0].eq(1).all() and t[1:].eq(0).all()


@given(
    rows=st.integers(1, 6),
    mask_seed=st.lists(st.booleans(), min_size=6, max_size=6),
    as_=st.sampled_from(["list", "numpy", "tensor", "indices", "index_tensor"]),
)
def test_reset_tensors_mask_and_index_forms_agree(rows, mask_seed, as_):
    mask = mask_seed[:rows]
    indices = [i for i, m in enumerate(mask) if m]
    selector = {
        "list": mask,
        "numpy": np.array(mask),
        "tensor": torch.tensor(mask),
        "indices": indices,
        "index_tensor": torch.tensor(indices, dtype=torch.long),
    }[as_]
    x = {"h": (torch.arange(rows * 2.0).reshape(rows, 2) + 1, [torch.arange(rows) + 1])}
    reset_tensors(x, selector)
    for t in (x["h"][0], x["h"][1][0]):
        assert (t[torch.tensor(mask)] == 0).all()
        assert (t[~torch.tensor(mask)] != 0).all()
