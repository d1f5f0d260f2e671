"""Numba loops of the blocked 2-d convolution: an im2col that pads as it copies, and its
adjoint, a col2im that drops the padding as it sums.

`im2col_block` lays a few samples of an *unpadded* input out as (B, C*kh*kw, oh*ow)
columns, writing the zeros of the padding itself (no padded copy of the input), so that
the GEMM of each sample can write its output straight into the sample's (O, oh*ow) rows
of the NCHW result; `col2im_block` sums such columns back into a block of samples (the
input gradient). The caller keeps the block small enough for the columns to stay in the
core's cache between the copy and the GEMM. Both also take the whole-batch layout
(C*kh*kw, B*oh*ow), one matrix for one GEMM over the batch (small outputs). Without
padding and at unit column stride (valid convolutions: LeNet, the MNIST net) each takes
a kernel with no bounds and no zero runs, one plain loop per output row: on short rows
the general kernels' per-run bookkeeping cost more than the copy itself.

Each kernel is serial, over a range of (sample, channel) planes, and releases the GIL:
a large block runs it over ranges of planes on several threads at once (`threads.split`),
so neither compiles a prange twin. float32 and float64 only, nothing at import. The
kernels inline no function of another file, so Numba's on-disk cache (keyed on this
file) can never serve a stale kernel.
"""
import functools
import math
import threading

import numpy as np
from numba import njit

from .. import threads

__all__ = ["im2col_block", "col2im_block", "scratch", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 16  # elements of columns: a split over threads costs ~20-40 us
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@functools.lru_cache(maxsize=256)
def _window_bounds(k, dilation, padding, stride, size, out):
    """(lo, hi) read-only int64 arrays: for kernel offset i, the output positions
    [lo[i], hi[i]) whose window element i falls inside the input (the others read the
    padding). The kernels take them found: integer divisions in their copy loops cost as
    much as the copy. Plain Python on a dozen offsets at most, memoised, where a Numba
    helper cost ~0.3 s of a cold start."""
    lo, hi = np.empty(k, np.int64), np.empty(k, np.int64)
    for i in range(k):
        off = i * dilation - padding
        j0 = min(0 if off >= 0 else (stride - 1 - off) // stride, out)
        lo[i], hi[i] = j0, max(min((size - off + stride - 1) // stride if size > off else 0, out), j0)
    lo.flags.writeable = hi.flags.writeable = False
    return lo, hi


# Three im2col kernels (general, "same" padding at unit stride, no padding at unit column
# stride), not one with branches: a step compiles only the ones its layers run (the
# general one alone compiled in about 2/3 of the time of two paths together).
@njit(**_OPTIONS)
def _im2col_planes(x, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cf, sample_stride, row_stride, row_lo, row_hi, col_lo,
                   col_hi, p_lo, p_hi):
    # Column row r of sample b starts at cf[b * sample_stride + r * row_stride].
    nb, c, h, w = x.shape
    length = oh * ow
    # Flat views and unsigned offsets: the runs are short (a row of the output, often
    # 8-32 elements), and a signed index makes Numba test it for wraparound on every
    # element, which stops LLVM from vectorising the copy (measured 3x slower).
    xf = x.reshape(nb * c * h * w)
    usw = np.uint64(sw)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        first_row = (p % c) * kh * kw
        sample = (p // c) * sample_stride
        for ki in range(kh):
            top = ki * dh - ph
            i0, i1 = row_lo[ki], row_hi[ki]
            for kj in range(kw):
                off = kj * dw - pw
                j0, j1 = col_lo[kj], col_hi[kj]
                dst = sample + (first_row + ki * kw + kj) * row_stride
                for j in range(np.uint64(dst), np.uint64(dst + i0 * ow)):
                    cf[j] = 0
                for j in range(np.uint64(dst + i1 * ow), np.uint64(dst + length)):
                    cf[j] = 0
                for i in range(i0, i1):
                    d = np.uint64(dst + i * ow)
                    src = np.uint64(plane + (i * sh + top) * w + off)
                    for j in range(np.uint64(j0)):
                        cf[d + j] = 0
                    for j in range(np.uint64(j0), np.uint64(j1)):
                        cf[d + j] = xf[src + j * usw]
                    for j in range(np.uint64(j1), np.uint64(ow)):
                        cf[d + j] = 0


@njit(**_OPTIONS)
def _im2col_planes_flat(x, kh, kw, ph, pw, dh, dw, oh, cf, sample_stride, row_stride, row_lo, row_hi, col_lo, col_hi,
                        p_lo, p_hi):
    # `_im2col_planes` for unit strides with an output as wide as the input ("same"
    # padding): the rows of one kernel offset are a single shifted run of the input plane,
    # copied in one loop; the columns that wrapped around to the neighbouring row are
    # zeroed after.
    nb, c, h, w = x.shape
    ow = w
    length = oh * ow
    xf = x.reshape(nb * c * h * w)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        first_row = (p % c) * kh * kw
        sample = (p // c) * sample_stride
        for ki in range(kh):
            top = ki * dh - ph
            i0, i1 = row_lo[ki], row_hi[ki]
            for kj in range(kw):
                off = kj * dw - pw
                j0, j1 = col_lo[kj], col_hi[kj]
                dst = sample + (first_row + ki * kw + kj) * row_stride
                for j in range(np.uint64(dst), np.uint64(dst + i0 * ow)):
                    cf[j] = 0
                for j in range(np.uint64(dst + i1 * ow), np.uint64(dst + length)):
                    cf[j] = 0
                if i1 > i0:
                    first = np.uint64(dst + i0 * ow + j0)
                    last = np.uint64(dst + (i1 - 1) * ow + j1)
                    shift = np.uint64(plane + (i0 + top) * w + off + j0) - first  # wraps: fine, unsigned
                    for j in range(first, last):
                        cf[j] = xf[shift + j]
                # Column by column down the rows, a strided loop of stores: row by row,
                # LLVM makes each one- or two-element zero run a memset call.
                step = np.uint64(ow)
                for j in range(j0):
                    for e in range(np.uint64(dst + i0 * ow + j), np.uint64(dst + i1 * ow + j), step):
                        cf[e] = 0
                for j in range(j1, ow):
                    for e in range(np.uint64(dst + i0 * ow + j), np.uint64(dst + i1 * ow + j), step):
                        cf[e] = 0


@njit(**_OPTIONS)
def _im2col_planes_inside(x, kh, kw, sh, dh, dw, oh, ow, cf, sample_stride, row_stride, p_lo, p_hi):
    # `_im2col_planes` without padding and with unit column stride: every window lies
    # inside the input, so each row of the output is one plain copy, with no bounds and
    # no zero runs around it. On short rows (the MNIST net's second layer, runs of 8)
    # the general kernel's three loops per run cost more than the copy: 27 against 15
    # us for 4 samples of (10, 12, 12) to 8x8 (a fill of the same columns: 8.5).
    nb, c, h, w = x.shape
    xf = x.reshape(nb * c * h * w)
    uow = np.uint64(ow)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        first_row = (p % c) * kh * kw
        sample = (p // c) * sample_stride
        for ki in range(kh):
            for kj in range(kw):
                dst = np.uint64(sample + (first_row + ki * kw + kj) * row_stride)
                src = np.uint64(plane + ki * dh * w + kj * dw)
                for i in range(oh):
                    d = dst + np.uint64(i) * uow
                    s = src + np.uint64(i * sh * w)
                    for j in range(uow):
                        cf[d + j] = xf[s + j]


@njit(**_OPTIONS)
def _col2im_planes(cf, sample_stride, row_stride, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, x, row_lo, row_hi, col_lo,
                   col_hi, p_lo, p_hi):
    # The adjoint of the body above: x (B, C, H, W) = the sum of the columns back over
    # the windows, padding dropped. One (sample, channel) plane per iteration: no two
    # iterations write the same element.
    nb, c, h, w = x.shape
    xf = x.reshape(nb * c * h * w)
    usw = np.uint64(sw)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        for e in range(np.uint64(plane), np.uint64(plane + h * w)):
            xf[e] = 0
        first_row = (p % c) * kh * kw
        sample = (p // c) * sample_stride
        for ki in range(kh):
            top = ki * dh - ph
            for kj in range(kw):
                off = kj * dw - pw
                j0, j1 = col_lo[kj], col_hi[kj]
                src = sample + (first_row + ki * kw + kj) * row_stride
                for i in range(row_lo[ki], row_hi[ki]):
                    d = np.uint64(plane + (i * sh + top) * w + off)
                    s = np.uint64(src + i * ow)
                    for j in range(np.uint64(j0), np.uint64(j1)):
                        xf[d + j * usw] += cf[s + j]


@njit(**_OPTIONS)
def _col2im_planes_inside(cf, sample_stride, row_stride, kh, kw, sh, dh, dw, oh, ow, x, p_lo, p_hi):
    # The adjoint of `_im2col_planes_inside` (no padding, unit column stride): each row
    # of the columns summed into its run of the plane with no bounds.
    nb, c, h, w = x.shape
    xf = x.reshape(nb * c * h * w)
    uow = np.uint64(ow)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        for e in range(np.uint64(plane), np.uint64(plane + h * w)):
            xf[e] = 0
        first_row = (p % c) * kh * kw
        sample = (p // c) * sample_stride
        for ki in range(kh):
            for kj in range(kw):
                src = np.uint64(sample + (first_row + ki * kw + kj) * row_stride)
                dst = np.uint64(plane + ki * dh * w + kj * dw)
                for i in range(oh):
                    d = dst + np.uint64(i * sh * w)
                    s = src + np.uint64(i) * uow
                    for j in range(uow):
                        xf[d + j] += cf[s + j]


def _run_planes(kernel, args, planes, parallel, size):
    """kernel(*args, 0, planes), or for a large block (`size` elements of columns) over
    ranges of the planes on several threads at once."""
    if parallel and threads.parallel(size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*args, lo, hi), planes, threads.part_count(), align=1)
    else:
        kernel(*args, 0, planes)


def _layout(cols, samples):
    """(flat view, sample stride, row stride) of columns laid out per sample (B, R, L) or
    as one matrix (R, B*L), the layout of a whole-batch GEMM."""
    if not cols.flags.c_contiguous:  # the flat view would be a copy, and writes to it lost
        raise ValueError("im2col/col2im columns must be C-contiguous")
    if cols.ndim == 3:
        return cols.reshape(-1), cols.shape[1] * cols.shape[2], cols.shape[2]
    return cols.reshape(-1), cols.shape[1] // samples if samples else 0, cols.shape[1]


def _bounds(shape, kernel, stride, padding, dilation, out):
    """(row_lo, row_hi, col_lo, col_hi) of `_window_bounds` for a (B, C, H, W) input."""
    return (_window_bounds(kernel[0], dilation[0], padding[0], stride[0], shape[2], out[0])
            + _window_bounds(kernel[1], dilation[1], padding[1], stride[1], shape[3], out[1]))


def im2col_block(x, kernel, stride, padding, dilation, out, cols, parallel=False):
    """Fill the columns `cols` with the im2col columns of the unpadded, C-contiguous input
    block `x` (B, C, H, W), zero where a window reaches into the `padding` (which may be
    negative: a crop). `cols` is C-contiguous, per sample (B, R >= C*kh*kw, oh*ow: rows
    past C*kh*kw are the caller's) or one matrix (C*kh*kw, B*oh*ow). Runs on several
    threads when `parallel` and the block is large enough. Returns `cols`."""
    flat, sample_stride, row_stride = _layout(cols, x.shape[0])
    bounds = _bounds(x.shape, kernel, stride, padding, dilation, out)
    if padding[0] == 0 and padding[1] == 0 and stride[1] == 1:
        planes, args = _im2col_planes_inside, (x, kernel[0], kernel[1], stride[0], dilation[0], dilation[1],
                                               out[0], out[1], flat, sample_stride, row_stride)
    elif stride[0] == 1 and stride[1] == 1 and out[1] == x.shape[3]:
        planes, args = _im2col_planes_flat, (x, kernel[0], kernel[1], padding[0], padding[1], dilation[0],
                                             dilation[1], out[0], flat, sample_stride, row_stride) + bounds
    else:
        planes, args = _im2col_planes, (x, kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1],
                                        dilation[0], dilation[1], out[0], out[1], flat, sample_stride,
                                        row_stride) + bounds
    _run_planes(planes, args, x.shape[0] * x.shape[1], parallel, cols.size)
    return cols


def col2im_block(cols, kernel, stride, padding, dilation, out, x, parallel=False):
    """The adjoint of `im2col_block`: overwrite the C-contiguous block `x` (B, C, H, W)
    with the sum of the columns `cols` (either layout of `im2col_block`) over their
    windows (the parts in the `padding` dropped). Runs on several threads when
    `parallel` and the block is large enough. Returns `x`."""
    flat, sample_stride, row_stride = _layout(cols, x.shape[0])
    if padding[0] == 0 and padding[1] == 0 and stride[1] == 1:
        _run_planes(_col2im_planes_inside, (flat, sample_stride, row_stride, kernel[0], kernel[1], stride[0],
                                            dilation[0], dilation[1], out[0], out[1], x),
                    x.shape[0] * x.shape[1], parallel, cols.size)
        return x
    _run_planes(_col2im_planes, (flat, sample_stride, row_stride, kernel[0], kernel[1], stride[0], stride[1],
                                 padding[0], padding[1], dilation[0], dilation[1], out[0], out[1], x)
                + _bounds(x.shape, kernel, stride, padding, dilation, out),
                x.shape[0] * x.shape[1], parallel, cols.size)
    return x


_workspace = threading.local()


def scratch(shape, dtype):
    """A reusable per-thread buffer for a block's columns: valid until the next call from
    the same thread (a block is consumed by its GEMM before the next one is laid out)."""
    size = math.prod(shape)
    key = np.dtype(dtype).str
    buf = getattr(_workspace, key, None)
    if buf is None or buf.size < size:
        buf = np.empty(size, dtype)
        setattr(_workspace, key, buf)
    return buf[:size].reshape(shape)
