"""Numba loops of the nn kernels that NumPy cannot express as one vectorised call:
2-d im2col / col2im (the data movement around convolution's GEMM) and batch norm's
statistics, affine step and backward (two or three passes over the data where the NumPy
expression makes ten).

Each loop body is compiled twice: a `prange` version for large inputs and a serial one
below `PARALLEL_THRESHOLD` elements, where starting threads costs more than the work.
Nothing compiles at import; a dtype compiles on first use (float32 and float64 only:
half types reach here as float32). The bodies inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import math
import threading

import numpy as np
from numba import prange

from .. import threads
from .twins import serial_and_parallel

__all__ = ["im2col_2d", "col2im_2d", "batch_norm_stats", "batch_norm_apply",
           "batch_norm_backward", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 15


def _im2col_body(xp, kh, kw, sh, sw, dh, dw, oh, ow, cols):
    n, c = xp.shape[0], xp.shape[1]
    k = kh * kw
    plane = oh * ow
    for r in prange(c * k):
        ci = r // k
        ki = (r % k) // kw
        kj = r % kw
        for b in range(n):
            base = b * plane
            for i in range(oh):
                src = i * sh + ki * dh
                row = base + i * ow
                if sw == 1:
                    # Unit stride: a contiguous run the compiler vectorises.
                    cols[r, row:row + ow] = xp[b, ci, src, kj * dw:kj * dw + ow]
                else:
                    for j in range(ow):
                        cols[r, row + j] = xp[b, ci, src, j * sw + kj * dw]


def _col2im_body(cols, kh, kw, sh, sw, dh, dw, oh, ow, out):
    # cols: (N, C*K, L), one sample's columns per leading index (the layout of a batched
    # W^T @ grad product).
    n, c = out.shape[0], out.shape[1]
    k = kh * kw
    # One (sample, channel) plane per iteration: no two iterations write the same element.
    for p in prange(n * c):
        b = p // c
        ci = p % c
        for kk in range(k):
            r = ci * k + kk
            ki = kk // kw
            kj = kk % kw
            for i in range(oh):
                dst = i * sh + ki * dh
                row = i * ow
                if sw == 1:
                    out[b, ci, dst, kj * dw:kj * dw + ow] += cols[b, r, row:row + ow]
                else:
                    for j in range(ow):
                        out[b, ci, dst, j * sw + kj * dw] += cols[b, r, row + j]


def _bn_stats_body(x, mean, var):
    # x: (N, C, L). Two passes per channel in float64 (the mean first, then the centred
    # squares): as accurate as Welford for these sizes, and vectorisable.
    n, c, length = x.shape
    count = n * length
    for ci in prange(c):
        total = 0.0
        for b in range(n):
            for i in range(length):
                total += x[b, ci, i]
        m = total / count
        sq = 0.0
        for b in range(n):
            for i in range(length):
                d = x[b, ci, i] - m
                sq += d * d
        mean[ci] = m
        var[ci] = sq / count


def _bn_apply_body(x, scale, shift, out):
    n, c, length = x.shape
    for p in prange(n * c):
        b = p // c
        ci = p % c
        a = scale[ci]
        s = shift[ci]
        for i in range(length):
            out[b, ci, i] = x[b, ci, i] * a + s


def _bn_backward_body(g, x, mean, invstd, weight, training, gi, gw, gb):
    n, c, length = x.shape
    count = n * length
    for ci in prange(c):
        m = mean[ci]
        r = invstd[ci]
        sum_g = 0.0
        sum_gx = 0.0
        for b in range(n):
            for i in range(length):
                gv = g[b, ci, i]
                sum_g += gv
                sum_gx += gv * (x[b, ci, i] - m) * r
        gb[ci] = sum_g
        gw[ci] = sum_gx
        a = weight[ci] * r
        if training:
            mean_g = sum_g / count
            mean_gx = sum_gx / count
            for b in range(n):
                for i in range(length):
                    xhat = (x[b, ci, i] - m) * r
                    gi[b, ci, i] = (g[b, ci, i] - mean_g - xhat * mean_gx) * a
        else:
            for b in range(n):
                for i in range(length):
                    gi[b, ci, i] = g[b, ci, i] * a


_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
_im2col_serial, _im2col_parallel = serial_and_parallel(_im2col_body, **_OPTIONS)
_col2im_serial, _col2im_parallel = serial_and_parallel(_col2im_body, **_OPTIONS)
_bn_stats_serial, _bn_stats_parallel = serial_and_parallel(_bn_stats_body, **_OPTIONS)
_bn_apply_serial, _bn_apply_parallel = serial_and_parallel(_bn_apply_body, **_OPTIONS)
_bn_backward_serial, _bn_backward_parallel = serial_and_parallel(_bn_backward_body, **_OPTIONS)


def _pick(serial, parallel, size):
    return parallel if threads.parallel(size, PARALLEL_THRESHOLD) else serial


_workspace = threading.local()


def _scratch(shape, dtype):
    """A reusable per-thread buffer for im2col columns. Fresh memory of that size costs
    page faults (~15 ms for the 37 MB of a 64-channel 3x3 conv on a 64x16x16 batch);
    the columns never outlive the op that made them, so one buffer per thread serves."""
    size = math.prod(shape)
    key = np.dtype(dtype).str
    buf = getattr(_workspace, key, None)
    if buf is None or buf.size < size:
        buf = np.empty(size, dtype)
        setattr(_workspace, key, buf)
    return buf[:size].reshape(shape)


def im2col_2d(xp, kernel, stride, dilation, out, scratch=False):
    """Columns (C*kh*kw, N*oh*ow) of the padded input `xp` (N, C, Hp, Wp); in the
    thread's scratch buffer when `scratch` (valid until the next im2col_2d call)."""
    n, c = xp.shape[:2]
    shape = (c * kernel[0] * kernel[1], n * out[0] * out[1])
    cols = _scratch(shape, xp.dtype) if scratch else np.empty(shape, xp.dtype)
    fn = _im2col_parallel if threads.parallel(cols.size, PARALLEL_THRESHOLD) else _im2col_serial
    fn(np.ascontiguousarray(xp), kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
       out[0], out[1], cols)
    return cols


def col2im_2d(cols, padded_shape, kernel, stride, dilation, out):
    """Adjoint of `im2col_2d`, from per-sample columns (N, C*K, L): sum them back into a
    zero array of `padded_shape`."""
    result = np.zeros(padded_shape, cols.dtype)
    fn = _col2im_parallel if threads.parallel(cols.size, PARALLEL_THRESHOLD) else _col2im_serial
    # A contiguous copy first: the loop over a strided view measured 10x slower than the copy.
    fn(np.ascontiguousarray(cols), kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
       out[0], out[1], result)
    return result


def batch_norm_stats(x3):
    """Per-channel (mean, biased variance) in float64 of x3 (N, C, L)."""
    c = x3.shape[1]
    mean, var = np.empty(c), np.empty(c)
    _pick(_bn_stats_serial, _bn_stats_parallel, x3.size)(np.ascontiguousarray(x3), mean, var)
    return mean, var


def batch_norm_apply(x3, scale, shift):
    """x3 * scale[c] + shift[c] for x3 (N, C, L), in x3's dtype."""
    out = np.empty_like(x3)
    _pick(_bn_apply_serial, _bn_apply_parallel, x3.size)(
        np.ascontiguousarray(x3), scale.astype(x3.dtype), shift.astype(x3.dtype), out)
    return out


def batch_norm_backward(g3, x3, mean, invstd, weight, training):
    """(grad_input, grad_weight, grad_bias) of batch norm for (N, C, L) arrays."""
    c = x3.shape[1]
    gi = np.empty_like(x3)
    gw, gb = np.empty(c), np.empty(c)
    _pick(_bn_backward_serial, _bn_backward_parallel, x3.size)(
        np.ascontiguousarray(g3, dtype=x3.dtype), np.ascontiguousarray(x3), mean.astype(np.float64),
        invstd.astype(np.float64), weight.astype(np.float64), bool(training), gi, gw, gb)
    return gi, gw, gb
