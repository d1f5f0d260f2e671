"""Numba loops of the nn kernels that NumPy cannot express as one vectorised call:
2-d im2col / col2im (the data movement around convolution's GEMM), 2-d max pooling
with indices, and batch norm's statistics, affine step and backward (two or three passes
over the data where the NumPy expression makes ten).

Each kernel is serial over a range of tasks (channels, or (sample, channel) planes) and
releases the GIL: from `PARALLEL_THRESHOLD` elements the task ranges run on several
threads at once (`threads.split`), so no kernel compiles a prange twin (which compiles
3-5x slower, and a first training step is mostly compiling). Nothing compiles at import; a dtype compiles on first use (float32 and float64 only:
half types reach here as float32). The bodies inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import math
import threading

import numpy as np
from numba import njit

from .. import threads

__all__ = ["im2col_2d", "col2im_2d", "max_pool_2d", "batch_norm_stats", "batch_norm_apply",
           "batch_norm_backward", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 16  # a split over threads costs ~20-40 us
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def _im2col(xp, kh, kw, sh, sw, dh, dw, oh, ow, cols, t_lo, t_hi):
    # Task r fills row r of the columns (one channel and kernel offset).
    n = xp.shape[0]
    k = kh * kw
    plane = oh * ow
    for r in range(t_lo, t_hi):
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


@njit(**_OPTIONS)
def _col2im(cols, kh, kw, sh, sw, dh, dw, oh, ow, out, t_lo, t_hi):
    # cols: (N, C*K, L), one sample's columns per leading index (the layout of a batched
    # W^T @ grad product).
    c = out.shape[1]
    k = kh * kw
    # One (sample, channel) plane per iteration: no two iterations write the same element.
    for p in range(t_lo, t_hi):
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


@njit(**_OPTIONS)
def _max_pool(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, values, indices, t_lo, t_hi):
    n, c, h, w = x.shape
    for p in range(t_lo, t_hi):
        b = p // c
        ci = p % c
        for i in range(oh):
            h0 = i * sh - ph
            for j in range(ow):
                w0 = j * sw - pw
                best = -np.inf
                where = -1
                for ki in range(kh):
                    hi = h0 + ki * dh
                    if hi < 0 or hi >= h:
                        continue
                    for kj in range(kw):
                        wj = w0 + kj * dw
                        if wj < 0 or wj >= w:
                            continue
                        v = x[b, ci, hi, wj]
                        # NaN wins, as in PyTorch.
                        if where < 0 or v > best or v != v:
                            best = v
                            where = hi * w + wj
                            if v != v:
                                break
                    if best != best:
                        break
                values[b, ci, i, j] = best
                indices[b, ci, i, j] = where


@njit(**_OPTIONS)
def _bn_stats(x, mean, var, t_lo, t_hi):
    # x: (N, C, L). Two passes per channel in float64 (the mean first, then the centred
    # squares): as accurate as Welford for these sizes, and vectorisable.
    n, c, length = x.shape
    count = n * length
    for ci in range(t_lo, t_hi):
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


@njit(**_OPTIONS)
def _bn_apply(x, scale, shift, out, t_lo, t_hi):
    n, c, length = x.shape
    for p in range(t_lo, t_hi):
        b = p // c
        ci = p % c
        a = scale[ci]
        s = shift[ci]
        for i in range(length):
            out[b, ci, i] = x[b, ci, i] * a + s


@njit(**_OPTIONS)
def _bn_backward(g, x, mean, invstd, weight, training, gi, gw, gb, t_lo, t_hi):
    n, c, length = x.shape
    count = n * length
    for ci in range(t_lo, t_hi):
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


def _run(kernel, args, tasks, size):
    """kernel(*args, 0, tasks); for `size` elements or more, over ranges of the tasks on
    several threads at once."""
    if threads.parallel(size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*args, lo, hi), tasks, threads.part_count(), align=1)
    else:
        kernel(*args, 0, tasks)


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
    _run(_im2col, (np.ascontiguousarray(xp), kernel[0], kernel[1], stride[0], stride[1], dilation[0],
                   dilation[1], out[0], out[1], cols), shape[0], cols.size)
    return cols


def col2im_2d(cols, padded_shape, kernel, stride, dilation, out):
    """Adjoint of `im2col_2d`, from per-sample columns (N, C*K, L): sum them back into a
    zero array of `padded_shape`."""
    result = np.zeros(padded_shape, cols.dtype)
    # A contiguous copy first: the loop over a strided view measured 10x slower than the copy.
    _run(_col2im, (np.ascontiguousarray(cols), kernel[0], kernel[1], stride[0], stride[1], dilation[0],
                   dilation[1], out[0], out[1], result), padded_shape[0] * padded_shape[1], cols.size)
    return result


def max_pool_2d(x, kernel, stride, padding, dilation, out):
    """Max pooling of (N, C, H, W) with implicit -inf padding: (values, int64 indices)."""
    n, c = x.shape[:2]
    values = np.empty((n, c) + tuple(out), x.dtype)
    indices = np.empty((n, c) + tuple(out), np.int64)
    _run(_max_pool, (np.ascontiguousarray(x), kernel[0], kernel[1], stride[0], stride[1], padding[0],
                     padding[1], dilation[0], dilation[1], out[0], out[1], values, indices),
         n * c, x.size * math.prod(kernel))
    return values, indices


def batch_norm_stats(x3):
    """Per-channel (mean, biased variance) in float64 of x3 (N, C, L)."""
    c = x3.shape[1]
    mean, var = np.empty(c), np.empty(c)
    _run(_bn_stats, (np.ascontiguousarray(x3), mean, var), c, x3.size)
    return mean, var


def batch_norm_apply(x3, scale, shift):
    """x3 * scale[c] + shift[c] for x3 (N, C, L), in x3's dtype."""
    out = np.empty_like(x3)
    _run(_bn_apply, (np.ascontiguousarray(x3), scale.astype(x3.dtype), shift.astype(x3.dtype), out),
         x3.shape[0] * x3.shape[1], x3.size)
    return out


def batch_norm_backward(g3, x3, mean, invstd, weight, training):
    """(grad_input, grad_weight, grad_bias) of batch norm for (N, C, L) arrays."""
    c = x3.shape[1]
    gi = np.empty_like(x3)
    gw, gb = np.empty(c), np.empty(c)
    _run(_bn_backward, (np.ascontiguousarray(g3, dtype=x3.dtype), np.ascontiguousarray(x3), mean.astype(np.float64),
                        invstd.astype(np.float64), weight.astype(np.float64), bool(training), gi, gw, gb),
         c, x3.size)
    return gi, gw, gb
