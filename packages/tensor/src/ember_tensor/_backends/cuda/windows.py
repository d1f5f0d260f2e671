"""CUDA sliding windows over (N, C, *spatial) device arrays: the launch shapes, views and
im2col/col2im launches that convolution (`conv`), pooling (`pooling`) and unfold/fold
(`sampling`) share, and the one-element index checks (`count_outside`, `read_count`). The
kernels are in `kernels.windows`. Nothing here reads device memory on the host, except
the one-element counts that the index checks read (`read_count`).

Arrays arrive in their compute dtype (the op layer casts float16/bfloat16 to float32 on
the device). Spatial dims are lifted to three (size-1 dims in front, stride 0) so that
one compiled kernel per dtype serves 1-d, 2-d and 3-d problems.

Imported only on a CUDA code path: it loads numba.cuda.
"""
import math

import numpy as np

from . import launch, layout, reduction, storage
from .kernels import windows as K
from .kernels.loops import SIMULATOR

__all__ = ["window_counts", "count_outside", "index_extreme", "read_count"]


# --- layout helpers -----------------------------------------------------------------------

def pad_to_three(values, fill):
    return (fill,) * (3 - len(values)) + tuple(values)


def typed_zero(arr):
    """A typed zero: the accumulator type of a kernel summing `arr`'s elements."""
    return arr.dtype.type(0)


def launch_rows(kernel, rows, length, *args):
    """Run a two-level kernel: blocks along x stride over `rows`, the threads of the
    blocks along y over `length` elements of each.

    Blocks are sized to the row (a multiple of 32 up to 128 threads), so short rows
    idle few threads; when there are fewer rows than the GPU has room for blocks, long
    rows are split over several blocks along y. The simulator (a Python thread per CUDA
    thread) gets at most 2 x 2 blocks of 4 threads, still exercising every stride.
    """
    if rows == 0 or length == 0:
        return
    if SIMULATOR:
        launch.configured(kernel, (min(rows, 2), 1 if length <= 4 else 2), min(length, 4), 0)(*args)
        return
    block = min(128, 32 * ((length + 31) // 32))
    row_blocks = min(rows, launch.max_blocks())
    segments = min(-(-length // block), max(1, launch.max_blocks() // row_blocks), 65535)
    launch.launch_grid(kernel, (row_blocks, segments), block, *args)


def window_counts(size, kernel, stride, padding, dilation):
    """Output positions of a window along each dim (no ceil_mode: convolution, unfold)."""
    return tuple((s + 2 * p - d * (k - 1) - 1) // st + 1
                 for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))


def _geometry_args(kernel, stride, padding, dilation, out):
    return (pad_to_three(kernel, 1) + pad_to_three(stride, 1) + pad_to_three(padding, 0) + pad_to_three(dilation, 1)
            + pad_to_three(out, 1))


# --- im2col / col2im -----------------------------------------------------------------------

def im2col_into(x, kernel, stride, padding, dilation, out, cols):
    """cols (N, C*K, L), any strides: the columns of x (N, C, *S)."""
    launch_rows(K.im2col, cols.shape[0] * cols.shape[1], cols.shape[2], layout.lift(x),
                 *_geometry_args(kernel, stride, padding, dilation, out), cols)


def col2im(cols, n, c, size, kernel, stride, padding, dilation, out):
    """(N, C, *size): the sum of columns (N, C*K, L) back into their positions."""
    result = storage.empty((n, c) + tuple(size), cols.dtype)
    launch_rows(K.col2im, n * c, math.prod(size), cols, *_geometry_args(kernel, stride, padding, dilation, out),
                 typed_zero(cols), layout.lift(result))
    return result


def _flat_int64(index):
    flat = layout.view(storage.contiguous(index), (index.size,))
    return flat if flat.dtype == np.int64 else storage.astype(flat, np.int64)


def count_outside(index, low, high):
    """A one-element int64 device array: how many elements of integer array `index` lie
    outside [low, high). Read it back with `read_count` (one element: the
    synchronisation PyTorch's checks make too)."""
    flat = _flat_int64(index)
    outside = storage.zeros((1,), np.int64)
    launch.grid_stride(K.count_outside, flat.size, flat, int(low), int(high), outside)
    return outside


def index_extreme(index, kind):
    """The max ("amax") or min ("amin") of non-empty integer array `index`, a 0-d int64
    device array (the backend's tree reduction)."""
    return reduction.reduce(kind, _flat_int64(index), (0,), np.int64)


def read_count(arr):
    """The value of a one-element device array, read on the host."""
    return int(storage.to_numpy(arr).reshape(-1)[0])
