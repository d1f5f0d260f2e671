"""CUDA batch norm, layer norm and group norm, and their backward: the same functions as
`_backends.cpu.normalization` over device arrays.

Operands become flat C-contiguous device arrays (`rows.flat_operand`), the kernels of
`kernels.normalization` run with float64 statistics (a thread block per channel or
row), and the results come back shaped: nothing goes through the host. Batch norm's
running statistics are updated in place on the device (unbiased variance).
"""
import math

import numpy as np

from . import storage
from .rows import blocks, flat_operand, launch_flat, launch_rows, optional_operand, shaped
from .kernels import normalization as K
from .kernels.loops import SIMULATOR

__all__ = ["batch_norm", "batch_norm_backward", "layer_norm", "layer_norm_backward", "group_norm",
           "group_norm_backward"]


# --- batch norm ----------------------------------------------------------------------------

def _bn_layout(x):
    n, c = x.shape[0], x.shape[1]
    return n, c, (x.size // (n * c)) if n * c else 0


def _update_running(running, batch_value, momentum, factor):
    """running = (1 - momentum) * running + momentum * factor * batch_value, in place."""
    if running.dtype in (np.float32, np.float64):
        launch_flat(K.running_update, running.size, running, batch_value, float(momentum), float(factor))
    else:  # half types: update a float32 copy and convert it back in place
        wide = storage.astype(running, np.float32)
        launch_flat(K.running_update, wide.size, wide, batch_value, float(momentum), float(factor))
        storage.copy_(running, wide)


def batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd) of batch norm over dim 1 of x (N, C, *); in
    training the running statistics (arrays in their storage dtype, or None) are
    updated in place with the unbiased batch variance."""
    n, c, inner = _bn_layout(x)
    flat_x = flat_operand(x)
    if training:
        mean = storage.empty((c,), np.float64)
        var = storage.empty((c,), np.float64)
        if c:
            launch_rows(K.channel_stats, c, n * inner, flat_x, n, c, inner, mean, var)
        count = n * inner
        if running_mean is not None:
            _update_running(running_mean, mean, momentum, 1.0)
        if running_var is not None:
            _update_running(running_var, var, momentum, count / (count - 1))
    else:
        mean = flat_operand(running_mean, np.float64)
        var = flat_operand(running_var, np.float64)
    invstd = storage.empty((c,), np.float64)
    scale = storage.empty((c,), np.float64)
    shift = storage.empty((c,), np.float64)
    w, has_w = optional_operand(weight, mean, np.float64)
    b, has_b = optional_operand(bias, mean, np.float64)
    launch_flat(K.channel_coefficients, c, mean, var, w, b, has_w, has_b, float(eps), invstd, scale, shift)
    y = storage.empty((flat_x.size,), flat_x.dtype)
    launch_flat(K.channel_affine, flat_x.size, flat_x, c, max(inner, 1), scale, shift, y)
    return shaped(y, x.shape), mean, invstd


def batch_norm_backward(grad_output, x, weight, save_mean, save_invstd, training):
    """(grad_input, grad_weight, grad_bias) of batch norm from its saved statistics."""
    n, c, inner = _bn_layout(x)
    flat_x = flat_operand(x)
    g = flat_operand(grad_output, flat_x.dtype)
    mean = flat_operand(save_mean, np.float64)
    invstd = flat_operand(save_invstd, np.float64)
    sum_g, sum_gxhat = channel_grad_sums(g, flat_x, n, c, inner, mean, invstd, 0, 1)
    w, has_w = optional_operand(weight, mean, np.float64)
    gi = storage.empty((flat_x.size,), flat_x.dtype)
    launch_flat(K.batch_norm_input_grad, flat_x.size, g, flat_x, c, max(inner, 1), mean, invstd, w, has_w,
                sum_g, sum_gxhat, float(n * inner), bool(training), gi)
    return shaped(gi, x.shape), sum_gxhat, sum_g


def channel_grad_sums(g, x, batch, channels, inner, mean, rstd, stat_batch_stride, group_size):
    """Per-channel (sum g, sum g * xhat) of flat (batch, channels, inner) arrays, float64."""
    sum_g = storage.empty((channels,), np.float64)
    sum_gxhat = storage.empty((channels,), np.float64)
    if channels:
        if batch * inner:
            launch_rows(K.channel_grad_sums, channels, batch * inner, g, x, batch, channels, inner,
                         mean, rstd, stat_batch_stride, group_size, sum_g, sum_gxhat)
        else:
            storage.fill_(sum_g, 0)
            storage.fill_(sum_gxhat, 0)
    return sum_g, sum_gxhat


# --- layer norm and group norm (rows of contiguous elements) -------------------------------
# Layer norm: a row per leading index, groups = inner = 1 (the affine channel of an
# element is its place in the row). Group norm: a row per (sample, group), `groups`
# groups of C / groups channels of `inner` spatial elements.

def _row_norm(x, n_rows, groups, inner, weight, bias, eps, stat_shape):
    flat_x = flat_operand(x)
    size = flat_x.size // n_rows if n_rows else 0
    y = storage.empty((flat_x.size,), flat_x.dtype)
    mean = storage.empty((n_rows,), np.float64)
    rstd = storage.empty((n_rows,), np.float64)
    w, has_w = optional_operand(weight, mean, np.float64)
    b, has_b = optional_operand(bias, mean, np.float64)
    if n_rows and size:
        launch_rows(K.norm_rows, n_rows, size, flat_x, n_rows, size, groups, inner, float(eps), w, b,
                    has_w, has_b, y, mean, rstd)
    elif n_rows:  # empty rows: NaN statistics, as NumPy's mean of nothing on the CPU
        storage.fill_(mean, np.nan)
        storage.fill_(rstd, np.nan)
    return shaped(y, x.shape), shaped(mean, stat_shape), shaped(rstd, stat_shape)


def _row_norm_backward(grad_output, x, n_rows, groups, inner, mean, rstd, weight):
    """(grad_input, then the flat g, x, mean, rstd its callers sum the affine grads from)."""
    flat_x = flat_operand(x)
    g = flat_operand(grad_output, flat_x.dtype)
    m = flat_operand(mean, np.float64)
    r = flat_operand(rstd, np.float64)
    size = flat_x.size // n_rows if n_rows else 0
    w, has_w = optional_operand(weight, m, np.float64)
    gi = storage.empty((flat_x.size,), flat_x.dtype)
    if n_rows and size:
        launch_rows(K.norm_rows_backward, n_rows, size, g, flat_x, n_rows, size, groups, inner, m, r, w,
                    has_w, gi)
    return shaped(gi, x.shape), g, flat_x, m, r


def layer_norm(x, n_rows, weight, bias, eps, stat_shape):
    """(output, mean, rstd) of layer norm over `n_rows` equal trailing blocks of x; the
    statistics shaped `stat_shape`."""
    return _row_norm(x, n_rows, 1, 1, weight, bias, eps, stat_shape)


def layer_norm_backward(grad_output, x, normalized_shape, mean, rstd, weight):
    """(grad_input, grad_weight, grad_bias) of layer norm."""
    n_rows = mean.size
    gi, g, flat_x, m, r = _row_norm_backward(grad_output, x, n_rows, 1, 1, mean, rstd, weight)
    size = math.prod(normalized_shape)
    sum_g, sum_gxhat = _column_grad_sums(g, flat_x, n_rows, size, m, r)
    shape = tuple(normalized_shape)
    return gi, shaped(sum_gxhat, shape), shaped(sum_g, shape)


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
    busy = 4 if SIMULATOR else blocks(1 << 30) * 256  # threads that keep the GPU occupied
    chunks = max(1, min(-(-busy // size), -(-n_rows // _COLUMN_CHUNK_MIN)))
    chunk = -(-n_rows // chunks)
    chunks = -(-n_rows // chunk)
    partial_g = storage.empty((chunks * size,), np.float64)
    partial_gxhat = storage.empty((chunks * size,), np.float64)
    launch_flat(K.column_grad_partials, chunks * size, g, x, n_rows, size, mean, rstd, chunk, partial_g,
                 partial_gxhat)
    launch_flat(K.column_sums, size, partial_g, partial_gxhat, chunks, size, sum_g, sum_gxhat)
    return sum_g, sum_gxhat


def group_norm(x, weight, bias, num_groups, eps):
    """(output, mean, rstd) of group norm of x (N, C, *) with `num_groups` groups."""
    n, _, inner = _bn_layout(x)
    return _row_norm(x, n * num_groups, num_groups, max(inner, 1), weight, bias, eps, (n, num_groups))


def group_norm_backward(grad_output, x, mean, rstd, weight, num_groups):
    """(grad_input, grad_weight, grad_bias) of group norm."""
    n, c, inner = _bn_layout(x)
    gi, g, flat_x, m, r = _row_norm_backward(grad_output, x, n * num_groups, num_groups, max(inner, 1),
                                             mean, rstd, weight)
    sum_g, sum_gxhat = channel_grad_sums(g, flat_x, n, c, inner, m, r, num_groups, c // num_groups)
    return gi, sum_gxhat, sum_g
