"""Bridges between tensors and the index/sort/scan kernels of `_kernels/cpu_index`.

The kernels run on host NumPy arrays: sort/scan ops that use `host` make a round trip
through the host for a CUDA tensor, and their results are wrapped back onto the input's
device here. The index ops (indexing, index_*, gather/scatter, take/put, masked_*,
nonzero, flip) route CUDA tensors to the device kernels of `_cuda_index` instead;
`first_out_of_range` is the bounds check both sides share.
"""
import numpy as np

from .. import _backends
from .. import _dtype as D
from .._tensor import Tensor

__all__ = ["c_order", "host", "flat_buffer", "wrap", "write_back", "check_index_tensor", "dims_to_last",
           "rows_of", "from_rows", "empty_host", "as_int64", "first_out_of_range"]


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
    if device.type == "cpu":
        return Tensor._wrap(arr, dtype, device)
    return Tensor._wrap(_backends.get(device).from_numpy(arr, device), dtype, device)


def write_back(t, arr):
    """After changing `arr` = host(t): make the change visible in `t` and bump its version."""
    if t._device.type != "cpu":
        backend = _backends.get(t._device)
        backend.copy_(t._data, backend.from_numpy(c_order(arr), t._device))
    t._bump_version()
    return t


def first_out_of_range(arr, lo, hi):
    """The first value (row-major) of index array `arr` outside [lo, hi), or None.

    `arr` is a host array, or a device array (checked on the device; one value is read).
    """
    if not isinstance(arr, np.ndarray):
        from .. import _cuda_index
        return _cuda_index.first_out_of_range(arr, lo, hi)
    bad = (arr >= hi) | (arr < lo)
    return int(arr[bad][0]) if bad.any() else None


def empty_host(shape, dtype):
    """A new C-contiguous host array for a result of ember dtype `dtype`."""
    return np.empty(tuple(shape), dtype.np)


def check_index_tensor(index, op_name, arg="index"):
    """PyTorch's error for an index tensor that is not int64."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op_name}(): argument '{arg}' must be Tensor, not {type(index).__name__}")
    if index._dtype is not D.int64:
        raise RuntimeError(f"{op_name}(): Expected dtype int64 for {arg}")


def as_int64(arr):
    """An int64 copy-if-needed of a host integer array."""
    return arr.astype(np.int64, copy=False)


def dims_to_last(arr, dim):
    """`arr` with axis `dim` moved last."""
    return np.moveaxis(arr, dim, -1)


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
