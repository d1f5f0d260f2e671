"""CUDA scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

The device twin of `_ops/scans.py`'s host code: the lines along `dim` as a contiguous
(rows, n) buffer in the accumulation type (float64 for floats, int64 for integers, as
the CPU accumulates; the value's own type for cummax/cummin), a chunked scan
(`_backends.cuda.kernels.scans`), and the result put back with the line axis at `dim`.
The op layer calls these for CUDA tensors after its own argument checks.
"""
import numpy as np

from . import launch, storage
from ... import _dtype as D
from .sorting import from_lines, lines, on_device_of
from .kernels import scans as K
from ..._tensor import Tensor

__all__ = ["accumulate", "extreme", "logcumsumexp"]

# Elements a chunk gets at least: rows shorter than two chunks run one thread per row.
# Tiny under the simulator so that the three-pass path runs in the tests.
_MIN_CHUNK = 4 if launch.SIMULATOR else 64
_busy_threads = None


def _chunking(n_rows, n):
    """(nchunks, size): how each row is cut so that enough threads have work."""
    global _busy_threads
    if _busy_threads is None:
        if launch.SIMULATOR:
            _busy_threads = 8
        else:
            from numba import cuda
            _busy_threads = 2048 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    if n_rows >= _busy_threads or n < 2 * _MIN_CHUNK:
        return 1, max(n, 1)
    nchunks = min(n // _MIN_CHUNK, -(-_busy_threads // n_rows))
    size = -(-n // nchunks)
    return -(-n // size), size


def _result(buf, input, dim):
    return from_lines(buf, tuple(input._data.shape), dim, input._data.shape[dim] if input._data.ndim else 1)


def accumulate(input, dim, is_prod, result_dtype):
    """Running sums (products) of `input` along `dim` as a `result_dtype` tensor."""
    with on_device_of(input):
        floating = result_dtype.category == D._FLOAT
        acc = np.dtype(np.float64 if floating else np.int64)
        rows, n_rows, n = lines(input._data, dim, acc)
        out = storage.empty((n_rows * n,), acc)
        if n_rows * n:
            identity = acc.type(1 if is_prod else 0)
            nchunks, size = _chunking(n_rows, n)
            carries = storage.empty((n_rows * nchunks,), acc)
            if nchunks > 1:
                launch.grid_stride(K.acc_totals, carries.size, rows, n, nchunks, size, is_prod, identity, carries)
                launch.grid_stride(K.acc_carries, n_rows, carries, nchunks, is_prod, identity)
            else:
                storage.fill_(carries, identity)
            launch.grid_stride(K.acc_scan, carries.size, rows, n, nchunks, size, is_prod, carries, out)
        return _cast(_result(out, input, dim), result_dtype, input._device)


def _cast(data, dtype, device):
    """`data` as ember `dtype` (through float32 for half types, as the CPU rounds)."""
    if dtype in (D.float16, D.bfloat16) and data.dtype != np.float32:
        data = storage.astype(data, np.float32)
    if data.dtype != dtype.np:
        data = storage.astype(data, dtype.np)
    return Tensor._wrap(data, dtype, device)


def extreme(input, dim, take_max):
    """(values, indices) tensors: the running max (min) along `dim` and where it was
    last reached."""
    with on_device_of(input):
        work = np.dtype(np.float32) if input._dtype in (D.float16, D.bfloat16) else \
            np.dtype(np.uint8) if input._dtype is D.bool else np.dtype(input._dtype.np)
        rows, n_rows, n = lines(input._data, dim, work)
        values = storage.empty((n_rows * n,), work)
        indices = storage.empty((n_rows * n,), np.int64)
        if n_rows * n:
            nchunks, size = _chunking(n_rows, n)
            best_of = storage.empty((n_rows * nchunks,), work)
            at_of = storage.empty((n_rows * nchunks,), np.int64)
            if nchunks > 1:
                launch.grid_stride(K.extreme_totals, at_of.size, rows, n, nchunks, size, take_max, best_of, at_of)
                launch.grid_stride(K.extreme_carries, n_rows, best_of, at_of, nchunks, take_max)
            else:
                storage.fill_(at_of, -1)
            launch.grid_stride(K.extreme_scan, at_of.size, rows, n, nchunks, size, take_max, best_of, at_of,
                          values, indices)
        return (_cast(_result(values, input, dim), input._dtype, input._device),
                Tensor._wrap(_result(indices, input, dim), D.int64, input._device))


def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along `dim`, in float64, as a tensor of input's dtype."""
    with on_device_of(input):
        rows, n_rows, n = lines(input._data, dim, np.float64)
        out = storage.empty((n_rows * n,), np.float64)
        if n_rows * n:
            nchunks, size = _chunking(n_rows, n)
            carries = storage.empty((n_rows * nchunks,), np.float64)
            if nchunks > 1:
                launch.grid_stride(K.lse_totals, carries.size, rows, n, nchunks, size, carries)
                launch.grid_stride(K.lse_carries, n_rows, carries, nchunks)
            else:
                storage.fill_(carries, -np.inf)
            launch.grid_stride(K.lse_scan, carries.size, rows, n, nchunks, size, carries, out)
        return _cast(_result(out, input, dim), input._dtype, input._device)
