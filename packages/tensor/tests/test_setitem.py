"""x[key] = value and index_put_: keys against NumPy, non-contiguous targets, value casts and
broadcasts, shape errors, the version counter, accumulation of repeated positions.

The tests taking `device` hold the CPU to NumPy (or to PyTorch, `index_cases`) and CUDA
(Numba's simulator in CI) to the CPU, computed on the device (`cuda_guard`).
"""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result
from index_cases import ADD_DTYPES, ALL_DTYPES, SIGNED, assigned, check_on, layouts, typed

MASK = np.array([True, False, True])


SET_CASES = [
    ((1,), 7), ((slice(None), [0, 2]), 7), ((slice(None), [0, 2]), np.array([[1, 2]] * 3)),
    (([0, 2], [1, 3]), np.array([10, 20])), (([[0], [2]], [1, 3]), np.array([1, 2])),
    ((np.arange(12).reshape(3, 4) % 3 == 0,), -1), ((MASK,), np.array([9, 8, 7, 6])),
    ((slice(1, None), [3, 0]), np.array([[5], [6]])), (([1, 1], [2, 2]), 42),
]


@pytest.mark.parametrize("key,value", SET_CASES, ids=[str(i) for i in range(len(SET_CASES))])
def test_setitem_matches_numpy(key, value):
    """Each key assigns what NumPy assigns."""
    ref = np.arange(12).reshape(3, 4)
    x = torch.tensor(ref.copy())
    np_key = tuple(np.array(k) if isinstance(k, list) else k for k in key)
    ref[np_key] = value
    x[key] = torch.tensor(value) if isinstance(value, np.ndarray) else value
    np.testing.assert_array_equal(x.numpy(), ref)


def test_setitem_non_contiguous_target_and_value_cast():
    """Writes through a transposed target to its storage; a value of another dtype is refused
    through an advanced index (PyTorch's index_put_ rule) and cast through a basic one."""
    base = torch.zeros(4, 3)
    x = base.t()                                            # (3, 4), not contiguous
    x[[0, 2], 1:3] = torch.tensor([1.5, 2.5])
    ref = np.zeros((4, 3)).T.copy()
    ref[[0, 2], 1:3] = [1.5, 2.5]
    np.testing.assert_array_equal(x.numpy(), ref)
    assert base[1, 0].item() == 1.5                         # written through to the storage
    y = torch.zeros(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, "
                                           "got Long for the destination and Float for the source."):
        y[[0, 1]] = torch.tensor([1.7, 2.2])
    y[0:2] = torch.tensor([1.7, 2.2])                       # a basic key casts
    assert y.tolist() == [1, 2, 0]
    y[y == 1] = torch.tensor(5.0)                           # so does a lone mask with one value
    assert y.tolist() == [5, 2, 0]


def test_setitem_value_shape_error_and_version():
    """A value that does not broadcast raises PyTorch's error; a write bumps the version."""
    x = torch.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[2\] cannot be broadcast"):
        x[[0, 1], [1, 2]] = torch.tensor([1., 2.])
    v = x._version
    x[[0], [1]] = 1.
    assert x._version > v


def test_index_put_accumulate_adds_repeats():
    """accumulate=True adds repeated positions (float16 too); index_put leaves its input alone."""
    x = torch.zeros(3)
    x.index_put_((torch.tensor([0, 0, 2]),), torch.tensor(1.), accumulate=True)
    assert x.tolist() == [2., 0., 1.]
    m = torch.zeros(2, 3)
    out = torch.index_put(m, (torch.tensor([1, 1]), torch.tensor([2, 2])), torch.tensor([1., 3.]), accumulate=True)
    assert out.tolist() == [[0, 0, 0], [0, 0, 4.]] and m.sum().item() == 0
    h = torch.zeros(4, dtype=torch.float16)
    h.index_put_((torch.tensor([1, 1]),), torch.tensor([0.5, 0.25], dtype=torch.float16), accumulate=True)
    assert h.tolist() == [0, 0.75, 0, 0]


# --- every dtype, layout and path, on every device ------------------------------------------


LAYOUT_SET_CASES = [
    ((1,), 7), ((slice(None), [0, 2]), 7), ((slice(None), [0, 2]), np.array([[1, 2]] * 3)),
    (([0, 2], [1, 3]), np.array([10, 20])), (([[0], [2]], [1, 3]), np.array([1, 2])),
    ((np.arange(12).reshape(3, 4) % 3 == 0,), -1), ((MASK,), np.array([9, 8, 7, 6])),
    ((slice(1, None), [3, 0]), np.array([[5], [6]])), ((np.array([0, 2]),), np.array([[[1, 2, 3, 4]]])),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("key,value", LAYOUT_SET_CASES, ids=[str(i) for i in range(len(LAYOUT_SET_CASES))])
def test_setitem_into_both_layouts(key, value, device):
    """x[key] = value into a contiguous and a transposed target (a value with leading 1s too)."""
    value = torch.tensor(value) if isinstance(value, np.ndarray) else value
    key = tuple(torch.tensor(k) if isinstance(k, np.ndarray) else k for k in key)
    tensors = [k for k in key if isinstance(k, torch.Tensor)]
    values = [value] if isinstance(value, torch.Tensor) else []

    def setitem(t, *moved, cast=False):
        given = iter(moved)
        rebuilt = tuple(next(given) if isinstance(k, torch.Tensor) else k for k in key)
        v = next(given) if values else value
        return assigned(t, rebuilt, v.to(t.dtype) if cast and values else v)
    for x in layouts(np.arange(12).reshape(3, 4)):
        # the int64 value is cast to the float32 target first: PyTorch (and ember) refuse
        # another dtype through an advanced index
        check_on(device, setitem, x, *tensors, *[v.to(x.dtype) for v in values],
                 oracle=lambda *a: setitem(*a, cast=True))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_setitem_of_every_dtype_and_value_casts(dtype, device):
    """Index, mask and slice assignment into every dtype: numbers cast to it, tensors of another dtype
    refused (PyTorch's index_put_ rule), values broadcast, one per True."""
    for x in layouts(SIGNED, dtype):
        check_on(device, lambda t, i, v: assigned(t, (i,), v.to(t.dtype)), x, torch.tensor([2, 0]),
                 torch.tensor([1.5, -2.5, 3.0, 0.0]))
        if dtype is not torch.float32:
            with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
                assigned(x, (torch.tensor([2, 0]),), torch.tensor([1.5, -2.5, 3.0, 0.0]))
        check_on(device, lambda t, m: assigned(t, (m,), 1), x, torch.tensor(SIGNED > 0))
        check_on(device, lambda t: assigned(t, (slice(None), [1, 3]), 0), x)
        check_on(device, lambda t, m: assigned(t, m, 7), x, torch.tensor(SIGNED > 0))
        check_on(device, lambda t, m, v: assigned(t, m, v), x, torch.tensor(SIGNED > 0), typed(np.arange(6), dtype))
        check_on(device, lambda t, m, v: assigned(t, m, v), x, torch.tensor(SIGNED < 0), typed([3], dtype))
        with pytest.raises(RuntimeError):
            cpu_result(device, lambda t, m, v: assigned(t, m, v), x, torch.tensor(SIGNED > 0), torch.ones(2))
    with pytest.raises(RuntimeError):
        cpu_result(device, lambda t, i, v: assigned(t, (i,), v), typed(SIGNED, dtype), torch.tensor([0, 1]), torch.ones(3))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ADD_DTYPES + [torch.bool], ids=str)
def test_index_put_accumulate_adds_repeats_of_every_dtype(dtype, device):
    """index_put_(accumulate=True) adds repeated positions (pairs, rows, None-prefixed keys) into both layouts."""
    for x in layouts(SIGNED, dtype):
        check_on(device, lambda t, i, j, v: t.clone().index_put_((i, j), v, accumulate=True), x,
                 torch.tensor([0, 0, 2, 0, 1]), torch.tensor([1, 1, 3, 1, 0]), typed([1, 2, 3, 4, 5], dtype))
        check_on(device, lambda t, i, v: t.clone().index_put_((i,), v, accumulate=True), x, torch.tensor([1, 1]),
                 typed([[1, 2, 3, 4]], dtype))
        # a None in the indices stands for the whole dim (PyTorch's index_put_ takes tensors only)
        check_on(device, lambda t, i, v: t.clone().index_put_((None, i), v, accumulate=True), x,
                 torch.tensor([3, 3]), typed([7], dtype),
                 oracle=lambda t, i, v: t.clone().T.index_put_((i,), v, accumulate=True).T)
    check_on(device, lambda t, i, v: t.clone().index_put_((i,), v), torch.zeros(5), torch.tensor([4, 1]),
             torch.tensor([1., 2.]))


def test_setitem_drops_the_values_extra_leading_ones():
    # PyTorch: t[0] = v with v of shape (1, 1, 4) writes the row; other extra dims still fail.
    t = torch.zeros(3, 4)
    t[0] = torch.ones(1, 1, 4)
    t[1:2] = torch.full((1, 1, 1, 4), 2.0)
    assert t.tolist() == [[1.0] * 4, [2.0] * 4, [0.0] * 4]
    with pytest.raises(RuntimeError):
        t[0] = torch.ones(2, 1, 4)
