"""CUDA scans along a dim: cumsum, cumprod, cummax, cummin, logcumsumexp.

The same functions as `_backends.cpu.scans`, with the same results, over device arrays:
the lines along `dim` as a contiguous (rows, n) buffer in the accumulation type (float64
for floats, int64 for integers, as the CPU accumulates; the value's own type for
cummax/cummin), a chunked scan (`kernels.scans`), and the result put back with the line
axis at `dim`.
"""
import numpy as np

from . import arrays, launch, storage
from .sorting import from_lines, lines
from .kernels import scans as K

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


_LOW = (np.dtype(np.float16), arrays.BF16)


def _result(buf, a, dim):
    return from_lines(buf, tuple(a.shape), dim, a.shape[dim] if a.ndim else 1)


def accumulate(a, dim, is_prod, result_dtype):
    """Running sums (products when `is_prod`) of `a` along `dim`, as a `result_dtype` array."""
    result_dtype = np.dtype(result_dtype)
    floating = result_dtype.kind == "f" or result_dtype in _LOW
    acc = np.dtype(np.complex128 if result_dtype.kind == "c" else np.float64 if floating else np.int64)
    rows, n_rows, n = lines(a, dim, acc)
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
    return _cast(_result(out, a, dim), result_dtype)


def _cast(data, dtype):
    """`data` as `dtype` (through float32 for half types, as the CPU rounds)."""
    if dtype in _LOW and data.dtype != np.float32:
        data = storage.astype(data, np.float32)
    if data.dtype != dtype:
        data = storage.astype(data, dtype)
    return data


def extreme(a, dim, take_max):
    """(values, int64 indices): the running max (min) of `a` along `dim` and where it was
    last reached."""
    work = np.dtype(np.float32) if a.dtype in _LOW else \
        np.dtype(np.uint8) if a.dtype == np.bool_ else a.dtype
    rows, n_rows, n = lines(a, dim, work)
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
    return _cast(_result(values, a, dim), a.dtype), _result(indices, a, dim)


def logcumsumexp(a, dim):
    """log(cumsum(exp(a))) along `dim`, computed in float64 (complex128 for complex `a`:
    a thread a row), in `a`'s dtype."""
    if a.dtype.kind == "c":
        rows, n_rows, n = lines(a, dim, np.complex128)
        out = storage.empty((n_rows * n,), np.complex128)
        launch.grid_stride(K.lse_rows_complex, n_rows if n else 0, rows, n, out)
        return _cast(_result(out, a, dim), a.dtype)
    rows, n_rows, n = lines(a, dim, np.float64)
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
    return _cast(_result(out, a, dim), a.dtype)
