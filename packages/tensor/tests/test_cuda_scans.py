"""Scans on CUDA tensors (cumsum, cumprod, cummax, cummin, logcumsumexp and their in-place
and out= forms) equal the CPU's, computed on the device: every CUDA call runs inside
`device_only()`.

Rows long enough to be cut into chunks (three-pass scan) and short ones (a thread per
row) both run, over every dtype, 0-d, empty and non-contiguous inputs, NaN and inf.
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only
from test_cuda_sort import _check as _check_exact

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

NAN, INF = float("nan"), float("inf")
DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int8, et.uint8, et.bool]
TOL = {et.float16: 2e-3, et.bfloat16: 2e-2, et.float32: 1e-6, et.float64: 1e-12}


def _cases(dtype):
    """(name, cpu, cuda): 2-d, one long row (chunked), 0-d, empty, transposed."""
    rng = np.random.default_rng(0)
    cases = []
    for name, shape in [("2d", (3, 5)), ("long", (1, 41)), ("0d", ()), ("empty", (2, 0))]:
        if dtype is et.bool:
            arr = rng.integers(0, 2, shape).astype(bool)
        elif dtype.is_floating_point:
            arr = rng.uniform(-1.5, 1.5, shape)
        else:
            arr = rng.integers(0 if dtype is et.uint8 else -3, 4, shape)
        if dtype.is_floating_point and name == "long":
            arr[0, [7, 30]] = [NAN, INF]
        cases.append((name, et.tensor(arr, dtype=dtype), et.tensor(arr, dtype=dtype).cuda()))
    arr = np.ascontiguousarray(rng.integers(0, 3, (6, 4)).T)
    host = et.tensor(arr, dtype=dtype)
    cases.append(("transposed", host.t(), host.cuda().t()))
    return cases


def _close(fn, cpu, cuda):
    """fn on CPU and (inside device_only) on CUDA agree within the dtype's tolerance."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(cpu)
        with device_only():
            got = fn(cuda)
    assert got.device.type == "cuda" and got.dtype == expected.dtype and got.shape == expected.shape
    tol = TOL.get(expected.dtype, 0)
    np.testing.assert_allclose(got.cpu().double().numpy(), expected.double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cumsum_cumprod(dtype):
    for name, cpu, cuda in _cases(dtype):
        for dim in (0, -1):
            _close(lambda x: x.cumsum(dim), cpu, cuda)
            _close(lambda x: et.cumprod(x, dim), cpu, cuda)
            _close(lambda x: x.cumsum(dim, dtype=et.float64), cpu, cuda)
            _close(lambda x: x.cumsum(dim, dtype=et.int32), cpu, cuda)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_cummax_cummin_exact(dtype):
    for name, cpu, cuda in _cases(dtype):
        for dim in (0, -1):
            _check_exact(lambda x: tuple(x.cummax(dim)), cpu, cuda)
            _check_exact(lambda x: tuple(et.cummin(x, dim)), cpu, cuda)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.bfloat16], ids=str)
def test_logcumsumexp(dtype):
    for name, cpu, cuda in _cases(dtype):
        for dim in (0, -1):
            _close(lambda x: et.logcumsumexp(x, dim), cpu, cuda)
    edge = et.tensor([[-INF, -INF, 0., INF, 1.], [NAN, 0., -INF, 2., 3.]], dtype=dtype)
    _close(lambda x: et.logcumsumexp(x, 1), edge, edge.cuda())


def test_cummax_ties_and_nan_across_chunks():
    # equal values move the index forward; a NaN sticks; both across chunk borders
    arr = np.array([1., 3., 3., 2., 3., 0., 3., 3., 1., 1., NAN, 5., 1., 2., 9., 0.] * 2)
    cpu = et.tensor(arr)
    for take in (lambda x: tuple(x.cummax(0)), lambda x: tuple(x.cummin(0))):
        _check_exact(take, cpu, cpu.cuda())
        _check_exact(take, cpu[:10], cpu.cuda()[:10])


def test_out_inplace_and_errors():
    cpu = et.tensor([[1., 2.], [3., 4.]])
    cuda = cpu.cuda()
    out = et.empty(0).cuda()
    with device_only():
        et.cumsum(cuda, 1, out=out)
        inplace = cuda.clone().cumprod_(0)
        values, indices = et.empty(0).cuda(), et.empty(0, dtype=et.int64).cuda()
        et.cummax(cuda, 0, out=(values, indices))
    assert out.cpu().tolist() == et.cumsum(cpu, 1).tolist()
    assert inplace.cpu().tolist() == cpu.cumprod(0).tolist()
    assert values.cpu().tolist() == cpu.cummax(0).values.tolist()
    for fn in (lambda x: x.cumsum(2), lambda x: x.long().logcumsumexp(0), lambda x: x.cummax(-3)):
        _check_exact(fn, cpu, cuda)
