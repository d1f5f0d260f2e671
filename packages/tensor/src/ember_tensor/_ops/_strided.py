"""Bridges between tensors and the index/sort/scan kernels of `_kernels/cpu_index`.

The kernels run on host NumPy arrays, for CPU tensors: every op that uses `host` routes
CUDA tensors to its device kernels first (index ops to `_backends.cuda.indexing`/`_backends.cuda.scatter`,
sorting to `_backends.cuda.sorting`, scans to `_backends.cuda.scans`, unique/searchsorted/bincount/histc to
`_backends.cuda.counting`), so `host` never copies a CUDA tensor's values here; `wrap` may still
upload a small host constant (an empty nanmedian's NaN) onto the input's device.
`first_out_of_range` is the bounds check both sides share.
"""
import numpy as np

from .. import _backends
from .._tensor import Tensor

__all__ = ["c_order", "host", "flat_buffer", "wrap", "write_back", "rows_of", "from_rows", "first_out_of_range"]


def c_order(arr):
    """`arr` if C-contiguous, else a C-contiguous copy (0-d stays 0-d, unlike
    np.ascontiguousarray)."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def host(t):
    """`t`'s values as a NumPy array (the tensor's own memory on the CPU)."""
    return t._host_numpy()


def flat_buffer(arr):
    """(buf, strides): a 1-d view over `arr`'s memory from its first element, element strides.

    Writes through `buf` land in `arr`. Strides are never negative in ember (no negative
    slicing steps), so the span is easy to compute.
    """
    itemsize = arr.itemsize
    strides = np.array([s // itemsize for s in arr.strides], dtype=np.int64)
    if arr.size == 0:
        return np.empty(0, arr.dtype), strides
    span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, strides.tolist()))
    return np.lib.stride_tricks.as_strided(arr, (span,), (itemsize,)), strides


def wrap(arr, dtype, device):
    """A tensor on `device` holding host array `arr` (taken over without a copy on the CPU)."""
    arr = c_order(np.asarray(arr))
    return Tensor._wrap(_backends.get(device).storage.adopt(arr), dtype, device)


def write_back(t, arr):
    """After changing `arr` = host(t): make the change visible in `t` and bump its version."""
    storage = _backends.get(t._device).storage
    data = storage.adopt(c_order(arr))
    if data is not t._data:  # on a device: copy the host result back (the CPU changed t itself)
        storage.copy_(t._data, data)
    t._bump_version()
    return t


def first_out_of_range(arr, lo, hi):
    """The first value (row-major) of index array `arr` outside [lo, hi), or None.

    `arr` is a host array, or a device array (checked on the device; one value is read).
    """
    if not isinstance(arr, np.ndarray):
        from .._backends.cuda import indexing as _cuda_index
        return _cuda_index.first_out_of_range(arr, lo, hi)
    bad = (arr >= hi) | (arr < lo)
    return int(arr[bad][0]) if bad.any() else None


def rows_of(arr, dim, dtype=None):
    """A C-contiguous (rows, n) array of the lines of `arr` along `dim` (a copy if needed)."""
    # np.moveaxis costs ~10 us of argument checking: skip it when `dim` is already last.
    moved = arr if dim in (-1, arr.ndim - 1) else np.moveaxis(arr, dim, -1)
    n = moved.shape[-1] if moved.ndim else 1
    count = int(np.prod(moved.shape[:-1])) if moved.ndim else 1  # -1 cannot be inferred when n == 0
    rows = np.ascontiguousarray(moved, dtype=dtype).reshape(count, n)
    return rows


def from_rows(rows, shape, dim):
    """Inverse of `rows_of`: (rows, n) back to `shape` with the line axis at `dim`, contiguous."""
    if not shape:
        return c_order(rows.reshape(()))
    if dim in (-1, len(shape) - 1):
        return c_order(rows.reshape(shape))
    moved_shape = list(shape)
    n = moved_shape.pop(dim)
    moved_shape.append(rows.shape[-1] if rows.ndim == 2 else n)
    return c_order(np.moveaxis(rows.reshape(moved_shape), -1, dim))
