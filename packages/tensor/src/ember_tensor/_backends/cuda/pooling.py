"""CUDA pooling: max pooling with indices, average pooling, adaptive max pooling, and the
scatter/gather pair that their backward passes and max_unpool share.

The same functions and results as `_backends.cpu.pooling` (the same tie and NaN rules,
PyTorch's divisor as a formula), one thread per output element; max pooling's backward
is the one scatter (atomic adds), average pooling's a gather.
"""
import math

import numpy as np

from . import launch, layout, storage
from .kernels import windows as K
from .windows import launch_rows, pad_to_three, typed_zero, count_outside, index_extreme, read_count

__all__ = ["max_pool", "max_pool_backward", "take_along_planes", "max_unpool", "invalid_index_max", "avg_pool",
           "avg_pool_backward", "adaptive_max_pool"]


def _lowest(np_dtype):
    kind = np.dtype(np_dtype).kind
    if kind == "f":
        return np.dtype(np_dtype).type(-np.inf)
    if kind == "b":
        return np.bool_(False)
    return np.dtype(np_dtype).type(np.iinfo(np_dtype).min)


def max_pool(x, kernel, stride, padding, dilation, out):
    """(values, int64 indices) of max pooling x (N, C, *S) to spatial `out`."""
    shape = tuple(x.shape[:2]) + tuple(out)
    values, indices = storage.empty(shape, x.dtype), storage.empty(shape, np.int64)
    args = pad_to_three(kernel, 1) + pad_to_three(stride, 1) + pad_to_three(padding, 0) + pad_to_three(dilation, 1)
    launch_rows(K.max_pool, shape[0] * shape[1], math.prod(out), layout.lift(x), *args, _lowest(x.dtype),
                 layout.lift(values), layout.lift(indices))
    return values, indices


def avg_pool(x, kernel, stride, padding, out, count_include_pad, divisor_override):
    """Average pooling of x (N, C, *S) to spatial `out` (PyTorch's divisor rules)."""
    result = storage.empty(tuple(x.shape[:2]) + tuple(out), x.dtype)
    args = pad_to_three(kernel, 1) + pad_to_three(stride, 1) + pad_to_three(padding, 0)
    launch_rows(K.avg_pool, x.shape[0] * x.shape[1], math.prod(out), layout.lift(x), *args, bool(count_include_pad),
                 int(divisor_override or 0), typed_zero(x), layout.lift(result))
    return result


def avg_pool_backward(g, input_size, kernel, stride, padding, count_include_pad, divisor_override):
    """Gradient of `avg_pool` w.r.t. an input of shape `input_size` (a gather)."""
    result = storage.empty(tuple(input_size), g.dtype)
    args = pad_to_three(kernel, 1) + pad_to_three(stride, 1) + pad_to_three(padding, 0)
    launch_rows(K.avg_pool_backward, g.shape[0] * g.shape[1], math.prod(input_size[2:]), layout.lift(g), *args,
                 bool(count_include_pad), int(divisor_override or 0), typed_zero(g), layout.lift(result))
    return result


def adaptive_max_pool(x, out):
    """(values, int64 indices) of adaptive max pooling x (N, C, *S) to spatial `out`."""
    shape = tuple(x.shape[:2]) + tuple(out)
    values, indices = storage.empty(shape, x.dtype), storage.empty(shape, np.int64)
    launch_rows(K.adaptive_max_pool, shape[0] * shape[1], math.prod(out), layout.lift(x), layout.lift(values),
                 layout.lift(indices))
    return values, indices


def _planes(arr):
    """(N, C, *S) as a contiguous (N*C, prod(S)) array."""
    rows = arr.shape[0] * arr.shape[1]
    return layout.view(storage.contiguous(arr), (rows, arr.size // rows if rows else math.prod(arr.shape[2:])))


def max_pool_backward(g, index, spatial):
    """(N, C, *spatial): g (N, C, *) summed into zero planes at `index` (atomic adds)."""
    n, c = g.shape[:2]
    plane = math.prod(spatial)
    out = storage.zeros((n * c * plane,), g.dtype)
    launch.grid_stride(K.scatter_add_planes, index.size, _planes(g), _planes(index), plane, out)
    return layout.view(out, (n, c) + tuple(spatial))


def take_along_planes(x, index):
    """out[n, c, j...] = x[n, c].flatten()[index[n, c, j...]] (the index's shape)."""
    out = storage.empty(tuple(index.shape), x.dtype)
    launch.grid_stride(K.gather_planes, out.size, _planes(x), _planes(index), typed_zero(x), _planes(out))
    return out


def max_unpool(x, index, spatial):
    """(N, C, *spatial) zeros with x (N, C, *) put at `index` (checked by the caller)."""
    n, c = x.shape[:2]
    plane = math.prod(spatial)
    out = storage.zeros((n, c) + tuple(spatial), x.dtype)
    launch.grid_stride(K.put_planes, x.size, _planes(x), _planes(index), layout.view(out, (n * c, plane)))
    return out


def invalid_index_max(index, high):
    """The largest value of integer array `index` when any lies outside [0, high), else None
    (reads one count, and then one value, on the host: the synchronisation PyTorch's check
    makes too)."""
    if read_count(count_outside(index, 0, high)):
        return read_count(index_extreme(index, "amax"))
    return None
