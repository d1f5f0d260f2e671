"""Pooling kernels (N-d): max pooling with indices, average pooling, adaptive max
pooling, and the scatter/gather pair that their backward passes and max_unpool share.

1-d and 2-d max pooling run a Numba loop (`_kernels/cpu_nn.py`); other cases take
the strided-window NumPy path. Indices are PyTorch's: the flat position of the chosen element within its (n, c)
plane of the *unpadded* input. Average pooling's divisor (count_include_pad,
ceil_mode, divisor_override) is itself computed by pooling a mask, so the edge rules
live in one place (`_windows`).

CUDA tensors take the kernels of `_kernels/cuda_windows.py` (one thread per output
element, the same tie and NaN rules as the CPU path, PyTorch's divisor as a formula);
max pooling's backward is the one scatter (atomic adds), avg pooling's is a gather.
"""
import itertools
import math

import numpy as np

from ... import _dtype as D
from ..._dispatch import op
from ..._tensor import Tensor
from .._iter import common_device
from ._common import check_float, compute_np_dtype, from_array, ntuple, to_array
from ._windows import add_windows, crop_spatial, output_size, pad_spatial, windows

__all__ = ["max_pool_with_indices", "max_pool_backward", "take_along_planes", "avg_pool",
           "avg_pool_backward", "adaptive_max_pool", "max_unpool"]


def _geometry(input, kernel_size, stride, padding, dilation, ceil_mode):
    nd = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else input.dim() - 2
    kernel = ntuple(kernel_size, nd)
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else ntuple(stride, nd, "stride")
    padding = ntuple(padding, nd, "padding")
    dilation = ntuple(dilation, nd, "dilation")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel_size should be greater than zero, but got {list(kernel)}")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if any(p < 0 for p in padding):
        raise RuntimeError("pad must be non-negative")
    for k, p in zip(kernel, padding):
        if p * 2 > k:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation=1")
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got stride: " + str(stride))
    size = tuple(input.shape[2:])
    out = tuple(output_size(s, k, st, p, d, ceil_mode)
                for s, k, st, p, d in zip(size, kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, input.shape[1:]))}). Calculated output "
                           f"size: ({'x'.join(map(str, (input.shape[1],) + out))}). Output size is too small")
    # Room on the right for ceil_mode's last window.
    extra = tuple(max(0, (o - 1) * st + d * (k - 1) + 1 - (s + 2 * p))
                  for o, st, d, k, s, p in zip(out, stride, dilation, kernel, size, padding))
    return kernel, stride, padding, dilation, out, extra


def _check_pool_input(input, nd, name):
    if input.dim() != nd + 2:
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input tensor, but got {list(input.shape)}")


@op()
def max_pool_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Max pooling of (N, C, *S) over windows of `kernel_size`; returns (values, indices)."""
    nd = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else input.dim() - 2
    _check_pool_input(input, nd, f"max_pool{nd}d")
    if input._dtype is D.bool:
        raise NotImplementedError(f"\"max_pool{max(nd, 2)}d\" not implemented for 'Bool'")
    kernel, stride, padding, dilation, out, extra = _geometry(input, kernel_size, stride, padding,
                                                              dilation, ceil_mode)
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            values, index = W.max_pool(W.array_of(input, compute_np_dtype(input._dtype)), kernel, stride,
                                       padding, dilation, out)
            return (W.tensor_of(values, input._dtype, input._device),
                    W.tensor_of(index, D.int64, input._device))
    x = to_array(input)
    n, c = x.shape[:2]
    if nd <= 2 and x.dtype.kind == "f":
        from ..._backends.cpu.kernels import nn as cpu_nn
        lift = (lambda t, v: (v,) + tuple(t)) if nd == 1 else (lambda t, v: tuple(t))
        x2 = x[:, :, None, :] if nd == 1 else x
        values, index = cpu_nn.max_pool_2d(x2, lift(kernel, 1), lift(stride, 1), lift(padding, 0),
                                           lift(dilation, 1), lift(out, 1))
        return (from_array(values.reshape((n, c) + out), input._dtype, input._device),
                from_array(index.reshape((n, c) + out), D.int64, input._device))
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    view = windows(pad_spatial(x, padding, low, extra), kernel, stride, dilation, out)
    flat = view.reshape((n, c, math.prod(kernel)) + out)
    which = flat.argmax(axis=2)  # NaN counts as the maximum, as in PyTorch
    values = np.take_along_axis(flat, which[:, :, None], axis=2)[:, :, 0]
    # Window offset -> position in the unpadded input plane.
    offsets = np.unravel_index(which, kernel)
    grids = np.meshgrid(*(np.arange(o) for o in out), indexing="ij")
    coords = [g * st - p + k * d for g, st, p, k, d in zip(grids, stride, padding, offsets, dilation)]
    index = np.ravel_multi_index(coords, input.shape[2:], mode="clip") if n * c else \
        np.zeros((n, c) + out, np.int64)
    return (from_array(values, input._dtype, input._device),
            from_array(index.astype(np.int64), D.int64, input._device))


def _scatter_planes(values, index, plane_size):
    """Sum `values` (N, C, *) into zero planes of `plane_size` elements at `index`."""
    n, c = values.shape[:2]
    rows = n * c
    if rows == 0:
        return np.zeros((n, c, plane_size), values.dtype)
    flat = index.reshape(rows, -1) + (np.arange(rows, dtype=np.int64) * plane_size)[:, None]
    summed = np.bincount(flat.ravel(), weights=values.reshape(-1), minlength=rows * plane_size)
    return summed.astype(values.dtype, copy=False).reshape(n, c, plane_size)


@op()
def max_pool_backward(grad_output, indices, input_size):
    """Gradient of max pooling: `grad_output` summed into planes of `input_size` at `indices`."""
    size = tuple(input_size)
    spatial = size[2:]
    if grad_output._device.type == "cuda":
        from ..._backends.cuda import windows as W
        device = common_device((grad_output, indices))
        with W.device_scope(device):
            planes = W.scatter_planes(W.array_of(grad_output, compute_np_dtype(grad_output._dtype)),
                                      W.array_of(indices, np.int64), spatial)
            return W.tensor_of(planes, grad_output._dtype, device)
    g = to_array(grad_output)
    planes = _scatter_planes(g, to_array(indices, np.int64), math.prod(spatial))
    return from_array(planes.reshape(g.shape[:2] + spatial), grad_output._dtype, grad_output._device)


@op()
def take_along_planes(input, indices):
    """out[n, c, j...] = input[n, c].flatten()[indices[n, c, j...]] (max_pool_backward's adjoint)."""
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        device = common_device((input, indices))
        with W.device_scope(device):
            picked = W.take_along_planes(W.array_of(input, compute_np_dtype(input._dtype)),
                                         W.array_of(indices, np.int64))
            return W.tensor_of(picked, input._dtype, device)
    x = to_array(input)
    n, c = x.shape[:2]
    idx = to_array(indices, np.int64)
    picked = np.take_along_axis(x.reshape(n, c, math.prod(x.shape[2:])),  # explicit: n may be 0
                                idx.reshape(n, c, math.prod(idx.shape[2:])), axis=2)
    return from_array(picked.reshape(idx.shape), input._dtype, input._device)


@op()
def max_unpool(input, indices, output_size):
    """Inverse of max pooling: zeros of spatial `output_size` with `input` put at `indices`."""
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    plane = math.prod(output_size)
    if input._device.type == "cuda":
        return _cuda_max_unpool(input, indices, tuple(output_size))
    idx = to_array(indices, np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= plane):
        raise RuntimeError(f"Found an invalid max index: {int(idx.max())} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))}")
    x = to_array(input)
    n, c = x.shape[:2]
    out = np.zeros((n, c, plane), x.dtype)
    np.put_along_axis(out, idx.reshape(n, c, -1), x.reshape(n, c, -1), axis=2)
    return from_array(out.reshape((n, c) + tuple(output_size)), input._dtype, input._device)


def _cuda_max_unpool(input, indices, output_size):
    from ..._backends.cuda import windows as W
    device = common_device((input, indices))
    with W.device_scope(device):
        idx = W.array_of(indices, np.int64)
        if W.read_count(W.count_outside(idx, 0, math.prod(output_size))):
            highest = W.read_count(W.index_extreme(idx, "amax"))
            raise RuntimeError(f"Found an invalid max index: {highest} (output volumes are of size "
                               f"{'x'.join(map(str, output_size))}")
        out = W.put_planes(W.array_of(input, compute_np_dtype(input._dtype)), idx, output_size)
        return W.tensor_of(out, input._dtype, device)


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


@op()
def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
    """Average pooling of (N, C, *S) over windows of `kernel_size`."""
    nd = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else input.dim() - 2
    _check_pool_input(input, nd, f"avg_pool{nd}d")
    check_float(input, f"avg_pool{nd}d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, out, extra = _geometry(input, kernel_size, stride, padding, 1, ceil_mode)
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            y = W.avg_pool(W.array_of(input, compute_np_dtype(input._dtype)), kernel, stride, padding, out,
                           count_include_pad, divisor_override)
            return W.tensor_of(y, input._dtype, input._device)
    x = to_array(input)
    ones = (1,) * nd
    view = windows(pad_spatial(x, padding, 0.0, extra), kernel, stride, ones, out)
    summed = view.sum(axis=tuple(range(2, 2 + nd)))
    divisor = _avg_divisor(x.shape[2:], kernel, stride, padding, out, extra, count_include_pad,
                           divisor_override)
    return from_array(summed / divisor, input._dtype, input._device)


@op()
def avg_pool_backward(grad_output, input_size, kernel_size, stride=None, padding=0, ceil_mode=False,
                      count_include_pad=True, divisor_override=None):
    """Gradient of `avg_pool` w.r.t. an input of shape `input_size`."""
    probe = Tensor._wrap(np.empty(tuple(input_size), np.float32), D.float32)  # geometry only
    kernel, stride, padding, _, out, extra = _geometry(probe, kernel_size, stride, padding, 1, ceil_mode)
    if grad_output._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(grad_output._device):
            gx = W.avg_pool_backward(W.array_of(grad_output, compute_np_dtype(grad_output._dtype)),
                                     tuple(input_size), kernel, stride, padding, count_include_pad,
                                     divisor_override)
            return W.tensor_of(gx, grad_output._dtype, grad_output._device)
    g = to_array(grad_output)
    nd = len(kernel)
    size = tuple(input_size)[2:]
    divisor = _avg_divisor(size, kernel, stride, padding, out, extra, count_include_pad, divisor_override)
    share = g / divisor
    cols = np.broadcast_to(share[(slice(None), slice(None)) + (None,) * nd],
                           g.shape[:2] + kernel + out)
    padded = g.shape[:2] + tuple(s + 2 * p + e for s, p, e in zip(size, padding, extra))
    gx = add_windows(cols, padded, kernel, stride, (1,) * nd, out)
    return from_array(crop_spatial(gx, padding, size), grad_output._dtype, grad_output._device)


def adaptive_bounds(size, out):
    """PyTorch's adaptive windows along one dim: [floor(i*size/out), ceil((i+1)*size/out))."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


@op()
def adaptive_max_pool(input, output_size):
    """Adaptive max pooling of (N, C, *S) to spatial `output_size`; returns (values, indices)."""
    size = tuple(input.shape[2:])
    out = tuple(size[i] if o is None else int(o) for i, o in enumerate(output_size))
    if any(s == 0 for s in size):
        raise RuntimeError(f"adaptive_max_pool{len(size)}d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {list(input.shape)} with dimension 2 "
                           "being empty")
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            values, index = W.adaptive_max_pool(W.array_of(input, compute_np_dtype(input._dtype)), out)
            return (W.tensor_of(values, input._dtype, input._device),
                    W.tensor_of(index, D.int64, input._device))
    x = to_array(input)
    n, c = x.shape[:2]
    values = np.empty((n, c) + out, x.dtype)
    index = np.empty((n, c) + out, np.int64)
    bounds = [adaptive_bounds(s, o) for s, o in zip(size, out)]
    for pos in itertools.product(*(range(o) for o in out)):
        box = [bounds[d][i] for d, i in enumerate(pos)]
        region = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in box)]
        shape = region.shape[2:]
        flat = region.reshape(n, c, math.prod(shape))  # explicit: n may be 0
        which = flat.argmax(axis=2)
        at = (slice(None), slice(None)) + pos
        values[at] = np.take_along_axis(flat, which[:, :, None], axis=2)[:, :, 0]
        local = np.unravel_index(which, shape)
        index[at] = np.ravel_multi_index([loc + a for loc, (a, _) in zip(local, box)], size)
    return from_array(values, input._dtype, input._device), from_array(index, D.int64, input._device)
