"""CPU batch norm, layer norm and group norm, and their backward.

Arrays in, arrays out: `x` and the affine `weight`/`bias` in float32/float64 (half types
arrive as float32), statistics returned in float64, outputs and input gradients in x's
dtype, all C-contiguous. Batch norm runs the fused Numba loops of `kernels.nn` (two
passes for the statistics, one for the output, accumulating in float64), where the
composite of mean/var/sub/mul would make many more; layer norm runs the row loops of
`kernels.layer_norm` (likewise), group norm normalises rows of contiguous elements with
NumPy. The backward passes use the closed form
    dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
over each normalised group.
"""
import math

import numpy as np

from ..lazy import lazy

__all__ = ["batch_norm", "batch_norm_backward", "layer_norm", "layer_norm_backward", "group_norm",
           "group_norm_backward"]

K = lazy("cpu.kernels.nn")  # Numba loads on first use
LN = lazy("cpu.kernels.layer_norm")

# Every function returns C-contiguous arrays (a tensor's storage is one), so results
# computed from a strided input are made contiguous once, on the way out.


def _channel_view(a, ndim):
    """A per-channel (C,) array shaped to broadcast against (N, C, *spatial)."""
    return a.reshape((1, -1) + (1,) * (ndim - 2))


def _update_running(running, batch_value, momentum):
    """running = (1 - momentum) * running + momentum * batch_value, in place in its dtype."""
    running[...] = (1 - momentum) * running + momentum * batch_value.astype(running.dtype)


def batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd) of batch norm over dim 1 of x (N, C, *); in
    training the running statistics (arrays in their storage dtype, or None) are
    updated in place with the unbiased batch variance."""
    n, c = x.shape[0], x.shape[1]
    inner = x.size // (n * c) if n * c else 0
    x3 = x.reshape(n, c, inner)
    if training:
        mean, var = K.batch_norm_stats(x3)
        count = n * inner
        if running_mean is not None:
            _update_running(running_mean, mean, momentum)
        if running_var is not None:
            _update_running(running_var, var * count / (count - 1), momentum)
    else:
        mean = running_mean.astype(np.float64)
        var = running_var.astype(np.float64)
    invstd = 1.0 / np.sqrt(var + eps)
    scale = invstd if weight is None else invstd * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    y = K.batch_norm_apply(x3, scale, shift).reshape(x.shape)
    return np.ascontiguousarray(y), mean, invstd


def batch_norm_backward(grad_output, x, weight, save_mean, save_invstd, training):
    """(grad_input, grad_weight, grad_bias) of batch norm from its saved statistics."""
    n, c = x.shape[:2]
    x3 = x.reshape(n, c, x.size // (n * c) if n * c else 0)
    g3 = grad_output.reshape(x3.shape)
    w = np.ones(c) if weight is None else weight
    gi, gw, gb = K.batch_norm_backward(g3, x3, save_mean, save_invstd, w, training)
    return np.ascontiguousarray(gi.reshape(x.shape)), gw, gb


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


def _float64_rows(a, size, fill):
    """`a` (or `fill` everywhere when None) as a float64 (size,) array."""
    return np.full(size, fill) if a is None else np.ascontiguousarray(a, np.float64).reshape(size)


def layer_norm(x, n_rows, weight, bias, eps, stat_shape):
    """(output, mean, rstd) of layer norm over `n_rows` equal trailing blocks of x; the
    statistics shaped `stat_shape`."""
    # The row length (with no rows, the affine parameters' length, if any).
    size = x.size // n_rows if n_rows else next((a.size for a in (weight, bias) if a is not None), 0)
    x2 = np.ascontiguousarray(x).reshape(n_rows, size)  # (not -1: no rows cannot infer it)
    y, mean, rstd = LN.layer_norm_forward(x2, _float64_rows(weight, size, 1.0), _float64_rows(bias, size, 0.0), eps)
    return y.reshape(x.shape), mean.reshape(stat_shape), rstd.reshape(stat_shape)


def layer_norm_backward(grad_output, x, normalized_shape, mean, rstd, weight):
    """(grad_input, grad_weight, grad_bias) of layer norm."""
    rows = mean.size
    size = math.prod(normalized_shape)
    x2 = np.ascontiguousarray(x).reshape(rows, size)
    g2 = np.ascontiguousarray(grad_output, x.dtype).reshape(rows, size)
    gi, gw, gb = LN.layer_norm_backward(g2, x2, np.ascontiguousarray(mean, np.float64).reshape(rows),
                                        np.ascontiguousarray(rstd, np.float64).reshape(rows),
                                        _float64_rows(weight, size, 1.0))
    shape = tuple(x.shape[x.ndim - len(normalized_shape):])
    return gi.reshape(x.shape), gw.reshape(shape), gb.reshape(shape)


def group_norm(x, weight, bias, num_groups, eps):
    """(output, mean, rstd) of group norm of x (N, C, *) with `num_groups` groups."""
    n = x.shape[0]
    xhat, mean, rstd = _rows_forward(x, n * num_groups, math.prod(x.shape[1:]) // num_groups, eps)
    y = xhat.reshape(x.shape)
    if weight is not None:
        y = y * _channel_view(weight, x.ndim)
    if bias is not None:
        y = y + _channel_view(bias, x.ndim)
    return y, mean.reshape(n, num_groups), rstd.reshape(n, num_groups)


def group_norm_backward(grad_output, x, mean, rstd, weight, num_groups):
    """(grad_input, grad_weight, grad_bias) of group norm."""
    n, c = x.shape[:2]
    nd = x.ndim
    g = grad_output.astype(np.float64)
    m, r = mean.astype(np.float64).reshape(-1), rstd.astype(np.float64).reshape(-1)
    size = math.prod(x.shape[1:]) // num_groups  # the elements of one group
    xhat = ((x.reshape(n * num_groups, size) - m[:, None]) * r[:, None]).reshape(x.shape)
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    gxhat = (g * _channel_view(w, nd)).reshape(n * num_groups, size)
    gi = _rows_backward(gxhat, xhat.reshape(n * num_groups, size), r).reshape(x.shape)
    axes = (0,) + tuple(range(2, nd))
    return gi, (g * xhat).sum(axis=axes), g.sum(axis=axes)
