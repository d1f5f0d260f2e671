"""Searching and counting on CUDA tensors (searchsorted, bucketize, bincount, histc, unique,
unique_consecutive) equal the CPU's results, computed on the device.

searchsorted and bucketize run inside `device_only()`; the ops whose output size (or
histc's range) depends on the data may read single numbers back
(`device_only(allow_scalar_reads=True)`), as PyTorch's CUDA kernels do, and nothing more.
"""
import numpy as np
import pytest

import ember_tensor as et
from test_cuda_sort import _check

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

NAN = float("nan")
SEQ_DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int8, et.uint8]


def _pair(cpu):
    return cpu, cpu.cuda()


def _transposed(arr, dtype):
    host = et.tensor(np.ascontiguousarray(np.asarray(arr).T), dtype=dtype)
    return host.t(), host.cuda().t()


@pytest.mark.parametrize("dtype", SEQ_DTYPES, ids=str)
def test_searchsorted_and_bucketize(dtype):
    seq = et.tensor([1, 3, 3, 5, 7], dtype=dtype)
    values = [et.tensor([[3, 6, 9], [0, 1, 7]], dtype=dtype), et.tensor(3, dtype=dtype),
              et.tensor([], dtype=dtype), _transposed([[3, 0], [6, 1], [9, 7]], dtype)[0]]
    if dtype.is_floating_point:
        values.append(et.tensor([NAN, -0.0, 2.5, float("inf")], dtype=dtype))
    for v in values:
        for right in (False, True):
            for out_int32 in (False, True):
                _check(lambda x: et.searchsorted(seq.to(x.device), x, right=right, out_int32=out_int32), *_pair(v))
                _check(lambda x: et.bucketize(x, seq.to(x.device), right=right), *_pair(v))
    batched = _transposed([[1, 2], [3, 4], [5, 6]], dtype)   # rows [1, 3, 5] and [2, 4, 6]
    queries = et.tensor([[3, 4], [6, 1]], dtype=dtype)
    _check(lambda s: et.searchsorted(s, queries.to(s.device), side="right"), *batched)
    _check(lambda s: et.searchsorted(s, 4), *_pair(seq))
    unsorted = et.tensor([5, 1, 3], dtype=dtype)
    _check(lambda s: et.searchsorted(s, et.tensor([2, 4], dtype=dtype).to(s.device),
                                     sorter=et.tensor([1, 2, 0]).to(s.device)), *_pair(unsorted),
           allow_scalar_reads=True)  # the sorter's range check reads its min and max


def test_searchsorted_errors_and_out():
    seq = et.tensor([[1, 3]])
    _check(lambda s: et.searchsorted(s, et.tensor([[1], [2]]).to(s.device)), *_pair(seq))
    _check(lambda s: et.searchsorted(s, et.tensor([1]).to(s.device), side="middle"), *_pair(seq))
    _check(lambda s: et.bucketize(et.tensor([1]).to(s.device), s), *_pair(seq))
    _check(lambda s: et.searchsorted(s, et.tensor([1, 4]).to(s.device)), *_pair(et.tensor(3)))
    _check(lambda s: et.searchsorted(s, et.tensor([2]).to(s.device), sorter=et.tensor([0]).to(s.device)),
           *_pair(et.tensor([1, 3])))
    for sorter in (et.tensor([0, 5]), et.tensor([-1, 0]), et.tensor([0, 1], dtype=et.int32)):
        _check(lambda s: et.searchsorted(s, et.tensor([2]).to(s.device), sorter=sorter.to(s.device)),
               *_pair(et.tensor([1, 3])), allow_scalar_reads=True)
    for call in (lambda: et.searchsorted(et.tensor([1, 3]).cuda(), et.tensor([2])),
                 lambda: et.searchsorted(et.tensor([1, 3]).cuda(), et.tensor([2]).cuda(), sorter=et.tensor([0, 1])),
                 lambda: et.bincount(et.tensor([1, 3]).cuda(), et.tensor([1., 2.]))):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            call()
    out = et.empty(0, dtype=et.int64).cuda()
    _check(lambda s: et.searchsorted(s, et.tensor([2, 4]).to(s.device), out=out if s.is_cuda else None),
           *_pair(et.tensor([1, 3, 5])))
    assert out.cpu().tolist() == [1, 2]


@pytest.mark.parametrize("dtype", [et.int64, et.int32, et.int16, et.int8, et.uint8], ids=str)
def test_bincount(dtype):
    values = [et.tensor([0, 1, 1, 3, 7, 1], dtype=dtype), et.tensor([], dtype=dtype),
              et.tensor([0, 9, 2, 2, 5, 1], dtype=dtype)[::2]]
    for v in values:
        _check(lambda x: et.bincount(x), *_pair(v), allow_scalar_reads=True)
        _check(lambda x: et.bincount(x, minlength=10), *_pair(v), allow_scalar_reads=True)
        for wdtype in (et.float32, et.float64, et.int64):
            w = et.arange(v.numel(), dtype=wdtype) * 0.5 if wdtype.is_floating_point else et.arange(v.numel())
            _check(lambda x: et.bincount(x, w.to(x.device), minlength=3), *_pair(v), allow_scalar_reads=True)


def test_bincount_errors():
    for v, kwargs in [(et.tensor([1, -1]), {}), (et.tensor([[1]]), {}), (et.tensor([1.]), {}),
                      (et.tensor([1]), {"minlength": -1}), (et.tensor([1, 2]), {"weights": et.ones(3)})]:
        def call(x, kwargs=kwargs):
            kwargs = {k: (w.to(x.device) if isinstance(w, et.Tensor) else w) for k, w in kwargs.items()}
            return et.bincount(x, **kwargs)
        _check(call, *_pair(v), allow_scalar_reads=True)


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.bfloat16], ids=str)
def test_histc(dtype):
    x = et.tensor([[1., 2., 1.5], [4., -1., 3.]], dtype=dtype)
    for t in (x, x.t(), x[0, 0], x[:0]):
        for kwargs in ({"bins": 4, "min": 0, "max": 3}, {"bins": 5}, {"bins": 1, "min": 2, "max": 2}):
            _check(lambda y: et.histc(y, **kwargs), *_pair(t), allow_scalar_reads=True)
    with_nan = et.tensor([1., NAN, 2.], dtype=dtype)
    _check(lambda y: et.histc(y, bins=3, min=0, max=3), *_pair(with_nan))
    for bad in (with_nan, et.tensor([1., float("inf")], dtype=dtype)):
        _check(lambda y: et.histc(y, bins=3), *_pair(bad), allow_scalar_reads=True)
    for kwargs in ({"bins": 0}, {"bins": 3, "min": 3, "max": 1}, {"bins": 3, "min": 0, "max": float("inf")}):
        _check(lambda y: et.histc(y, **kwargs), *_pair(x))
    _check(lambda y: et.histc(y.long()), *_pair(x))


UNIQUE = {
    "1d": np.array([3, 1, 2, 1, 3, 2, 2, 0, 5, 1, 1, 1, 4, 3, 3, 9, 9, 0, 2]),   # > 16: global stages
    "2d": np.array([[2., 1., -0.0], [2., 0., 1.]]),
    "0d": np.array(7),
    "empty": np.zeros((0, 2), dtype=np.int64),
}


@pytest.mark.parametrize("dtype", [et.int64, et.float32, et.float64, et.float16, et.bfloat16, et.int8,
                                   et.uint8, et.bool], ids=str)
@pytest.mark.parametrize("name", list(UNIQUE))
def test_unique_and_unique_consecutive(name, dtype):
    cpu = et.tensor(UNIQUE[name], dtype=dtype)
    for x in (cpu, cpu.t()) if cpu.dim() == 2 else (cpu,):
        for fn in (et.unique, et.unique_consecutive):
            _check(lambda t: fn(t, return_inverse=True, return_counts=True), *_pair(x), allow_scalar_reads=True)
            _check(lambda t: fn(t), *_pair(x), allow_scalar_reads=True)
            for dim in range(x.dim()):
                _check(lambda t: fn(t, dim=dim, return_inverse=True, return_counts=True), *_pair(x),
                       allow_scalar_reads=True)


def test_unique_slices_and_nan_runs():
    rows = et.tensor([[1, 2], [1, 2], [0, 1], [1, 2], [0, 0], [0, 1]])
    for dim in (0, 1, -1):
        for fn in (et.unique, et.unique_consecutive):
            _check(lambda t: fn(t, dim=dim, return_inverse=True, return_counts=True), *_pair(rows),
                   allow_scalar_reads=True)
    nan_runs = et.tensor([NAN, NAN, 1., 1., NAN])
    _check(lambda t: et.unique_consecutive(t, return_inverse=True, return_counts=True), *_pair(nan_runs),
           allow_scalar_reads=True)
    _check(lambda t: et.unique(t, return_inverse=True, return_counts=True), *_pair(nan_runs),
           allow_scalar_reads=True)
