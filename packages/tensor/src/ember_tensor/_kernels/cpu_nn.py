"""Numba loops of the nn kernels that NumPy cannot express as one vectorised call:
2-d im2col / col2im (the data movement around convolution's GEMM) and 2-d max pooling
with indices.

Each loop body is compiled twice: a `prange` version for large inputs and a serial one
below `PARALLEL_THRESHOLD` elements, where starting threads costs more than the work.
Nothing compiles at import; a dtype compiles on first use (float32 and float64 only:
half types reach here as float32). The bodies inline no function of another file, so
Numba's on-disk cache (keyed on this file) can never serve a stale kernel.
"""
import math

import numpy as np
from numba import njit, prange

__all__ = ["im2col_2d", "col2im_2d", "max_pool_2d", "PARALLEL_THRESHOLD"]

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
                for j in range(ow):
                    cols[r, row + j] = xp[b, ci, src, j * sw + kj * dw]


def _col2im_body(cols, kh, kw, sh, sw, dh, dw, oh, ow, out):
    n, c = out.shape[0], out.shape[1]
    k = kh * kw
    plane = oh * ow
    # One (sample, channel) plane per iteration: no two iterations write the same element.
    for p in prange(n * c):
        b = p // c
        ci = p % c
        for kk in range(k):
            r = ci * k + kk
            ki = kk // kw
            kj = kk % kw
            base = b * plane
            for i in range(oh):
                dst = i * sh + ki * dh
                row = base + i * ow
                for j in range(ow):
                    out[b, ci, dst, j * sw + kj * dw] += cols[r, row + j]


def _max_pool_body(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, values, indices):
    n, c, h, w = x.shape
    for p in prange(n * c):
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


_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")
_im2col_serial = njit(**_OPTIONS)(_im2col_body)
_im2col_parallel = njit(parallel=True, **_OPTIONS)(_im2col_body)
_col2im_serial = njit(**_OPTIONS)(_col2im_body)
_col2im_parallel = njit(parallel=True, **_OPTIONS)(_col2im_body)
_max_pool_serial = njit(**_OPTIONS)(_max_pool_body)
_max_pool_parallel = njit(parallel=True, **_OPTIONS)(_max_pool_body)


def im2col_2d(xp, kernel, stride, dilation, out):
    """Columns (C*kh*kw, N*oh*ow) of the padded input `xp` (N, C, Hp, Wp)."""
    n, c = xp.shape[:2]
    cols = np.empty((c * kernel[0] * kernel[1], n * out[0] * out[1]), xp.dtype)
    fn = _im2col_parallel if cols.size >= PARALLEL_THRESHOLD else _im2col_serial
    fn(np.ascontiguousarray(xp), kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
       out[0], out[1], cols)
    return cols


def col2im_2d(cols, padded_shape, kernel, stride, dilation, out):
    """Adjoint of `im2col_2d`: sum columns back into a zero array of `padded_shape`."""
    result = np.zeros(padded_shape, cols.dtype)
    fn = _col2im_parallel if cols.size >= PARALLEL_THRESHOLD else _col2im_serial
    fn(np.ascontiguousarray(cols), kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1],
       out[0], out[1], result)
    return result


def max_pool_2d(x, kernel, stride, padding, dilation, out):
    """Max pooling of (N, C, H, W) with implicit -inf padding: (values, int64 indices)."""
    n, c = x.shape[:2]
    values = np.empty((n, c) + tuple(out), x.dtype)
    indices = np.empty((n, c) + tuple(out), np.int64)
    fn = _max_pool_parallel if x.size * math.prod(kernel) >= PARALLEL_THRESHOLD else _max_pool_serial
    fn(np.ascontiguousarray(x), kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1],
       dilation[0], dilation[1], out[0], out[1], values, indices)
    return values, indices
