"""Pooling (N-d): max pooling with indices, average pooling, adaptive max pooling, and the
scatter/gather pair that their backward passes and max_unpool share: the ops.

Each op checks its arguments with PyTorch's errors and plans the window geometry
(`_backends.plan.output_size`), then calls its device's `pooling` backend family
(`_backends/cpu/pooling.py`, `_backends/cuda/pooling.py`). Indices are PyTorch's: the flat
position of the chosen element within its (n, c) plane of the *unpadded* input.
"""
import math

import numpy as np

from ... import _backends
from ... import _dtype as D
from ..._backends.plan import adaptive_bounds, output_size
from ..._dispatch import op
from ..._runtime.determinism import alert_not_deterministic
from ..._tensor import Tensor
from .._iter import common_device
from ._common import array_of, check_float, ntuple, tensor_of

__all__ = ["max_pool_with_indices", "max_pool_backward", "take_along_planes", "avg_pool",
           "avg_pool_backward", "adaptive_max_pool", "max_unpool"]


def _pooling(device):
    """The pooling family of `device`'s backend."""
    return _backends.get(device).pooling


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
    return kernel, stride, padding, dilation, out


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
    kernel, stride, padding, dilation, out = _geometry(input, kernel_size, stride, padding, dilation, ceil_mode)
    values, index = _pooling(input._device).max_pool(array_of(input), kernel, stride, padding, dilation, out)
    return tensor_of(values, input._dtype, input._device), tensor_of(index, D.int64, input._device)


@op()
def max_pool_backward(grad_output, indices, input_size):
    """Gradient of max pooling: `grad_output` summed into planes of `input_size` at `indices`."""
    size = tuple(input_size)
    device = common_device((grad_output, indices))
    planes = _pooling(device).max_pool_backward(array_of(grad_output), array_of(indices, np.int64), size[2:])
    return tensor_of(planes, grad_output._dtype, device)


@op()
def take_along_planes(input, indices):
    """out[n, c, j...] = input[n, c].flatten()[indices[n, c, j...]] (max_pool_backward's adjoint)."""
    device = common_device((input, indices))
    picked = _pooling(device).take_along_planes(array_of(input), array_of(indices, np.int64))
    return tensor_of(picked, input._dtype, device)


@op()
def max_unpool(input, indices, output_size):
    """Inverse of max pooling: zeros of spatial `output_size` with `input` put at `indices`."""
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    # PyTorch alerts on every device: with repeated indices, which value lands is up to
    # the kernel (its 1-d unpool is the 2-d one).
    alert_not_deterministic(f"max_unpooling{3 if len(output_size) == 3 else 2}d_forward_out")
    device = common_device((input, indices))
    pooling = _pooling(device)
    index = array_of(indices, np.int64)
    highest = pooling.invalid_index_max(index, math.prod(output_size))
    if highest is not None:
        raise RuntimeError(f"Found an invalid max index: {highest} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))}")
    out = pooling.max_unpool(array_of(input), index, tuple(output_size))
    return tensor_of(out, input._dtype, device)


@op()
def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
    """Average pooling of (N, C, *S) over windows of `kernel_size`."""
    nd = len(kernel_size) if isinstance(kernel_size, (tuple, list)) else input.dim() - 2
    _check_pool_input(input, nd, f"avg_pool{nd}d")
    check_float(input, f"avg_pool{nd}d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _, out = _geometry(input, kernel_size, stride, padding, 1, ceil_mode)
    y = _pooling(input._device).avg_pool(array_of(input), kernel, stride, padding, out, count_include_pad,
                                         divisor_override)
    return tensor_of(y, input._dtype, input._device)


@op()
def avg_pool_backward(grad_output, input_size, kernel_size, stride=None, padding=0, ceil_mode=False,
                      count_include_pad=True, divisor_override=None):
    """Gradient of `avg_pool` w.r.t. an input of shape `input_size`."""
    probe = Tensor._wrap(np.empty(tuple(input_size), np.float32), D.float32)  # geometry only
    kernel, stride, padding, _, _ = _geometry(probe, kernel_size, stride, padding, 1, ceil_mode)
    gx = _pooling(grad_output._device).avg_pool_backward(array_of(grad_output), tuple(input_size), kernel, stride,
                                                         padding, count_include_pad, divisor_override)
    return tensor_of(gx, grad_output._dtype, grad_output._device)


@op()
def adaptive_max_pool(input, output_size):
    """Adaptive max pooling of (N, C, *S) to spatial `output_size`; returns (values, indices)."""
    size = tuple(input.shape[2:])
    out = tuple(size[i] if o is None else int(o) for i, o in enumerate(output_size))
    if any(s == 0 for s in size):
        raise RuntimeError(f"adaptive_max_pool{len(size)}d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {list(input.shape)} with dimension 2 "
                           "being empty")
    values, index = _pooling(input._device).adaptive_max_pool(array_of(input), out)
    return tensor_of(values, input._dtype, input._device), tensor_of(index, D.int64, input._device)
