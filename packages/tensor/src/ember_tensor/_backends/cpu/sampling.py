"""CPU sampling: embedding and its backward, one_hot, constant padding and unfold/fold
(im2col/col2im) over NumPy arrays, with the index checks their ops make.

The same functions as `_backends.cuda.sampling`. Embedding is NumPy fancy indexing and
its backward `np.add.at`; unfold is a strided window view of the padded input
(`windows`) reshaped to columns, fold its adjoint (`add_windows`). Arrays arrive in their
compute dtype where the op computes (half types as float32).
"""
import math

import numpy as np

from ..plan import output_size
from .windows import add_windows, crop_spatial, pad_spatial, windows

__all__ = ["any_outside", "index_max", "index_min", "embedding", "embedding_backward", "one_hot",
           "constant_pad", "unfold", "fold"]


def any_outside(index, low, high):
    """Whether an element of integer array `index` lies outside [low, high)."""
    return bool(index.size) and bool(index.min() < low or index.max() >= high)


def index_max(index):
    """The largest element of non-empty integer array `index`, a Python int."""
    return int(index.max())


def index_min(index):
    """The smallest element of non-empty integer array `index`, a Python int."""
    return int(index.min())


def embedding(weight, index):
    """Rows of `weight` (num, dim) at the integer array `index` (checked in range):
    (*index.shape, dim)."""
    return weight[index]


def embedding_backward(grad, index, num_weights, padding_idx, scale_grad_by_freq):
    """Gradient of `embedding` w.r.t. its weight: the rows of `grad` (*index.shape, dim)
    summed per index into (num_weights, dim), each divided by its index's count when
    `scale_grad_by_freq`; the `padding_idx` row (when >= 0) stays zero."""
    idx = index.astype(np.int64, copy=False).reshape(-1)
    g = grad.reshape(len(idx), grad.shape[-1])  # explicit: idx may be empty
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None]
    out = np.zeros((num_weights, g.shape[1]), g.dtype)
    np.add.at(out, idx, g)
    if padding_idx is not None and padding_idx >= 0:
        out[padding_idx] = 0
    return out


def one_hot(index, num_classes):
    """int64 (*index.shape, num_classes): 1 where the class is the index."""
    return (index[..., None] == np.arange(num_classes)).astype(np.int64)


def constant_pad(x, widths, crops, value):
    """x cropped by `crops` (slices) then padded by `widths` ((left, right) per dim) with `value`."""
    return np.pad(x[tuple(crops)], widths, constant_values=value) if x.ndim else x.copy()


def unfold(x, kernel, dilation, padding, stride):
    """F.unfold of x (N, C, H, W): (N, C*kh*kw, L)."""
    n, c = x.shape[:2]
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x.shape[2:], kernel, stride, padding, dilation))
    view = windows(pad_spatial(x, padding), kernel, stride, dilation, out)
    return view.reshape(n, c * math.prod(kernel), math.prod(out))


def fold(cols, size, kernel, dilation, padding, stride):
    """F.fold of cols (N, C*kh*kw, L) into (N, C, *size)."""
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))
    k = math.prod(kernel)
    n = cols.shape[0]
    c = cols.shape[1] // k
    shaped = cols.reshape((n, c) + tuple(kernel) + out)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(size, padding))
    summed = add_windows(shaped, padded, kernel, stride, dilation, out)
    return crop_spatial(summed, padding, size)
