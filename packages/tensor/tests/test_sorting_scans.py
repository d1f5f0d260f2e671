"""Sorting and scans against NumPy references (tables), on contiguous, non-contiguous
and 0-d inputs, with PyTorch's exact outputs for ties and NaN (searching and counting:
test_counting.py).

The tests taking `device` run on the CPU and on CUDA (Numba's simulator where no GPU
is), where each call must give the CPU's result, or its error word for word, computed on
the device (`cuda_guard.matches_the_cpu`).
"""
import contextlib

import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, device_only
from device_checks import raises_on, same_on

NAN = float("nan")
A = np.array([[3., 1., 2., 1.], [0., 5., 5., -2.], [4., 4., 4., 4.]])


def _inputs(arr):
    """The same values as a contiguous tensor and as a non-contiguous view."""
    return [torch.tensor(arr), torch.tensor(np.ascontiguousarray(arr.T)).t()]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_is_stable(dim, descending):
    for x in _inputs(A):
        values, indices = torch.sort(x, dim=dim, descending=descending)
        keys = -A if descending else A
        order = np.argsort(keys, axis=dim, kind="stable")
        np.testing.assert_array_equal(indices.numpy(), order)
        np.testing.assert_array_equal(values.numpy(), np.take_along_axis(A, order, dim))
        np.testing.assert_array_equal(x.argsort(dim=dim, descending=descending).numpy(), order)


def test_sort_nan_is_largest_and_0d():
    x = torch.tensor([NAN, 1., NAN, 0.])
    assert x.sort().indices.tolist() == [3, 1, 0, 2]
    assert x.sort(descending=True).indices.tolist() == [0, 2, 1, 3]
    v, i = torch.tensor(3.).sort()
    assert v.item() == 3. and i.item() == 0 and i.shape == ()
    assert torch.tensor([True, False]).sort().values.tolist() == [False, True]
    assert torch.msort(torch.tensor(A)).tolist() == np.sort(A, axis=0).tolist()


def test_topk_and_kthvalue():
    for x in _inputs(A):
        values, indices = x.topk(2)
        np.testing.assert_array_equal(values.numpy(), [[3., 2.], [5., 5.], [4., 4.]])
        np.testing.assert_array_equal(indices.numpy(), [[0, 2], [1, 2], [0, 1]])
        values, _ = x.topk(2, dim=0, largest=False)
        np.testing.assert_array_equal(values.numpy(), np.sort(A, axis=0)[:2])
        np.testing.assert_array_equal(x.kthvalue(2).values.numpy(), np.sort(A, axis=1)[:, 1])
        np.testing.assert_array_equal(x.kthvalue(3, dim=0, keepdim=True).values.numpy(), np.sort(A, axis=0)[2:])
    assert torch.tensor([1., NAN, 3.]).topk(1).values.isnan().all()
    assert torch.tensor(3.).topk(1).values.item() == 3.
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.tensor([1., 2.]).topk(3)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1"):
        torch.tensor(A).kthvalue(9)


def test_nanmedian_and_mode():
    x = torch.tensor([[3., NAN, 1., 2.], [NAN, NAN, NAN, NAN]])
    values, indices = x.nanmedian(1)
    assert values[0].item() == 2. and indices[0].item() == 3 and values[1].isnan().item()
    assert x.nanmedian().item() == 2.
    assert torch.tensor([1., 4.]).nanmedian().item() == 1.   # the lower median
    m = torch.tensor([1, 2, 2, 3, 3, 1]).mode()
    assert (m.values.item(), m.indices.item()) == (1, 5)     # smallest of the most frequent, last index
    m = torch.tensor([[1, 2, 2], [3, 3, 1]]).t().mode(0)
    assert m.values.tolist() == [2, 3] and m.indices.tolist() == [2, 1]


SCANS = [("cumsum", np.cumsum), ("cumprod", np.cumprod)]


@pytest.mark.parametrize("name,ref", SCANS)
@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum_cumprod(name, ref, dim):
    for x in _inputs(A):
        np.testing.assert_allclose(getattr(x, name)(dim).numpy(), ref(A, axis=dim))
    ints = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    got = getattr(torch, name)(ints, dim)
    assert got.dtype == torch.int64
    np.testing.assert_array_equal(got.numpy(), ref(np.array([[1, 2], [3, 4]]), axis=dim))
    assert getattr(torch, name)(torch.tensor(3.), 0).item() == 3.
    assert getattr(torch, name)(torch.tensor([1, 2]), 0, dtype=torch.float32).dtype == torch.float32


def test_cumsum_accumulates_in_double_and_inplace():
    x = torch.full((10000,), 0.1)
    assert abs(x.cumsum(0)[-1].item() - 1000.) < 1e-3
    y = torch.tensor([1., 2., 3.])
    y.cumsum_(0)
    assert y.tolist() == [1., 3., 6.]
    assert torch.tensor([True, True]).cumsum(0).tolist() == [1, 2]


def test_cummax_cummin():
    v, i = torch.tensor([1., 3., 3., 2.]).cummax(0)
    assert v.tolist() == [1., 3., 3., 3.] and i.tolist() == [0, 1, 2, 2]   # ties move the index on
    v, i = torch.tensor([1., NAN, 0.]).cummin(0)
    assert v[0].item() == 1. and v[1:].isnan().all() and i.tolist() == [0, 1, 1]
    for x in _inputs(A):
        np.testing.assert_array_equal(x.cummax(0).values.numpy(), np.maximum.accumulate(A, axis=0))
        np.testing.assert_array_equal(x.cummin(1).values.numpy(), np.minimum.accumulate(A, axis=1))
    v, i = torch.tensor(2).cummax(0)
    assert v.item() == 2 and i.item() == 0


def test_logcumsumexp():
    for x in _inputs(A):
        np.testing.assert_allclose(x.logcumsumexp(1).numpy(), np.logaddexp.accumulate(A, axis=1), rtol=1e-12)
    big = torch.tensor([1000., 1000., -float("inf")])
    np.testing.assert_allclose(big.logcumsumexp(0).numpy(), [1000., 1000. + np.log(2), 1000. + np.log(2)])
    with pytest.raises(NotImplementedError, match="logcumsumexp"):
        torch.tensor([1, 2]).logcumsumexp(0)


def test_diff():
    a = np.array([[1, 3, 6], [0, 1, 1]])
    for x in _inputs(a):
        np.testing.assert_array_equal(torch.diff(x).numpy(), np.diff(a))
        np.testing.assert_array_equal(torch.diff(x, n=2, dim=1).numpy(), np.diff(a, n=2, axis=1))
        np.testing.assert_array_equal(torch.diff(x, dim=0).numpy(), np.diff(a, axis=0))
    got = torch.diff(torch.tensor([1., 2.]), prepend=torch.tensor([0.]), append=torch.tensor([5., 9.]))
    assert got.tolist() == np.diff([0., 1., 2., 5., 9.]).tolist()
    assert torch.diff(torch.tensor([True, False, False])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        torch.tensor(1.).diff()


def test_matches_pytorch_on_random_inputs():
    ref = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.integers(0, 4, (5, 6)).astype(np.float64)    # many ties
    for dim in (0, 1):
        for descending in (False, True):
            want = ref.tensor(a).sort(dim=dim, descending=descending, stable=True)
            got = torch.tensor(a).sort(dim=dim, descending=descending)
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        want, got = ref.tensor(a).mode(dim), torch.tensor(a).mode(dim)
        np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
        for name in ("cummax", "cummin"):
            want, got = getattr(ref.tensor(a), name)(dim), getattr(torch.tensor(a), name)(dim)
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


EMPTY = [
    ("sort dim 0", lambda x: x.sort(0).values, (0, 3)),
    ("argsort", lambda x: x.argsort(0), (0, 3)),
    ("cumsum", lambda x: x.cumsum(0), (0, 3)),
    ("cumprod", lambda x: x.cumprod(1), (3, 0)),
    ("cummax", lambda x: x.cummax(0).values, (0, 3)),
    ("logcumsumexp", lambda x: x.logcumsumexp(0), (0, 3)),
    ("topk 0", lambda x: x.topk(0, 1).values, (0, 3)),
    ("unique", lambda x: torch.unique(x), (0, 3)),
    ("gather empty index", lambda x: x.gather(0, torch.zeros(0, 3, dtype=torch.int64)), (3, 0)),
    ("scatter empty index", lambda x: x.scatter(0, torch.zeros(0, 3, dtype=torch.int64), 1.), (3, 0)),
]


@pytest.mark.parametrize("name,fn,shape", EMPTY, ids=[n for n, _, _ in EMPTY])
def test_empty_inputs(name, fn, shape):
    got = fn(torch.zeros(*shape))
    assert got.numel() == 0


@pytest.mark.parametrize("fn,message", [
    (lambda x: x.kthvalue(1, 0), r"kthvalue\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda x: x.mode(0), r"mode\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda x: x.nanmedian(0), r"median\(\): Expected reduction dim 0 to have non-zero size"),
])
def test_empty_reduction_dim_errors(fn, message):
    with pytest.raises(IndexError, match=message):
        fn(torch.zeros(0, 3))




# --- on every device: every dtype and layout ------------------------------------------------

SCAN_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int8,
               torch.uint8, torch.bool]
def _scan_inputs(dtype):
    """2-d, one long row (which the CUDA scan cuts into chunks) holding NaN and inf, 0-d,
    empty and transposed tensors of `dtype`."""
    rng = np.random.default_rng(0)
    inputs = []
    for name, shape in [("2d", (3, 5)), ("long", (1, 41)), ("0d", ()), ("empty", (2, 0))]:
        if dtype is torch.bool:
            arr = rng.integers(0, 2, shape).astype(bool)
        elif dtype.is_floating_point:
            arr = rng.uniform(-1.5, 1.5, shape)
        else:
            arr = rng.integers(0 if dtype is torch.uint8 else -3, 4, shape)
        if dtype.is_floating_point and name == "long":
            arr[0, [7, 30]] = [NAN, float("inf")]
        inputs.append(torch.tensor(arr, dtype=dtype))
    arr = np.ascontiguousarray(rng.integers(0, 3, (6, 4)).T)
    inputs.append(torch.tensor(arr, dtype=dtype).t())
    return inputs


def _tol(dtype, result_dtype=None):
    """CPU vs CUDA tolerance of a float64 (1e-12) or another floating result (1e-6)."""
    return 1e-12 if torch.float64 in (dtype, result_dtype) else 1e-6


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=str)
def test_cumsum_cumprod_over_dtypes(dtype, device):
    """cumsum and cumprod (also into float64 and int32) of every dtype and layout."""
    for x in _scan_inputs(dtype):
        for dim in (0, -1):
            same_on(device, lambda t: t.cumsum(dim), x, tol=_tol(dtype))
            same_on(device, lambda t: torch.cumprod(t, dim), x, tol=_tol(dtype))
            same_on(device, lambda t: t.cumsum(dim, dtype=torch.float64), x, tol=_tol(dtype, torch.float64))
            # Converting NaN or inf to an integer is undefined (the CPU and a GPU differ, as
            # they do in PyTorch): only finite values go into the int32 sum.
            finite = torch.nan_to_num(x, 0.0, 0.0, 0.0) if dtype.is_floating_point else x
            same_on(device, lambda t: t.cumsum(dim, dtype=torch.int32), finite, tol=_tol(dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=str)
def test_cummax_cummin_over_dtypes(dtype, device):
    """cummax and cummin of every dtype and layout: values and indices exactly."""
    for x in _scan_inputs(dtype):
        for dim in (0, -1):
            same_on(device, lambda t: tuple(t.cummax(dim)), x, tol=0)
            same_on(device, lambda t: tuple(torch.cummin(t, dim)), x, tol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SCAN_DTYPES[:4], ids=str)
def test_logcumsumexp_over_dtypes(dtype, device):
    """logcumsumexp of every floating dtype and layout, and at -inf, inf and NaN."""
    for x in _scan_inputs(dtype):
        for dim in (0, -1):
            same_on(device, lambda t: torch.logcumsumexp(t, dim), x, tol=_tol(dtype))
    edge = torch.tensor([[-float("inf"), -float("inf"), 0., float("inf"), 1.], [NAN, 0., -float("inf"), 2., 3.]],
                        dtype=dtype)
    same_on(device, lambda t: torch.logcumsumexp(t, 1), edge, tol=_tol(dtype))


_COMPLEX_PARTS = (0.0, -1.5, 2.0, 1000.0, -float("inf"), float("inf"), float("nan"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_logcumsumexp_matches_pytorch(dtype, device):
    """Complex logcumsumexp: PyTorch's values on random rows (both dims, a transposed
    layout) and on every pair of special parts, where its rules for -inf, +inf and NaN
    real parts decide."""
    real_torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    z = rng.standard_normal((4, 7)) * 3 + 1j * rng.standard_normal((4, 7)) * 4
    pairs = [[complex(a, b), complex(c, d)] for a in _COMPLEX_PARTS for b in (0.0, 1.0)
             for c in _COMPLEX_PARTS for d in (0.0, -2.0)]
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for values, dim, transposed in ((z, 0, False), (z, 1, False), (z, 1, True), (np.array(pairs), 1, False)):
        ours = torch.tensor(values, dtype=getattr(torch, dtype))
        theirs = real_torch.tensor(values, dtype=getattr(real_torch, dtype))
        if transposed:
            ours, theirs = ours.t().contiguous().t(), theirs.t().contiguous().t()
        got = torch.logcumsumexp(ours.to(device), dim).cpu().numpy()
        want = real_torch.logcumsumexp(theirs, dim).numpy()
        for part in ("real", "imag"):
            np.testing.assert_allclose(getattr(got, part), getattr(want, part), rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"{part} of {values.tolist() if values is not z else 'z'}")
    with pytest.raises(NotImplementedError, match="ComplexHalf"):
        torch.logcumsumexp(torch.zeros(3, dtype=torch.complex32), 0)


@pytest.mark.parametrize("device", DEVICES)
def test_scan_out_and_inplace_forms(device):
    """cumsum(out=), cumprod_ and cummax(out=) fill their outputs on `device` itself."""
    x = torch.tensor([[1., 2.], [3., 4.]], device=device)
    out, values, indices = (torch.empty(0, dtype=d, device=device) for d in (torch.float32, torch.float32, torch.int64))
    with device_only() if device != "cpu" else contextlib.nullcontext():
        torch.cumsum(x, 1, out=out)
        inplace = x.clone().cumprod_(0)
        torch.cummax(x, 0, out=(values, indices))
    assert out.cpu().tolist() == [[1., 3.], [3., 7.]]
    assert inplace.cpu().tolist() == [[1., 2.], [3., 8.]]
    assert values.cpu().tolist() == [[1., 2.], [3., 4.]] and indices.cpu().tolist() == [[0, 0], [1, 1]]


SCAN_ERRORS = [
    (lambda x: x.cumsum(2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda x: x.long().logcumsumexp(0), NotImplementedError, "\"logcumsumexp_out_{dev}\" not implemented for 'Long'"),
    (lambda x: x.cummax(-3), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, exc, message", SCAN_ERRORS)
def test_scan_errors(call, exc, message, device):
    """A dim out of range and an integer logcumsumexp raise PyTorch's errors."""
    raises_on(device, call, torch.tensor([[1., 2.], [3., 4.]]), exc, message)


SORT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
               torch.int8, torch.uint8, torch.bool]
# CUDA's sort keys have kernels of their own for these dtypes; the others reuse them after
# a cast, so one layout of theirs is enough (the simulator runs a Python thread per CUDA
# thread). "long" rows are longer than the shared-memory chunk of CUDA's bitonic sort
# (`_backends.cuda.kernels.sorting.CHUNK`, 16 under the simulator): its global stages run.
FULL = (torch.float32, torch.float64, torch.int64)
SORT_SHAPES = [("2d", (3, 7)), ("long", (2, 37)), ("0d", ()), ("empty", (0, 3)), ("one", (4, 1))]


def _values(dtype, shape, seed=0):
    """Small values with many ties (and NaN, -0.0, inf for floats) of `shape`."""
    rng = np.random.default_rng(seed)
    if dtype is torch.bool:
        return rng.integers(0, 2, shape).astype(bool)
    arr = rng.integers(0 if dtype is torch.uint8 else -4, 5, shape).astype(np.float64)
    if dtype.is_floating_point and arr.size >= 4:
        flat = arr.reshape(-1)
        flat[[1, -1]] = NAN
        flat[2] = -0.0
        flat[3] = np.inf
    return arr


def _sort_inputs(dtype):
    """Tensors of `dtype`: every shape of SORT_SHAPES for FULL dtypes (2-d for the
    others), and a transposed one."""
    shapes = SORT_SHAPES if dtype in FULL else SORT_SHAPES[:1]
    inputs = [torch.tensor(_values(dtype, shape), dtype=dtype) for _, shape in shapes]
    arr = _values(dtype, (7, 5), seed=1)
    return inputs + [torch.tensor(np.ascontiguousarray(arr.T), dtype=dtype).t()]


def _dims(x):
    """The dims to sort along: first and last (a 0-d tensor's dim 0)."""
    return [0, -1] if x.dim() else [0]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=str)
def test_sort_argsort_msort_over_dtypes(dtype, device):
    """sort, argsort (both directions) and msort of every dtype and layout, exactly."""
    for x in _sort_inputs(dtype):
        for dim in _dims(x):
            for descending in (False, True):
                same_on(device, lambda t: tuple(t.sort(dim, descending=descending)), x, tol=0)
                same_on(device, lambda t: t.argsort(dim, descending=descending), x, tol=0)
        same_on(device, torch.msort, x, tol=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SORT_DTYPES[:-1], ids=str)  # PyTorch's topk does not take bool
def test_topk_over_dtypes(dtype, device):
    """topk of every dtype and layout, for k from 1 to the size (0 and size + 1, an
    error, on the 2-d input), largest and smallest."""
    for i, x in enumerate(_sort_inputs(dtype)):
        for dim in _dims(x):
            size = x.shape[dim] if x.dim() else 1
            for k in sorted({1, size // 2, size} | ({0, size + 1} if i == 0 else set())):
                if k == 0 and not x.dim():  # a known bug: the topk entry of the op database
                    continue
                for largest in (True, False):
                    same_on(device, lambda t: tuple(t.topk(k, dim, largest=largest)), x, tol=0,
                             raises=RuntimeError if k > size else None)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", SORT_DTYPES, ids=str)
def test_kthvalue_median_nanmedian_mode_over_dtypes(dtype, device):
    """kthvalue, median, nanmedian and mode of every dtype and layout, along a dim (with
    and without keepdim) and over all elements."""
    bool_error = NotImplementedError if dtype is torch.bool else None
    for x in _sort_inputs(dtype):
        for dim in _dims(x):
            size = x.shape[dim] if x.dim() else 1
            empty = IndexError if size == 0 else None
            for k in sorted({1, size}):
                if dtype is not torch.bool:
                    same_on(device, lambda t: tuple(t.kthvalue(k, dim)), x, tol=0, raises=empty)
            for keepdim in (False, True):
                same_on(device, lambda t: tuple(t.median(dim, keepdim=keepdim)), x, tol=0, raises=bool_error or empty)
                if dtype is not torch.bool:
                    same_on(device, lambda t: tuple(t.nanmedian(dim, keepdim=keepdim)), x, tol=0, raises=empty)
                same_on(device, lambda t: tuple(t.mode(dim, keepdim=keepdim)), x, tol=0, raises=empty)
        same_on(device, lambda t: t.median(), x, tol=0, raises=bool_error)
        if dtype is not torch.bool and (x.numel() or dtype.is_floating_point):  # (empty int: a known bug, in
            same_on(device, lambda t: t.nanmedian(), x, tol=0)                   # the op database's nanmedian)


def _on_an_empty_row(call):
    """`call` on an empty (2, 0) tensor of the operand's dtype and device."""
    return lambda x: call(x.new_empty(2, 0))


SELECTION_ERRORS = [
    (lambda x: x.topk(3), RuntimeError, "selected index k out of range"),
    (lambda x: x.kthvalue(0), RuntimeError, "kthvalue(): selected number k out of range for dimension 1"),
    (lambda x: x.kthvalue(3, 0), RuntimeError, "kthvalue(): selected number k out of range for dimension 0"),
    (_on_an_empty_row(lambda x: x.mode(1)), IndexError, "mode(): Expected reduction dim 1 to have non-zero size."),
    (_on_an_empty_row(lambda x: x.kthvalue(1, 1)), IndexError,
     "kthvalue(): Expected reduction dim 1 to have non-zero size."),
    (_on_an_empty_row(lambda x: x.nanmedian(1)), IndexError,
     "median(): Expected reduction dim 1 to have non-zero size."),
    (_on_an_empty_row(lambda x: x.median(1)), IndexError, "median(): Expected reduction dim 1 to have non-zero size."),
    (lambda x: x.sort(2), IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda x: x.bool().median(), NotImplementedError, "\"median_{dev}\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call, exc, message", SELECTION_ERRORS)
def test_selection_errors(call, exc, message, device):
    """k out of range, an empty reduced dim, a bad dim and a bool median raise PyTorch's errors."""
    raises_on(device, call, torch.tensor([[1., 2.], [3., 4.]]), exc, message)


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_sort_in_chunks_and_merge(device):
    """150 elements with ties and NaN: on CUDA padded to 256, sorted in chunks of 16 under
    the simulator and merged by global stages; ties keep their index order."""
    arr = np.random.default_rng(3).integers(0, 9, 150).astype(np.float32)
    arr[::37] = NAN
    x = torch.tensor(arr)
    same_on(device, lambda t: tuple(t.sort(descending=True)), x, tol=0)
    same_on(device, lambda t: tuple(t.median(0)), x, tol=0)
    same_on(device, lambda t: t.median(), x, tol=0)
    same_on(device, lambda t: tuple(t.nanmedian(0)), x, tol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_sort_out_and_stable_keyword(device):
    """sort(stable=True, out=(values, indices)) fills both outputs on `device`."""
    values, indices = (torch.empty(0, dtype=torch.int64, device=device) for _ in range(2))
    x = torch.tensor([[2, 1, 2], [0, 0, 1]], device=device)
    with device_only() if device != "cpu" else contextlib.nullcontext():
        torch.sort(x, stable=True, out=(values, indices))
    assert values.cpu().tolist() == [[1, 2, 2], [0, 0, 1]] and indices.cpu().tolist() == [[1, 0, 2], [0, 1, 2]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.float64], ids=str)
def test_topk_of_few_of_long_rows(dtype, device):
    """k <= 32 of rows longer than CUDA's shared chunk: its `topk_select` (per-thread
    candidate lists merged by thread 0) gives the stable sort's first k, ties by index."""
    x = torch.tensor(_values(dtype, (3, 50), seed=5), dtype=dtype)
    for k in (1, 7, 32):
        for largest in (True, False):
            same_on(device, lambda t: tuple(t.topk(k, 1, largest=largest)), x, tol=0)
            same_on(device, lambda t: tuple(t.t().topk(k, 0, largest=largest)), x, tol=0)
