"""CPU pooling (N-d): max pooling with indices, average pooling, adaptive max pooling, and
the scatter/gather pair that their backward passes and max_unpool share.

1-d and 2-d float max pooling run a Numba loop (`kernels.pooling.max_pool_2d`); other
cases take the strided-window NumPy path. The backward of every max pooling (a sum of the
gradient into planes at the indices) is a Numba loop for float32 and float64, NumPy's
`bincount` for the rest. Indices are PyTorch's: the flat position of the chosen
element within its (n, c) plane of the *unpadded* input, chosen by PyTorch's rule (a
larger value or any NaN replaces the best so far: ties keep the first maximum, the last
NaN wins). Average pooling's divisor (count_include_pad, ceil_mode, divisor_override) is
itself computed by pooling a mask, so the edge rules live in one place (`windows`).
Arrays arrive in their compute dtype (half types as float32).
"""
import itertools
import math

import numpy as np

from ..lazy import lazy
from ..plan import adaptive_bounds
from .windows import add_windows, crop_spatial, pad_spatial, windows

__all__ = ["max_pool", "max_pool_backward", "take_along_planes", "max_unpool", "invalid_index_max", "avg_pool",
           "avg_pool_backward", "adaptive_max_pool"]

cpu_pooling = lazy("cpu.kernels.pooling")  # Numba loads on first use


def _ceil_room(size, kernel, stride, padding, dilation, out):
    """Room on the right of each padded spatial dim for ceil_mode's last window."""
    return tuple(max(0, (o - 1) * st + d * (k - 1) + 1 - (s + 2 * p))
                 for o, st, d, k, s, p in zip(out, stride, dilation, kernel, size, padding))


def _window_argmax(flat, axis):
    """Position along `axis` of each window's maximum by PyTorch's rule (a larger value
    or any NaN replaces the best so far): the first of equal maxima, the last NaN."""
    which = flat.argmax(axis=axis)
    if flat.dtype.kind not in "fc":
        return which
    nan = np.isnan(flat)
    last_nan = flat.shape[axis] - 1 - np.flip(nan, axis=axis).argmax(axis=axis)
    return np.where(nan.any(axis=axis), last_nan, which)


def max_pool(x, kernel, stride, padding, dilation, out):
    """(values, int64 indices) of max pooling x (N, C, *S) to spatial `out`."""
    n, c = x.shape[:2]
    nd = len(kernel)
    if nd <= 2 and x.dtype.kind == "f":
        lift = (lambda t, v: (v,) + tuple(t)) if nd == 1 else (lambda t, v: tuple(t))
        x2 = x[:, :, None, :] if nd == 1 else x
        values, index = cpu_pooling.max_pool_2d(x2, lift(kernel, 1), lift(stride, 1), lift(padding, 0),
                                                lift(dilation, 1), lift(out, 1))
        return values.reshape((n, c) + tuple(out)), index.reshape((n, c) + tuple(out))
    extra = _ceil_room(x.shape[2:], kernel, stride, padding, dilation, out)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    view = windows(pad_spatial(x, padding, low, extra), kernel, stride, dilation, out)
    flat = view.reshape((n, c, math.prod(kernel)) + tuple(out))
    which = _window_argmax(flat, 2)
    values = np.take_along_axis(flat, which[:, :, None], axis=2)[:, :, 0]
    # Window offset -> position in the unpadded input plane.
    offsets = np.unravel_index(which, kernel)
    grids = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
    coords = [g * st - p + k * d for g, st, p, k, d in zip(grids, stride, padding, offsets, dilation)]
    index = np.ravel_multi_index(coords, x.shape[2:], mode="clip") if n * c else \
        np.zeros((n, c) + tuple(out), np.int64)
    return values, index.astype(np.int64)


def max_pool_backward(g, index, spatial):
    """(N, C, *spatial): g (N, C, *) summed into zero planes at `index`."""
    n, c = g.shape[:2]
    plane_size = math.prod(spatial)
    rows = n * c
    if rows == 0:
        return np.zeros((n, c) + tuple(spatial), g.dtype)
    if g.dtype in (np.float32, np.float64):
        summed = cpu_pooling.max_pool_backward(g.reshape(rows, -1), index.reshape(rows, -1), plane_size)
        return summed.reshape((n, c) + tuple(spatial))
    flat = index.reshape(rows, -1) + (np.arange(rows, dtype=np.int64) * plane_size)[:, None]
    summed = np.bincount(flat.ravel(), weights=g.reshape(-1), minlength=rows * plane_size)
    return summed.astype(g.dtype, copy=False).reshape((n, c) + tuple(spatial))


def take_along_planes(x, index):
    """out[n, c, j...] = x[n, c].flatten()[index[n, c, j...]] (the index's shape)."""
    n, c = x.shape[:2]
    picked = np.take_along_axis(x.reshape(n, c, math.prod(x.shape[2:])),  # explicit: n may be 0
                                index.reshape(n, c, math.prod(index.shape[2:])), axis=2)
    return picked.reshape(index.shape)


def invalid_index_max(index, high):
    """The largest value of integer array `index` when any lies outside [0, high), else None."""
    if index.size and (index.min() < 0 or index.max() >= high):
        return int(index.max())
    return None


def max_unpool(x, index, spatial):
    """(N, C, *spatial) zeros with x (N, C, *) put at `index` (checked by the caller)."""
    n, c = x.shape[:2]
    out = np.zeros((n, c, math.prod(spatial)), x.dtype)
    np.put_along_axis(out, index.reshape(n, c, -1), x.reshape(n, c, -1), axis=2)
    return out.reshape((n, c) + tuple(spatial))


def _avg_divisor(size, kernel, stride, padding, out, extra, count_include_pad, divisor_override):
    if divisor_override:
        return float(divisor_override)
    if count_include_pad:
        # Windows count the padding but not ceil_mode's overhang past it.
        mask = pad_spatial(np.ones((1, 1) + tuple(s + 2 * p for s, p in zip(size, padding))),
                           (0,) * len(size), 0.0, extra)
    else:
        mask = pad_spatial(np.ones((1, 1) + tuple(size)), padding, 0.0, extra)
    counts = windows(mask, kernel, stride, (1,) * len(size), out)
    return counts.sum(axis=tuple(range(2, 2 + len(size))))[0, 0]


def avg_pool(x, kernel, stride, padding, out, count_include_pad, divisor_override):
    """Average pooling of x (N, C, *S) to spatial `out` (PyTorch's divisor rules)."""
    nd = len(kernel)
    ones = (1,) * nd
    extra = _ceil_room(x.shape[2:], kernel, stride, padding, ones, out)
    view = windows(pad_spatial(x, padding, 0.0, extra), kernel, stride, ones, out)
    summed = view.sum(axis=tuple(range(2, 2 + nd)))
    divisor = _avg_divisor(x.shape[2:], kernel, stride, padding, out, extra, count_include_pad, divisor_override)
    return summed / divisor


def avg_pool_backward(g, input_size, kernel, stride, padding, count_include_pad, divisor_override):
    """Gradient of `avg_pool` w.r.t. an input of shape `input_size`."""
    nd = len(kernel)
    size, out = tuple(input_size)[2:], tuple(g.shape[2:])
    ones = (1,) * nd
    extra = _ceil_room(size, kernel, stride, padding, ones, out)
    divisor = _avg_divisor(size, kernel, stride, padding, out, extra, count_include_pad, divisor_override)
    share = g / divisor
    cols = np.broadcast_to(share[(slice(None), slice(None)) + (None,) * nd], g.shape[:2] + tuple(kernel) + out)
    padded = g.shape[:2] + tuple(s + 2 * p + e for s, p, e in zip(size, padding, extra))
    gx = add_windows(cols, padded, kernel, stride, ones, out)
    return crop_spatial(gx, padding, size)


def adaptive_max_pool(x, out):
    """(values, int64 indices) of adaptive max pooling x (N, C, *S) to spatial `out`."""
    n, c = x.shape[:2]
    size = x.shape[2:]
    values = np.empty((n, c) + tuple(out), x.dtype)
    index = np.empty((n, c) + tuple(out), np.int64)
    bounds = [adaptive_bounds(s, o) for s, o in zip(size, out)]
    for pos in itertools.product(*(range(o) for o in out)):
        box = [bounds[d][i] for d, i in enumerate(pos)]
        region = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in box)]
        shape = region.shape[2:]
        flat = region.reshape(n, c, math.prod(shape))  # explicit: n may be 0
        which = _window_argmax(flat, 2)
        at = (slice(None), slice(None)) + pos
        values[at] = np.take_along_axis(flat, which[:, :, None], axis=2)[:, :, 0]
        local = np.unravel_index(which, shape)
        index[at] = np.ravel_multi_index([loc + a for loc, (a, _) in zip(local, box)], size)
    return values, index
