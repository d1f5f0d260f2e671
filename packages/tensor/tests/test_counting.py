"""Searching and counting (searchsorted, bucketize, bincount, histc, unique,
unique_consecutive) against NumPy references and PyTorch's outputs, and on every device.

The tests taking `device` run on the CPU and on CUDA (Numba's simulator where no GPU
is) over every dtype the ops take, 0-d, empty and non-contiguous inputs, NaN and ±inf
(`device_checks.same_on`). On CUDA searchsorted and bucketize compute without reading
anything back; the ops whose output size (or histc's range) depends on the data may read
single numbers, as PyTorch's CUDA kernels do, and nothing more.
"""
import contextlib

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, device_only
from device_checks import same_on

NAN = float("nan")


UNIQUE = [np.array([3, 1, 2, 1, 3]), np.array([[2., 1.], [2., 0.]]), np.array(7), np.array([], dtype=np.int64)]


@pytest.mark.parametrize("arr", UNIQUE, ids=["1d", "2d", "0d", "empty"])
def test_unique(arr):
    """unique's values, inverse and counts are NumPy's (1-d, 2-d, 0-d, empty)."""
    values, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True)
    got, got_inverse, got_counts = torch.unique(torch.tensor(arr), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(got.numpy(), values)
    np.testing.assert_array_equal(got_inverse.numpy(), inverse.reshape(arr.shape))
    np.testing.assert_array_equal(got_counts.numpy(), counts)


def test_unique_dim_and_consecutive():
    """Unique rows, and unique_consecutive's runs (with inverse and counts)."""
    rows = np.array([[1, 2], [1, 2], [0, 1]])
    values, inverse = torch.unique(torch.tensor(rows), dim=0, return_inverse=True)
    assert values.tolist() == [[0, 1], [1, 2]] and inverse.tolist() == [1, 1, 0]
    values, inverse, counts = torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True,
                                                       return_counts=True)
    assert values.tolist() == [1, 2, 3, 1, 2]
    assert inverse.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and counts.tolist() == [2, 2, 1, 2, 1]
    assert torch.unique_consecutive(torch.tensor(rows), dim=0).tolist() == [[1, 2], [0, 1]]


def test_searchsorted_and_bucketize():
    """searchsorted and bucketize are NumPy's searchsorted (left, right, batched, a number, int32 out)."""
    seq = np.array([1, 3, 5, 7])
    vals = np.array([[3, 6, 9], [0, 1, 7]])
    for right in (False, True):
        side = "right" if right else "left"
        got = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, vals, side=side))
        got = torch.bucketize(torch.tensor(vals), torch.tensor(seq), right=right)
        np.testing.assert_array_equal(got.numpy(), np.searchsorted(seq, vals, side=side))
    batched = torch.searchsorted(torch.tensor([[1, 3], [2, 4]]), torch.tensor([[3], [3]]), side="right")
    assert batched.tolist() == [[2], [1]]
    assert torch.searchsorted(torch.tensor(seq), 5).tolist() == 2
    assert torch.searchsorted(torch.tensor(seq), torch.tensor([3]), out_int32=True).dtype == torch.int32
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension"):
        torch.searchsorted(torch.tensor([[1, 3]]), torch.tensor([[1], [2]]))


def test_histc_and_bincount():
    """histc over a given and the data's range, and bincount (minlength, float32 weights) as NumPy's."""
    x = torch.tensor([1., 2., 1., 4.])
    assert torch.histc(x, bins=4, min=0, max=3).tolist() == [0., 2., 1., 0.]
    assert torch.histc(x, bins=4).tolist() == [2., 1., 0., 1.]
    assert torch.histc(torch.tensor([2., 2.]), bins=3).tolist() == [0., 2., 0.]
    values = np.array([0, 1, 1, 3])
    np.testing.assert_array_equal(torch.bincount(torch.tensor(values)).numpy(), np.bincount(values))
    weights = np.array([.5, 1., 1., 2.])
    got = torch.bincount(torch.tensor(values), weights=torch.tensor(weights, dtype=torch.float32), minlength=6)
    assert got.dtype == torch.float32
    np.testing.assert_array_equal(got.numpy(), np.bincount(values, weights, minlength=6))
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
        torch.bincount(torch.tensor([-1]))
    with pytest.raises(NotImplementedError, match="histogram_cpu"):
        torch.tensor([1, 2]).histc()


def test_counting_edge_cases_as_pytorch():
    """Non-finite histc ranges, unique of an empty dim, and bfloat16 NaN in searchsorted, as PyTorch."""
    # histc refuses a non-finite range (it would otherwise index outside its bins)
    for x, kwargs in [(torch.tensor([1., NAN]), {}), (torch.tensor([1., float("inf")]), {}),
                      (torch.tensor([1., 2.]), {"min": 0, "max": float("inf")})]:
        with pytest.raises(RuntimeError, match=r"torch.histc: range of \[.*\] is not finite"):
            torch.histc(x, bins=4, **kwargs)
    with pytest.raises(RuntimeError, match="^torch.histc: max must be larger than min$"):
        torch.histc(torch.tensor([1., 2.]), bins=4, min=3, max=1)
    # unique along the empty dim gives empty results; along another, PyTorch's error
    empty = torch.zeros((0, 2), dtype=torch.int64)
    for fn in (torch.unique, torch.unique_consecutive):
        values, inverse, counts = fn(empty, dim=0, return_inverse=True, return_counts=True)
        assert values.shape == (0, 2) and inverse.shape == (0,) and counts.shape == (0,)
        with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
            fn(empty, dim=1)
    # bfloat16 NaN sorts as the largest value in searchsorted too
    seq = torch.tensor([1., 2., 3.], dtype=torch.bfloat16)
    assert torch.searchsorted(seq, torch.tensor([NAN, 2.], dtype=torch.bfloat16)).tolist() == [3, 1]



# --- on every device: every dtype and layout ------------------------------------------------

SEQ_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int8,
              torch.uint8]


def _transposed(arr, dtype):
    """`arr` (2-d) as a transposed view of a tensor holding its transpose."""
    return torch.tensor(np.ascontiguousarray(np.asarray(arr).T), dtype=dtype).t()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SEQ_DTYPES, ids=str)
def test_searchsorted_and_bucketize_over_dtypes(dtype, device):
    """searchsorted (left and right, int64 and int32 results, batched boundaries, a number,
    a sorter) and bucketize of every dtype, for 2-d, 0-d, empty, transposed values, and
    NaN, -0.0 and inf."""
    seq = torch.tensor([1, 3, 3, 5, 7], dtype=dtype)
    values = [torch.tensor([[3, 6, 9], [0, 1, 7]], dtype=dtype), torch.tensor(3, dtype=dtype),
              torch.tensor([], dtype=dtype), _transposed([[3, 0], [6, 1], [9, 7]], dtype)]
    if dtype.is_floating_point:
        values.append(torch.tensor([NAN, -0.0, 2.5, float("inf")], dtype=dtype))
    for v in values:
        for right in (False, True):
            for out_int32 in (False, True):
                same_on(device, lambda s, x: torch.searchsorted(s, x, right=right, out_int32=out_int32), seq, v)
                same_on(device, lambda s, x: torch.bucketize(x, s, right=right), seq, v)
    batched = _transposed([[1, 3, 5], [2, 4, 6]], dtype)
    same_on(device, lambda s, q: torch.searchsorted(s, q, side="right"), batched,
            torch.tensor([[3, 4], [6, 1]], dtype=dtype))
    same_on(device, lambda s: torch.searchsorted(s, 4), seq)
    # the sorter's range check reads its min and max
    same_on(device, lambda s, x, order: torch.searchsorted(s, x, sorter=order), torch.tensor([5, 1, 3], dtype=dtype),
            torch.tensor([2, 4], dtype=dtype), torch.tensor([1, 2, 0]), scalar_reads=True)


def _search(side="left"):
    """searchsorted(boundaries, values[, sorter]) with `side`."""
    return lambda s, x, *order: torch.searchsorted(s, x, side=side, sorter=order[0] if order else None)


SEARCHSORTED_ERRORS = [  # (call, operands): each raises PyTorch's RuntimeError
    (_search(), (torch.tensor([[1, 3]]), torch.tensor([[1], [2]]))),
    (_search(side="middle"), (torch.tensor([[1, 3]]), torch.tensor([1]))),
    (lambda s, x: torch.bucketize(x, s), (torch.tensor([[1, 3]]), torch.tensor([1]))),
    (_search(), (torch.tensor(3), torch.tensor([1, 4]))),
    (_search(), (torch.tensor([1, 3]), torch.tensor([2]), torch.tensor([0]))),
    (_search(), (torch.tensor([1, 3]), torch.tensor([2]), torch.tensor([0, 5]))),
    (_search(), (torch.tensor([1, 3]), torch.tensor([2]), torch.tensor([-1, 0]))),
    (_search(), (torch.tensor([1, 3]), torch.tensor([2]), torch.tensor([0, 1], dtype=torch.int32))),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, operands", SEARCHSORTED_ERRORS)
def test_searchsorted_errors(call, operands, device):
    """Mismatched shapes, a bad side, 2-d bucketize boundaries, 0-d boundaries and a bad
    sorter (size, range, dtype) raise PyTorch's errors; the sorter's range check may read
    back its extremes."""
    same_on(device, call, *operands, raises=RuntimeError, scalar_reads=True)


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_out(device):
    """searchsorted(out=) fills its output on `device`."""
    out = torch.empty(0, dtype=torch.int64, device=device)
    seq, values = torch.tensor([1, 3, 5], device=device), torch.tensor([2, 4], device=device)
    with device_only() if device != "cpu" else contextlib.nullcontext():
        torch.searchsorted(seq, values, out=out)
    assert out.device.type == device and out.cpu().tolist() == [1, 2]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator")
def test_operands_on_two_devices_are_refused():
    """A CUDA op given a CPU operand raises PyTorch's error (CUDA only: a second device)."""
    for call in (lambda: torch.searchsorted(torch.tensor([1, 3]).cuda(), torch.tensor([2])),
                 lambda: torch.searchsorted(torch.tensor([1, 3]).cuda(), torch.tensor([2]).cuda(),
                                            sorter=torch.tensor([0, 1])),
                 lambda: torch.bincount(torch.tensor([1, 3]).cuda(), torch.tensor([1., 2.]))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8], ids=str)
def test_bincount_over_dtypes(dtype, device):
    """bincount of every integer dtype, of empty and strided input, with minlength and
    float32, float64 and int64 weights (the counts read back size the output)."""
    for v in (torch.tensor([0, 1, 1, 3, 7, 1], dtype=dtype), torch.tensor([], dtype=dtype),
              torch.tensor([0, 9, 2, 2, 5, 1], dtype=dtype)[::2]):
        same_on(device, torch.bincount, v, scalar_reads=True)
        same_on(device, lambda x: torch.bincount(x, minlength=10), v, scalar_reads=True)
        for weights in (torch.arange(v.numel(), dtype=torch.float32) * 0.5,
                        torch.arange(v.numel(), dtype=torch.float64) * 0.5, torch.arange(v.numel())):
            same_on(device, lambda x, w: torch.bincount(x, w, minlength=3), v, weights, scalar_reads=True)


BINCOUNT_ERRORS = [(torch.tensor([1, -1]), {}), (torch.tensor([[1]]), {}), (torch.tensor([1.]), {}),
                   (torch.tensor([1]), {"minlength": -1}), (torch.tensor([1, 2]), {"weights": torch.ones(3)})]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("values, kwargs", BINCOUNT_ERRORS)
def test_bincount_errors(values, kwargs, device):
    """Negative, 2-d or floating input, a negative minlength and weights of another
    length raise PyTorch's errors."""
    weights = kwargs.get("weights")
    same_on(device, lambda x, w: torch.bincount(x, w, minlength=kwargs.get("minlength", 0)), values, weights,
            raises=RuntimeError, scalar_reads=True)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=str)
def test_histc_over_dtypes(dtype, device):
    """histc of every floating dtype, over 2-d, transposed, 0-d and empty input, with a
    given range, the data's range and a one-point range; NaN outside a given range is
    dropped, a non-finite range of the data is an error, as are bad bins and ranges."""
    x = torch.tensor([[1., 2., 1.5], [4., -1., 3.]], dtype=dtype)
    for t in (x, x.t(), x[0, 0], x[:0]):
        for kwargs in ({"bins": 4, "min": 0, "max": 3}, {"bins": 5}, {"bins": 1, "min": 2, "max": 2}):
            same_on(device, lambda y: torch.histc(y, **kwargs), t, scalar_reads=True)
    with_nan = torch.tensor([1., NAN, 2.], dtype=dtype)
    same_on(device, lambda y: torch.histc(y, bins=3, min=0, max=3), with_nan)
    for bad in (with_nan, torch.tensor([1., float("inf")], dtype=dtype)):
        same_on(device, lambda y: torch.histc(y, bins=3), bad, raises=RuntimeError, scalar_reads=True)
    for kwargs in ({"bins": 0}, {"bins": 3, "min": 3, "max": 1}, {"bins": 3, "min": 0, "max": float("inf")}):
        same_on(device, lambda y: torch.histc(y, **kwargs), x, raises=RuntimeError)
    same_on(device, lambda y: torch.histc(y.long()), x, raises=NotImplementedError)


UNIQUE_INPUTS = {
    "1d": np.array([3, 1, 2, 1, 3, 2, 2, 0, 5, 1, 1, 1, 4, 3, 3, 9, 9, 0, 2]),   # > 16: CUDA's global sort stages
    "2d": np.array([[2., 1., -0.0], [2., 0., 1.]]),
    "0d": np.array(7),
    "empty": np.zeros((0, 2), dtype=np.int64),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.int64, torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                   torch.int8, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("name", list(UNIQUE_INPUTS))
def test_unique_and_unique_consecutive_over_dtypes(name, dtype, device):
    """unique and unique_consecutive of every dtype, whole and along each dim, with and
    without inverse and counts, of 1-d, 2-d (and transposed), 0-d and empty input."""
    x = torch.tensor(UNIQUE_INPUTS[name], dtype=dtype)
    for t in (x, x.t()) if x.dim() == 2 else (x,):
        for fn in (torch.unique, torch.unique_consecutive):
            same_on(device, lambda y: fn(y, return_inverse=True, return_counts=True), t, scalar_reads=True)
            same_on(device, fn, t, scalar_reads=True)
            for dim in range(t.dim()):
                # PyTorch's error along a dim when another one is empty
                other_empty = RuntimeError if t.numel() == 0 and t.shape[dim] else None
                same_on(device, lambda y: fn(y, dim=dim, return_inverse=True, return_counts=True), t,
                        scalar_reads=True, raises=other_empty)


@pytest.mark.parametrize("device", DEVICES)
def test_unique_slices_and_nan_runs(device):
    """Unique rows and columns (each dim), and NaN, which equals nothing, not even a NaN
    beside it."""
    rows = torch.tensor([[1, 2], [1, 2], [0, 1], [1, 2], [0, 0], [0, 1]])
    for dim in (0, 1, -1):
        for fn in (torch.unique, torch.unique_consecutive):
            same_on(device, lambda t: fn(t, dim=dim, return_inverse=True, return_counts=True), rows, scalar_reads=True)
    nan_runs = torch.tensor([NAN, NAN, 1., 1., NAN])
    for fn in (torch.unique_consecutive, torch.unique):
        same_on(device, lambda t: fn(t, return_inverse=True, return_counts=True), nan_runs, scalar_reads=True)
