"""Sliding windows over the spatial dims of (N, C, *spatial) NumPy arrays: the im2col of
convolution and pooling, and its adjoint (col2im) for their backward passes.

`windows` returns a strided *view* (no copy): shape (N, C, *kernel, *out) with the kernel
offsets before the output positions, the layout whose reshape to (N, C*K, L) is the
im2col matrix a GEMM wants. `add_windows` scatters such an array back with a sum over
overlapping windows, looping over the K kernel offsets only (9 for a 3x3 kernel), each
step one vectorised strided add.
"""
import itertools

import numpy as np

__all__ = ["pad_spatial", "windows", "add_windows", "crop_spatial"]


def pad_spatial(arr, padding, value=0.0, extra=None):
    """`arr` padded by `padding[d]` on both sides of spatial dim d (plus `extra[d]` on the
    right, the room ceil_mode windows need)."""
    extra = extra or (0,) * len(padding)
    if not any(padding) and not any(extra):
        return arr
    widths = [(0, 0), (0, 0)] + [(p, p + e) for p, e in zip(padding, extra)]
    return np.pad(arr, widths, constant_values=value)


def windows(padded, kernel, stride, dilation, out):
    """View of shape (N, C, *kernel, *out): element [n, c, k..., o...] is
    padded[n, c, o*stride + k*dilation ...]."""
    st = padded.strides
    spatial = st[2:]
    shape = padded.shape[:2] + tuple(kernel) + tuple(out)
    strides = st[:2] + tuple(s * d for s, d in zip(spatial, dilation)) + tuple(
        s * t for s, t in zip(spatial, stride))
    return np.lib.stride_tricks.as_strided(padded, shape, strides, writeable=False)


def add_windows(cols, padded_shape, kernel, stride, dilation, out):
    """Adjoint of `windows`: sum the (N, C, *kernel, *out) array `cols` into a zero array
    of `padded_shape`."""
    result = np.zeros(padded_shape, dtype=cols.dtype)
    for offsets in itertools.product(*(range(k) for k in kernel)):
        target = (slice(None), slice(None)) + tuple(
            slice(k * d, k * d + s * (o - 1) + 1, s)
            for k, d, s, o in zip(offsets, dilation, stride, out))
        result[target] += cols[(slice(None), slice(None)) + offsets]
    return result


def crop_spatial(arr, padding, size):
    """Inverse of `pad_spatial`: the `size` elements after `padding` along each spatial dim."""
    return arr[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(padding, size))]
