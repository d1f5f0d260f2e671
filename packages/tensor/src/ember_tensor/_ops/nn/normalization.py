"""Fused normalisation kernels: batch norm (with the running-statistics update), layer
norm and group norm, each with a backward kernel of its own.

A fused kernel makes two passes for the statistics and one for the output (batch norm:
Numba loops in `_kernels/cpu_nn.py`, accumulating in float64), where the composite of
mean/var/sub/mul would make many more and record as many graph nodes. The
backward kernels use the closed form
    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
over each normalised group. CUDA inputs take the device kernels of `_backends.cuda.normalization` (a
thread block per channel or row, float64 statistics) after the same argument checks.
"""
import math

import numpy as np

from ..._dispatch import op
from ._common import check_float, from_array, to_array

__all__ = ["native_batch_norm", "batch_norm_backward", "native_layer_norm", "layer_norm_backward",
           "native_group_norm", "group_norm_backward"]


def _channel_view(a, ndim):
    """A per-channel (C,) array shaped to broadcast against (N, C, *spatial)."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


@op()
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch norm over the channel dim 1 of (N, C, *); returns (output, mean, invstd).

    In training the batch statistics are used and `running_mean`/`running_var` (when
    given) are updated in place: ``running = (1 - momentum) * running + momentum * batch``
    with the unbiased batch variance.
    """
    check_float(input, "batch_norm")
    c = input.shape[1] if input.dim() > 1 else 0
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    n = input.shape[0]
    inner = input.numel() // (n * c) if n * c else 0
    count = n * inner
    if training and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(input.shape)})")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)
    from ..._backends.cpu.kernels import nn as cpu_nn
    x = to_array(input)
    x3 = x.reshape(n, c, inner)
    if training:
        mean, var = cpu_nn.batch_norm_stats(x3)
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * count / (count - 1), momentum)
    else:
        mean = to_array(running_mean).astype(np.float64)
        var = to_array(running_var).astype(np.float64)
    invstd = 1.0 / np.sqrt(var + eps)
    scale = invstd if weight is None else invstd * to_array(weight)
    shift = -mean * scale if bias is None else to_array(bias) - mean * scale
    y = cpu_nn.batch_norm_apply(x3, scale, shift).reshape(x.shape)
    stat_dtype = input._dtype
    return (from_array(y, input._dtype, input._device), from_array(mean, stat_dtype, input._device),
            from_array(invstd, stat_dtype, input._device))


def _update_running(buffer, batch_value, momentum):
    # In place on the buffer's storage, bumping its version like PyTorch's in-place update.
    # (CUDA inputs update their buffers on the device in `_backends.cuda.normalization`.)
    arr = buffer._data
    host = buffer._host_numpy()
    arr[...] = (1 - momentum) * host + momentum * batch_value.astype(host.dtype)
    buffer._bump_version()


@op()
def batch_norm_backward(grad_output, input, weight, save_mean, save_invstd, training):
    """Gradients (input, weight, bias) of `native_batch_norm` from its saved statistics."""
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.batch_norm_backward(grad_output, input, weight, save_mean, save_invstd, training)
    from ..._backends.cpu.kernels import nn as cpu_nn
    x = to_array(input)
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, x.size // (n * c) if n * c else 0)
    g3 = to_array(grad_output).reshape(x3.shape)
    w = np.ones(c) if weight is None else to_array(weight)
    gi, gw, gb = cpu_nn.batch_norm_backward(g3, x3, to_array(save_mean), to_array(save_invstd), w, training)
    dt, dev = grad_output._dtype, grad_output._device
    return from_array(gi.reshape(x.shape), dt, dev), from_array(gw, dt, dev), from_array(gb, dt, dev)


def _rows_forward(x, rows, size, eps):
    """Normalise each of `rows` groups of `size` elements of x: (xhat, mean, rstd) as float64."""
    flat = x.reshape(rows, size)  # (not -1: it cannot be inferred when there are no rows)
    mean = flat.mean(axis=1, dtype=np.float64)
    var = flat.var(axis=1, dtype=np.float64)
    rstd = 1.0 / np.sqrt(var + eps)
    return (flat - mean[:, None]) * rstd[:, None], mean, rstd


def _rows_backward(gxhat, xhat, rstd):
    """Input gradient of row normalisation given the gradient w.r.t. xhat."""
    return rstd[:, None] * (gxhat - gxhat.mean(axis=1, keepdims=True)
                            - xhat * (gxhat * xhat).mean(axis=1, keepdims=True))


@op()
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Layer norm over the trailing `normalized_shape` dims; returns (output, mean, rstd)."""
    check_float(input, "layer_norm")
    shape = tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.dim() - k:]) != shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} "
                               f"of shape {list(t.shape)} and normalized_shape = {list(shape)}")
    rows = input.numel() // max(1, math.prod(shape)) if math.prod(shape) else 0
    stat_shape = tuple(input.shape[:input.dim() - k]) + (1,) * k
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.layer_norm(input, rows, weight, bias, eps, stat_shape)
    x = to_array(input)
    xhat, mean, rstd = _rows_forward(x, rows, math.prod(shape), eps)
    y = xhat.reshape(x.shape)
    if weight is not None:
        y = y * to_array(weight)
    if bias is not None:
        y = y + to_array(bias)
    dt, dev = input._dtype, input._device
    return (from_array(y, dt, dev), from_array(mean.reshape(stat_shape), dt, dev),
            from_array(rstd.reshape(stat_shape), dt, dev))


@op()
def layer_norm_backward(grad_output, input, normalized_shape, mean, rstd, weight):
    """Gradients (input, weight, bias) of `native_layer_norm`."""
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.layer_norm_backward(grad_output, input, normalized_shape, mean, rstd, weight)
    k = len(normalized_shape)
    x = to_array(input)
    rows = mean.numel()
    size = math.prod(normalized_shape)
    g = to_array(grad_output).astype(np.float64).reshape(rows, size)
    m, r = to_array(mean).astype(np.float64).reshape(-1), to_array(rstd).astype(np.float64).reshape(-1)
    xhat = (x.reshape(rows, size) - m[:, None]) * r[:, None]
    w = np.ones(g.shape[1]) if weight is None else to_array(weight).astype(np.float64).reshape(-1)
    gi = _rows_backward(g * w, xhat, r).reshape(x.shape)
    shape = tuple(x.shape[x.ndim - k:])
    dt, dev = grad_output._dtype, grad_output._device
    return (from_array(gi, dt, dev), from_array((g * xhat).sum(axis=0).reshape(shape), dt, dev),
            from_array(g.sum(axis=0).reshape(shape), dt, dev))


@op()
def native_group_norm(input, weight, bias, num_groups, eps):
    """Group norm of (N, C, *) with C split into `num_groups`; returns (output, mean, rstd)."""
    check_float(input, "group_norm")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {list(input.shape)} and num_groups={num_groups}")
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.group_norm(input, weight, bias, num_groups, eps)
    x = to_array(input)
    xhat, mean, rstd = _rows_forward(x, n * num_groups, math.prod(x.shape[1:]) // num_groups, eps)
    y = xhat.reshape(x.shape)
    if weight is not None:
        y = y * _channel_view(to_array(weight), x.ndim)
    if bias is not None:
        y = y + _channel_view(to_array(bias), x.ndim)
    dt, dev = input._dtype, input._device
    return (from_array(y, dt, dev), from_array(mean.reshape(n, num_groups), dt, dev),
            from_array(rstd.reshape(n, num_groups), dt, dev))


@op()
def group_norm_backward(grad_output, input, mean, rstd, weight, num_groups):
    """Gradients (input, weight, bias) of `native_group_norm`."""
    if input._device.type == "cuda":
        from ..._backends.cuda import normalization as _cuda_norms
        return _cuda_norms.group_norm_backward(grad_output, input, mean, rstd, weight, num_groups)
    x = to_array(input)
    n, c = x.shape[:2]
    nd = x.ndim
    g = to_array(grad_output).astype(np.float64)
    m, r = to_array(mean).astype(np.float64).reshape(-1), to_array(rstd).astype(np.float64).reshape(-1)
    size = math.prod(x.shape[1:]) // num_groups  # the elements of one group
    xhat = ((x.reshape(n * num_groups, size) - m[:, None]) * r[:, None]).reshape(x.shape)
    w = np.ones(c) if weight is None else to_array(weight).astype(np.float64)
    gxhat = (g * _channel_view(w, nd)).reshape(n * num_groups, size)
    gi = _rows_backward(gxhat, xhat.reshape(n * num_groups, size), r).reshape(x.shape)
    axes = (0,) + tuple(range(2, nd))
    dt, dev = grad_output._dtype, grad_output._device
    return (from_array(gi, dt, dev), from_array((g * xhat).sum(axis=axes), dt, dev),
            from_array(g.sum(axis=axes), dt, dev))
