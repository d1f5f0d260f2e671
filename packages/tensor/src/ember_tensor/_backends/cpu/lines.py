"""The lines of a NumPy array along one dim, as the rows of a C-contiguous (rows, n) array.

Sorting, selection, scans and counting work on these rows and put their results back
with the line axis at `dim` (`from_rows`): one kernel per dtype serves every rank and
layout. The CUDA backend's twin is `_backends.cuda.sorting.lines`.
"""
import numpy as np

__all__ = ["c_order", "rows_of", "from_rows", "flat_buffer"]


def c_order(arr):
    """`arr` if C-contiguous, else a C-contiguous copy (0-d stays 0-d, unlike
    np.ascontiguousarray)."""
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def rows_of(arr, dim, dtype=None):
    """A C-contiguous (rows, n) array of the lines of `arr` along `dim` (a copy if needed);
    a 0-d array is one line of one element."""
    if arr.ndim == 0:
        return np.ascontiguousarray(arr.reshape(1, 1), dtype=dtype)
    # np.moveaxis costs ~10 us of argument checking: skip it when `dim` is already last.
    moved = arr if dim in (-1, arr.ndim - 1) else np.moveaxis(arr, dim, -1)
    n = moved.shape[-1]
    count = int(np.prod(moved.shape[:-1]))  # -1 cannot be inferred when n == 0
    return np.ascontiguousarray(moved, dtype=dtype).reshape(count, n)


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
