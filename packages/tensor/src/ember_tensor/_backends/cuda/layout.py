"""Device array layouts: views with another shape, strides in elements, the flat buffer
under a view, and the reinterpretations kernels take. No kernels here; the backend's
family modules share these.
"""
import numpy as np

from ..plan import WORDS
from . import arrays, storage

__all__ = ["contiguous_strides", "element_strides", "view", "flat_buffer", "as_1d_if_0d", "movement", "lift",
           "column"]


def contiguous_strides(shape):
    """The element strides of a C-contiguous array of `shape`."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return strides[::-1]


def element_strides(arr):
    """`arr`'s strides counted in elements."""
    return [s // arr.dtype.itemsize for s in arr.strides]


def view(arr, shape):
    """The C-contiguous array `arr` viewed with another `shape` (of the same size)."""
    itemsize = arr.dtype.itemsize
    return arrays.restride(arr, tuple(shape), tuple(s * itemsize for s in contiguous_strides(shape)))


def flat_buffer(arr):
    """(1-d view of arr's memory from its first element, element strides)."""
    strides = element_strides(arr)
    if arr.size == 0:
        return storage.empty((0,), arr.dtype), strides
    span = 1 + sum((n - 1) * s for n, s in zip(arr.shape, strides))
    return arrays.restride(arr, (span,), (arr.dtype.itemsize,)), strides


def as_1d_if_0d(data):
    """A 0-d array as a 1-element 1-d view (index ops treat 0-d as 1-d); others as they are."""
    return data if data.ndim else arrays.restride(data, (1,), (data.dtype.itemsize,))


def movement(arr):
    """`arr` read as unsigned ints of its item size (kernels that only move elements); a
    1-d contiguous array of 16-byte items as twice as many uint64 words (`plan.WORDS`)."""
    size = arr.dtype.itemsize
    if size in arrays.UINT:
        return arrays.reinterpret(arr, arrays.UINT[size])
    words = WORDS[size]
    assert arr.ndim == 1 and (arr.shape[0] <= 1 or arr.strides[0] == size), "moved as words: 1-d contiguous arrays"
    return arrays.restride(arr, (arr.shape[0] * words,), (8,), dtype=np.uint64)


def lift(arr):
    """(N, C, *S) with 1 to 3 spatial dims as a 5-d view (size-1 dims in front): the one
    shape the window kernels take."""
    lead = 5 - arr.ndim
    return arrays.restride(arr, arr.shape[:2] + (1,) * lead + arr.shape[2:],
                           arr.strides[:2] + (0,) * lead + arr.strides[2:])


def column(coords, d):
    """Column d of an (n, ndim) int64 device array, as a contiguous 1-d copy."""
    n = coords.shape[0]
    return storage.astype(arrays.restride(coords, (n,), (coords.strides[0],), d * 8), np.int64)
