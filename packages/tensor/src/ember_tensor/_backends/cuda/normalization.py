"""Batch norm, layer norm and group norm (and their backward) on CUDA tensors.

The CUDA halves of `_ops.nn.normalization`, which checks the arguments (shared with the
CPU) and calls here for CUDA inputs. Operands become flat C-contiguous device arrays in
their compute dtype (float32 for float16/bfloat16) through `_backends.cuda.rows`' helpers, the
kernels of `_backends.cuda.kernels.normalization` run with float64 statistics, and the results are cast
back on the device: nothing goes through the host. Batch norm's running statistics are
updated in place on the device (unbiased variance), bumping the buffers' versions.
"""
import math

import numpy as np

from . import storage
from .rows import _blocks, _compute, _launch_flat, _launch_rows, _on_device, _optional, _result
from .kernels import normalization as K
from .kernels.loops import SIMULATOR

__all__ = ["batch_norm", "batch_norm_backward", "layer_norm", "layer_norm_backward", "group_norm",
           "group_norm_backward"]


# --- batch norm ----------------------------------------------------------------------------

def _bn_layout(input):
    n, c = input.shape[0], input.shape[1]
    return n, c, (input.numel() // (n * c)) if n * c else 0


def _update_running(buffer, batch_value, momentum, factor):
    """buffer = (1 - momentum) * buffer + momentum * factor * batch_value, on its storage."""
    data = buffer._data
    if data.dtype in (np.float32, np.float64):
        _launch_flat(K.running_update, data.size, data, batch_value, float(momentum), float(factor))
    else:  # half types: update a float32 copy and convert it back in place
        wide = storage.astype(data, np.float32)
        _launch_flat(K.running_update, wide.size, wide, batch_value, float(momentum), float(factor))
        storage.copy_(data, wide)
    buffer._bump_version()


@_on_device
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd) of checked operands; running stats updated in training."""
    n, c, inner = _bn_layout(input)
    x = _compute(input)
    if training:
        mean = storage.empty((c,), np.float64)
        var = storage.empty((c,), np.float64)
        if c:
            _launch_rows(K.channel_stats, c, n * inner, x, n, c, inner, mean, var)
        count = n * inner
        if running_mean is not None:
            _update_running(running_mean, mean, momentum, 1.0)
        if running_var is not None:
            _update_running(running_var, var, momentum, count / (count - 1))
    else:
        mean = _compute(running_mean, np.float64)
        var = _compute(running_var, np.float64)
    invstd = storage.empty((c,), np.float64)
    scale = storage.empty((c,), np.float64)
    shift = storage.empty((c,), np.float64)
    w, has_w = _optional(weight, mean, np.float64)
    b, has_b = _optional(bias, mean, np.float64)
    _launch_flat(K.channel_coefficients, c, mean, var, w, b, has_w, has_b, float(eps), invstd, scale, shift)
    y = storage.empty((x.size,), x.dtype)
    _launch_flat(K.channel_affine, x.size, x, c, max(inner, 1), scale, shift, y)
    dt, dev = input._dtype, input._device
    return _result(y, input.shape, dt, dev), _result(mean, (c,), dt, dev), _result(invstd, (c,), dt, dev)


@_on_device
def batch_norm_backward(grad_output, input, weight, save_mean, save_invstd, training):
    """(grad_input, grad_weight, grad_bias) of batch norm from its saved statistics."""
    n, c, inner = _bn_layout(input)
    x = _compute(input)
    g = _compute(grad_output, x.dtype)
    mean = _compute(save_mean, np.float64)
    invstd = _compute(save_invstd, np.float64)
    sum_g, sum_gxhat = channel_grad_sums(g, x, n, c, inner, mean, invstd, 0, 1)
    w, has_w = _optional(weight, mean, np.float64)
    gi = storage.empty((x.size,), x.dtype)
    _launch_flat(K.batch_norm_input_grad, x.size, g, x, c, max(inner, 1), mean, invstd, w, has_w,
                 sum_g, sum_gxhat, float(n * inner), bool(training), gi)
    dt, dev = grad_output._dtype, grad_output._device
    return (_result(gi, input.shape, dt, dev), _result(sum_gxhat, (c,), dt, dev),
            _result(sum_g, (c,), dt, dev))


def channel_grad_sums(g, x, batch, channels, inner, mean, rstd, stat_batch_stride, group_size):
    """Per-channel (sum g, sum g * xhat) of flat (batch, channels, inner) arrays, float64."""
    sum_g = storage.empty((channels,), np.float64)
    sum_gxhat = storage.empty((channels,), np.float64)
    if channels:
        if batch * inner:
            _launch_rows(K.channel_grad_sums, channels, batch * inner, g, x, batch, channels, inner,
                         mean, rstd, stat_batch_stride, group_size, sum_g, sum_gxhat)
        else:
            storage.fill_(sum_g, 0)
            storage.fill_(sum_gxhat, 0)
    return sum_g, sum_gxhat


# --- layer norm and group norm (rows of contiguous elements) -------------------------------
# Layer norm: a row per leading index, groups = inner = 1 (the affine channel of an
# element is its place in the row). Group norm: a row per (sample, group), `groups`
# groups of C / groups channels of `inner` spatial elements.

def _row_norm(input, n_rows, groups, inner, weight, bias, eps, stat_shape):
    x = _compute(input)
    size = x.size // n_rows if n_rows else 0
    y = storage.empty((x.size,), x.dtype)
    mean = storage.empty((n_rows,), np.float64)
    rstd = storage.empty((n_rows,), np.float64)
    w, has_w = _optional(weight, mean, np.float64)
    b, has_b = _optional(bias, mean, np.float64)
    if n_rows and size:
        _launch_rows(K.norm_rows, n_rows, size, x, n_rows, size, groups, inner, float(eps), w, b,
                     has_w, has_b, y, mean, rstd)
    elif n_rows:  # empty rows: NaN statistics, as NumPy's mean of nothing on the CPU
        storage.fill_(mean, np.nan)
        storage.fill_(rstd, np.nan)
    dt, dev = input._dtype, input._device
    return (_result(y, input.shape, dt, dev), _result(mean, stat_shape, dt, dev),
            _result(rstd, stat_shape, dt, dev))


def _row_norm_backward(grad_output, input, n_rows, groups, inner, mean, rstd, weight):
    """(grad_input, then the flat g, x, mean, rstd its callers sum the affine grads from)."""
    x = _compute(input)
    g = _compute(grad_output, x.dtype)
    m = _compute(mean, np.float64)
    r = _compute(rstd, np.float64)
    size = x.size // n_rows if n_rows else 0
    w, has_w = _optional(weight, m, np.float64)
    gi = storage.empty((x.size,), x.dtype)
    if n_rows and size:
        _launch_rows(K.norm_rows_backward, n_rows, size, g, x, n_rows, size, groups, inner, m, r, w,
                     has_w, gi)
    return _result(gi, input.shape, grad_output._dtype, grad_output._device), g, x, m, r


@_on_device
def layer_norm(input, n_rows, weight, bias, eps, stat_shape):
    """(output, mean, rstd) of layer norm over `n_rows` equal trailing blocks of `input`."""
    return _row_norm(input, n_rows, 1, 1, weight, bias, eps, stat_shape)


@_on_device
def layer_norm_backward(grad_output, input, normalized_shape, mean, rstd, weight):
    """(grad_input, grad_weight, grad_bias) of layer norm."""
    n_rows = mean.numel()
    gi, g, x, m, r = _row_norm_backward(grad_output, input, n_rows, 1, 1, mean, rstd, weight)
    size = math.prod(normalized_shape)
    sum_g, sum_gxhat = _column_grad_sums(g, x, n_rows, size, m, r)
    dt, dev = grad_output._dtype, grad_output._device
    shape = tuple(normalized_shape)
    return gi, _result(sum_gxhat, shape, dt, dev), _result(sum_g, shape, dt, dev)


# Rows per chunk of the column sums: enough chunks to give every SM work (the simulator
# takes 2 rows, so that several chunks are added up in the tests).
_COLUMN_CHUNK_MIN = 2 if SIMULATOR else 32


def _column_grad_sums(g, x, n_rows, size, mean, rstd):
    """Per-column (sum g, sum g * xhat) of flat (n_rows, size) arrays, float64, in two passes."""
    sum_g = storage.empty((size,), np.float64)
    sum_gxhat = storage.empty((size,), np.float64)
    if not size:
        return sum_g, sum_gxhat
    if not n_rows:
        storage.fill_(sum_g, 0)
        storage.fill_(sum_gxhat, 0)
        return sum_g, sum_gxhat
    busy = 4 if SIMULATOR else _blocks(1 << 30) * 256  # threads that keep the GPU occupied
    chunks = max(1, min(-(-busy // size), -(-n_rows // _COLUMN_CHUNK_MIN)))
    chunk = -(-n_rows // chunks)
    chunks = -(-n_rows // chunk)
    partial_g = storage.empty((chunks * size,), np.float64)
    partial_gxhat = storage.empty((chunks * size,), np.float64)
    _launch_flat(K.column_grad_partials, chunks * size, g, x, n_rows, size, mean, rstd, chunk, partial_g,
                 partial_gxhat)
    _launch_flat(K.column_sums, size, partial_g, partial_gxhat, chunks, size, sum_g, sum_gxhat)
    return sum_g, sum_gxhat


@_on_device
def group_norm(input, weight, bias, num_groups, eps):
    """(output, mean, rstd) of group norm of (N, C, *) with `num_groups` groups."""
    n, _, inner = _bn_layout(input)
    return _row_norm(input, n * num_groups, num_groups, max(inner, 1), weight, bias, eps, (n, num_groups))


@_on_device
def group_norm_backward(grad_output, input, mean, rstd, weight, num_groups):
    """(grad_input, grad_weight, grad_bias) of group norm."""
    n, c, inner = _bn_layout(input)
    gi, g, x, m, r = _row_norm_backward(grad_output, input, n * num_groups, num_groups, max(inner, 1),
                                        mean, rstd, weight)
    sum_g, sum_gxhat = channel_grad_sums(g, x, n, c, inner, m, r, num_groups, c // num_groups)
    dt, dev = grad_output._dtype, grad_output._device
    return gi, _result(sum_gxhat, (c,), dt, dev), _result(sum_g, (c,), dt, dev)
