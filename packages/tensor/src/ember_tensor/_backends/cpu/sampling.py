"""CPU sampling: embedding and its backward, embedding_bag and its two backward products
(Numba loops in `kernels/embedding_bag.py`), one_hot, constant padding and unfold/fold
(im2col/col2im) over NumPy arrays, with the index checks their ops make.

The same functions as `_backends.cuda.sampling`. Embedding is NumPy fancy indexing and
its backward `np.add.at`; unfold is a strided window view of the padded input
(`windows`) reshaped to columns, fold its adjoint (`add_windows`). Arrays arrive in their
compute dtype where the op computes (half types as float32).
"""
import math

import numpy as np

from ..plan import output_size
from . import threads
from .kernels import embedding_bag as bag_kernels
from .windows import add_windows, crop_spatial, pad_spatial, windows

__all__ = ["any_outside", "index_max", "index_min", "embedding", "embedding_backward", "embedding_bag",
           "embedding_bag_backward", "embedding_bag_per_sample_weights_backward", "one_hot", "constant_pad",
           "unfold", "fold"]


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


def _as_int64(index):
    return np.ascontiguousarray(index.reshape(-1), dtype=np.int64)


def embedding_bag(weight, indices, offsets, bags, mode, per_sample_weights, padding_idx):
    """Sum (mode 0), mean (1) or max (2) of the rows of `weight` (num, dim) picked by each
    of `bags` bags of `indices` (bag b: entries offsets[b] .. offsets[b + 1], the last
    ending at len(indices) when offsets has no end); entries equal to `padding_idx` (-1:
    none) are skipped, `per_sample_weights` (or None) scales each entry (sum mode).
    Returns (output (bags, dim), offset2bag (n,), bag_size (bags,), max_indices: (bags,
    dim) in max mode, else (0,)), the last three int64."""
    w = np.ascontiguousarray(weight)
    idx, off = _as_int64(indices), _as_int64(offsets)
    out = np.zeros((bags, w.shape[1]), w.dtype)
    offset2bag = np.zeros(len(idx), np.int64)
    bag_size = np.zeros(bags, np.int64)
    if mode == 2:
        max_indices = np.empty((bags, w.shape[1]), np.int64)
        args = (w, idx, off, padding_idx, out, offset2bag, bag_size, max_indices)
        _over_bags(bag_kernels.bag_max, args, bags, idx.size * w.shape[1])
        return out, offset2bag, bag_size, max_indices
    scales = (bag_kernels.empty_scales(w.dtype) if per_sample_weights is None
              else np.ascontiguousarray(per_sample_weights.reshape(-1), dtype=w.dtype))
    args = (w, idx, off, scales, padding_idx, mode == 1, out, offset2bag, bag_size)
    _over_bags(bag_kernels.bag_sum, args, bags, idx.size * w.shape[1])
    return out, offset2bag, bag_size, np.zeros(0, np.int64)


def _over_bags(kernel, args, bags, work):
    # Bags are independent: ranges of them on several threads when the work is worth it.
    if threads.parallel(work, bag_kernels.PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*args, lo, hi), bags, threads.part_count(), align=1)
    else:
        kernel(*args, 0, bags)


def _frequencies(idx, num_weights, dtype, scale_grad_by_freq):
    # How often each row is looked up (scale_grad_by_freq), or the empty "none".
    if not scale_grad_by_freq:
        return bag_kernels.empty_scales(dtype)
    return np.bincount(idx, minlength=num_weights).astype(dtype)


def embedding_bag_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights, mode,
                           per_sample_weights, padding_idx, scale_grad_by_freq):
    """Dense weight gradient (num_weights, dim) of `embedding_bag`: each bag's gradient row
    added into the rows its kept entries looked up (times per_sample_weights, divided by
    the bag's count in mean mode), or into its argmax rows in max mode; each row's sum
    divided by the row's frequency when `scale_grad_by_freq`."""
    g = np.ascontiguousarray(grad)
    idx = _as_int64(indices)
    out = np.zeros((num_weights, g.shape[1]), g.dtype)
    freq = _frequencies(idx, num_weights, g.dtype, scale_grad_by_freq)
    if mode == 2:
        bag_kernels.bag_backward_max(g, np.ascontiguousarray(max_indices), freq, out)
        return out
    scales = (bag_kernels.empty_scales(g.dtype) if per_sample_weights is None
              else np.ascontiguousarray(per_sample_weights.reshape(-1), dtype=g.dtype))
    bag_kernels.bag_backward_rows(g, idx, _as_int64(offset2bag), _as_int64(bag_size), scales, padding_idx,
                                  mode == 1, freq, out)
    return out


def embedding_bag_per_sample_weights_backward(grad, weight, indices, offset2bag, padding_idx):
    """Gradient of `embedding_bag`'s per_sample_weights (sum mode): for each entry, the dot
    product of its bag's gradient row with the weight row it looked up (0 for padding)."""
    g = np.ascontiguousarray(grad)
    idx = _as_int64(indices)
    out = np.empty(len(idx), g.dtype)
    bag_kernels.bag_weights_backward(g, np.ascontiguousarray(weight, dtype=g.dtype), idx, _as_int64(offset2bag),
                                     padding_idx, out)
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
