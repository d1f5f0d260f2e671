"""CPU convolution (N-d, strided, padded, dilated, grouped) by im2col + BLAS.

Forward (1-d and 2-d): a Numba im2col lays the padded input out as (C*K, N*L) columns,
and one BLAS GEMM per group multiplies them by the (O/G, C/G*K) weight matrix; 3-d
convolutions use a strided window view of the input and a batched `np.matmul`.
The two backward functions are the adjoints of that product: `backward_input` (col2im)
and `backward_weight`. Arrays arrive in their compute dtype (half types as float32).
"""
import math

import numpy as np

from ..lazy import lazy
from ..plan import output_size
from .windows import add_windows, crop_spatial, pad_spatial, windows

__all__ = ["forward", "backward_input", "backward_weight", "add_channel_bias"]

cpu_nn = lazy("cpu.kernels.nn")  # Numba loads on first use


def _im2col(x, kernel, stride, padding, dilation, groups):
    """(N, G, C/G*K, L) columns of input `x` and the output spatial shape (N-d, NumPy)."""
    n, c = x.shape[:2]
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x.shape[2:], kernel, stride, padding, dilation))
    view = windows(pad_spatial(x, padding), kernel, stride, dilation, out)
    cols = view.reshape(n, groups, (c // groups) * math.prod(kernel), math.prod(out))
    return cols, out


def _as_2d(x, kernel, stride, padding, dilation):
    """A 1-d problem as a 2-d one with height 1 (so one compiled kernel serves both)."""
    if len(kernel) == 2:
        return x, kernel, stride, padding, dilation
    return (x[:, :, None, :], (1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
            (1,) + tuple(dilation))


def _columns_2d(x, kernel, stride, padding, dilation):
    """(C*K, N*L) columns of a 1-d or 2-d input (Numba im2col) and the output shape."""
    x2, kernel, stride, padding, dilation = _as_2d(x, kernel, stride, padding, dilation)
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x2.shape[2:], kernel, stride, padding, dilation))
    # Scratch memory: every caller consumes the columns before the next im2col.
    return cpu_nn.im2col_2d(pad_spatial(x2, padding), kernel, stride, dilation, out, scratch=True), out


def _per_sample(cols, n):
    """(C*K, N*L) columns viewed as (N, C*K, L), no copy."""
    return cols.reshape(cols.shape[0], n, cols.shape[1] // n if n else 0).transpose(1, 0, 2)


def _grouped_matmul(a, b, groups, transpose_a=False):
    """Block-diagonal product: group g of the rows of `a` (transposed on request) times
    group g of the rows of `b`, the results stacked by rows."""
    parts = [(p.T if transpose_a else p) @ q for p, q in zip(np.split(a, groups), np.split(b, groups))]
    return parts[0] if groups == 1 else np.concatenate(parts, axis=0)


def forward(x, w, stride, padding, dilation, groups):
    """Convolution of x (N, C, *S) with w (O, C/G, *K): (N, O, *out)."""
    n, o = x.shape[0], w.shape[0]
    kernel = w.shape[2:]
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        y = np.matmul(w.reshape(groups, o // groups, cols.shape[2]), cols)
        return y.reshape((n, o) + out)
    # One large GEMM per group, (O/G, C/G*K) @ (C/G*K, N*L), then one transposing copy to
    # (N, O, L). Batched per-sample GEMMs would skip the copy, but with a threaded BLAS on
    # a busy machine N small calls cost up to 10x more (measured), so the big GEMM it is.
    cols, out = _columns_2d(x, kernel, stride, padding, dilation)
    y = _grouped_matmul(w.reshape(o, cols.shape[0] // groups), cols, groups)
    out = out[-len(kernel):]
    return np.ascontiguousarray(y.reshape(o, n, math.prod(out)).transpose(1, 0, 2)).reshape((n, o) + out)


def _grad_rows(gy):
    """grad (N, O, *out) as (O, N*L), the layout of the weight-gradient GEMM."""
    n, o = gy.shape[:2]
    length = math.prod(gy.shape[2:])
    return np.ascontiguousarray(gy.reshape(n, o, length).transpose(1, 0, 2)).reshape(o, n * length)


def backward_input(gy, w, input_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. x of spatial `input_size`: col2im of W^T @ grad."""
    n, o = gy.shape[:2]
    c = w.shape[1] * groups
    kernel, out = w.shape[2:], gy.shape[2:]
    if len(kernel) > 2:
        wm = w.reshape(groups, o // groups, (c // groups) * math.prod(kernel))
        g = gy.reshape(n, groups, o // groups, math.prod(out))  # explicit sizes: n may be 0
        gcols = np.matmul(wm.transpose(0, 2, 1), g).reshape((n, c) + tuple(kernel) + tuple(out))
        padded = (n, c) + tuple(s + 2 * p for s, p in zip(input_size, padding))
        gx = add_windows(gcols, padded, kernel, stride, dilation, out)
        return crop_spatial(gx, padding, input_size)
    gcols = _per_sample(_grouped_matmul(w.reshape(o, math.prod(w.shape[1:])), _grad_rows(gy), groups,
                                        transpose_a=True), n)
    if len(kernel) == 1:
        kernel, stride, padding, dilation = ((1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
                                             (1,) + tuple(dilation))
        input_size, out = (1,) + tuple(input_size), (1,) + tuple(out)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(input_size, padding))
    gx = crop_spatial(cpu_nn.col2im_2d(gcols, padded, kernel, stride, dilation, out), padding, input_size)
    return gx.reshape((n, c) + tuple(input_size)[-len(w.shape[2:]):])


def backward_weight(gy, x, weight_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. w of shape `weight_size`: grad @ cols^T (summed over the batch)."""
    n, o = gy.shape[:2]
    kernel = tuple(weight_size[2:])
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        g = gy.reshape(n, groups, o // groups, math.prod(out))
        gw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)
        return gw.reshape(weight_size)
    cols, _ = _columns_2d(x, kernel, stride, padding, dilation)
    rows = _grad_rows(gy)
    # cols @ rows^T, then transposed: OpenBLAS is ~20x slower on the same product taken
    # as rows @ cols^T (a short, very deep GEMM) on this machine.
    gw = np.concatenate([(q @ p.T).T for p, q in zip(np.split(rows, groups), np.split(cols, groups))])
    return gw.reshape(weight_size)


def add_channel_bias(y, bias):
    """y (N, O, *S) += bias (O,) broadcast over the batch and positions, in place."""
    y += bias.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y
