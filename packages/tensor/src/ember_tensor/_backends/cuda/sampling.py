"""CUDA sampling: embedding and its backward, embedding_bag and its two backward products
(`kernels/embedding_bag.py`), one_hot, constant padding and
unfold/fold (im2col/col2im) over device arrays, with the index checks their ops make.

The same functions as `_backends.cpu.sampling`. Embedding gathers rows with one thread
per output element and its backward adds them back with atomic adds (in float32 for
float16/bfloat16: the op passes the gradient in its compute dtype); unfold/fold are the
convolution's im2col/col2im kernels (`kernels.windows`). What crosses to the host is
one count or extreme per check (`any_outside`, `index_max`, `index_min`): the
synchronisation PyTorch's checks make too.
"""
import math

import numpy as np

from ..plan import WORDS
from . import arrays, launch, layout, storage
from .index_arrays import to_index_array
from .kernels import embedding_bag as bag_kernels
from .kernels import sampling as K
from .windows import col2im, im2col_into, count_outside, index_extreme, read_count, window_counts

__all__ = ["any_outside", "index_max", "index_min", "embedding", "embedding_backward", "embedding_bag",
           "embedding_bag_backward", "embedding_bag_per_sample_weights_backward", "one_hot", "constant_pad",
           "unfold", "fold"]


def any_outside(index, low, high):
    """Whether an element of integer array `index` lies outside [low, high) (one count read back)."""
    return bool(index.size) and read_count(count_outside(index, low, high)) > 0


def index_max(index):
    """The largest element of non-empty integer array `index`, a Python int."""
    return read_count(index_extreme(index, "amax"))


def index_min(index):
    """The smallest element of non-empty integer array `index`, a Python int."""
    return read_count(index_extreme(index, "amin"))


def embedding(weight, index):
    """Rows of `weight` (num, dim) at the integer array `index` (checked in range):
    (*index.shape, dim), any dtype (elements move as bits)."""
    idx = to_index_array(index)
    width = weight.shape[1]
    out = storage.empty(tuple(index.shape) + (width,), weight.dtype)
    words = WORDS[weight.dtype.itemsize]  # a row of 16-byte items moves as twice as many words
    launch.grid_stride(K.take_rows, out.size * words, layout.movement(arrays.flat(storage.contiguous(weight))), idx,
                       width * words, layout.movement(arrays.flat(out)))
    return out


def embedding_backward(grad, index, num_weights, padding_idx, scale_grad_by_freq):
    """Gradient of `embedding` w.r.t. its weight: the rows of `grad` (*index.shape, dim)
    summed per index into (num_weights, dim), each divided by its index's count when
    `scale_grad_by_freq`; the `padding_idx` row (when >= 0) stays zero."""
    idx = to_index_array(index)
    width = grad.shape[-1]
    rows = arrays.flat(storage.contiguous(grad))
    out = storage.zeros((num_weights, width), grad.dtype)
    flat_out = arrays.flat(out)
    if scale_grad_by_freq:
        counts = storage.zeros((num_weights,), grad.dtype)
        launch.grid_stride(K.count_rows, idx.size, idx, grad.dtype.type(1), counts)
        launch.grid_stride(K.add_rows_scaled, rows.size, rows, idx, counts, width, flat_out)
    else:
        launch.grid_stride(K.add_rows, rows.size, rows, idx, width, flat_out)
    if padding_idx is not None and padding_idx >= 0:
        storage.fill_(arrays.restride(out, (width,), (out.strides[1],), padding_idx * out.strides[0]), 0)
    return out


def _scales(per_sample_weights, dtype):
    # per_sample_weights (the op passes them in the weight's dtype) as a flat device
    # array, or the empty "none".
    if per_sample_weights is None:
        return storage.zeros((0,), dtype)
    return arrays.flat(storage.contiguous(per_sample_weights))


def embedding_bag(weight, indices, offsets, bags, mode, per_sample_weights, padding_idx):
    """Sum (mode 0), mean (1) or max (2) of the rows of `weight` (num, dim) picked by each
    of `bags` bags of `indices` (bag b: entries offsets[b] .. offsets[b + 1], the last
    ending at len(indices) when offsets has no end); entries equal to `padding_idx` (-1:
    none) are skipped, `per_sample_weights` (or None) scales each entry (sum mode).
    Returns (output (bags, dim), offset2bag (n,), bag_size (bags,), max_indices: (bags,
    dim) in max mode, else (0,)), the last three int64: one thread per (bag, column)."""
    w = storage.contiguous(weight)
    idx, off = to_index_array(indices), to_index_array(offsets)
    dim = w.shape[1]
    out = storage.zeros((bags, dim), w.dtype)
    offset2bag = storage.zeros((idx.size,), np.int64)
    bag_size = storage.zeros((bags,), np.int64)
    if mode == 2:
        max_indices = storage.zeros((bags, dim), np.int64)
        launch.grid_stride(bag_kernels.bag_max, bags * dim, w, idx, off, padding_idx, out, offset2bag, bag_size,
                           max_indices)
        return out, offset2bag, bag_size, max_indices
    launch.grid_stride(bag_kernels.bag_sum, bags * dim, w, idx, off, _scales(per_sample_weights, w.dtype),
                       padding_idx, mode == 1, out, offset2bag, bag_size)
    return out, offset2bag, bag_size, storage.zeros((0,), np.int64)


def embedding_bag_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights, mode,
                           per_sample_weights, padding_idx, scale_grad_by_freq):
    """Dense weight gradient (num_weights, dim) of `embedding_bag`: each bag's gradient row
    added atomically into the rows its kept entries looked up (times per_sample_weights,
    divided by the bag's count in mean mode), or into its argmax rows in max mode; each
    row's sum divided by the row's frequency when `scale_grad_by_freq`."""
    g = storage.contiguous(grad)
    idx = to_index_array(indices)
    dim = g.shape[1]
    out = storage.zeros((num_weights, dim), g.dtype)
    freq = storage.zeros((num_weights if scale_grad_by_freq else 0,), g.dtype)
    if scale_grad_by_freq:
        launch.grid_stride(K.count_rows, idx.size, idx, g.dtype.type(1), freq)
    if mode == 2:
        launch.grid_stride(bag_kernels.bag_backward_max, g.size, g, storage.contiguous(max_indices), freq, out)
        return out
    launch.grid_stride(bag_kernels.bag_backward_rows, idx.size * dim, g, idx, to_index_array(offset2bag),
                       to_index_array(bag_size), _scales(per_sample_weights, g.dtype), padding_idx, mode == 1, freq,
                       out)
    return out


def embedding_bag_per_sample_weights_backward(grad, weight, indices, offset2bag, padding_idx):
    """Gradient of `embedding_bag`'s per_sample_weights (sum mode): for each entry, the dot
    product of its bag's gradient row with the weight row it looked up (0 for padding)."""
    g = storage.contiguous(grad)
    idx = to_index_array(indices)
    out = storage.zeros((idx.size,), g.dtype)
    launch.grid_stride(bag_kernels.bag_weights_backward, idx.size, g, storage.contiguous(weight), idx,
                       to_index_array(offset2bag), padding_idx, out)
    return out


def one_hot(index, num_classes):
    """int64 (*index.shape, num_classes): 1 where the class is the index."""
    out = storage.empty(tuple(index.shape) + (num_classes,), np.int64)
    flat = layout.view(storage.contiguous(index), (index.size,))
    launch.grid_stride(K.one_hot, out.size, flat, layout.view(out, (index.size, num_classes)))
    return out


def constant_pad(x, widths, crops, value):
    """x cropped by `crops` (slices) then padded by `widths` ((left, right) per dim) with
    `value`: a fill and one strided copy, any dtype (bfloat16 moves as bits)."""
    cropped_shape, offset = [], 0
    for n, s, sl in zip(x.shape, x.strides, crops):
        start, stop, _ = sl.indices(n)
        cropped_shape.append(max(stop - start, 0))
        offset += start * s if stop > start else 0
    out_shape = tuple(n + left + right for n, (left, right) in zip(cropped_shape, widths))
    out = storage.empty(out_shape, x.dtype)
    storage.fill_(out, value)
    if math.prod(cropped_shape):
        source = arrays.restride(x, tuple(cropped_shape), x.strides, offset)
        inner_offset = sum(left * s for (left, _), s in zip(widths, out.strides))
        storage.copy_(arrays.restride(out, tuple(cropped_shape), out.strides, inner_offset), source)
    return out


def unfold(x, kernel, dilation, padding, stride):
    """F.unfold of x (N, C, H, W): (N, C*kh*kw, L)."""
    n, c = x.shape[:2]
    out = window_counts(x.shape[2:], kernel, stride, padding, dilation)
    cols = storage.empty((n, c * math.prod(kernel), math.prod(out)), x.dtype)
    im2col_into(x, kernel, stride, padding, dilation, out, cols)
    return cols


def fold(cols, size, kernel, dilation, padding, stride):
    """F.fold of cols (N, C*kh*kw, L) into (N, C, *size)."""
    out = window_counts(size, kernel, stride, padding, dilation)
    n = cols.shape[0]
    return col2im(cols, n, cols.shape[1] // math.prod(kernel), size, kernel, stride, padding, dilation, out)
