"""Numba loops of 2-d max pooling: the forward with PyTorch's indices, and the backward
that sums the gradient into each (sample, channel) plane at those indices.

The forward splits each output row into the columns whose windows lie inside the input
(all but one or two) and the edge columns whose windows reach into the padding. The inner
columns run window element by window element over the whole row: a compare and two
selects per element, with no bounds test, which LLVM vectorises (ResNet's 3x3/2 stem
pool measured 2.7x faster than one loop per output element that tests every window
element against the input's bounds and branches on each comparison, as the edge columns
still do). The order in which window elements are compared is row-major, as in
PyTorch, with its rule: a larger value or any NaN replaces the best so far (ties keep the
first maximum; of several NaNs the last wins). 2x2 windows that all lie inside the input
take a kernel of their own that holds each window in registers and vectorises over the
outputs of a row (on short rows the row buffers above never reach their vector loop).

Each kernel is serial over a range of (sample, channel) planes and releases the GIL: from
`PARALLEL_THRESHOLD` elements the ranges run on several threads at once
(`threads.split`), so no kernel compiles a prange twin. float32 and float64 only,
nothing at import. The kernels inline no function of another file, so Numba's on-disk
cache (keyed on this file) can never serve a stale kernel.
"""
import math

import numpy as np
from numba import njit

from .. import threads

__all__ = ["max_pool_2d", "max_pool_backward", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 16  # a split over threads costs ~20-40 us
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@njit(inline="always", error_model="numpy", boundscheck=False)
def _max_row(xf, start, stride, offset, j_lo, j_hi, best, where):
    # best[j], where[j] = xf[start + j*stride], offset where that is larger or NaN, for j
    # in [j_lo, j_hi). Inlined, so each call site compiles with its own constant stride.
    for j in range(np.uint64(j_lo), np.uint64(j_hi)):
        v = xf[start + j * stride]
        b = best[j]
        take = (v > b) | (v != v)
        mask = -np.int64(take)
        best[j] = v if take else b
        where[j] = (offset & mask) | (where[j] & ~mask)


@njit(**_OPTIONS)
def _max_pool_planes(x, kh, kw, sh, sw, ph, pw, dh, dw, values, indices, p_lo, p_hi):
    n, c, h, w = x.shape
    oh, ow = values.shape[2], values.shape[3]
    xf = x.reshape(n * c * h * w)
    vf = values.reshape(n * c * oh * ow)
    jf = indices.reshape(n * c * oh * ow)
    # Output columns [j_lo, j_hi) have every window column inside the input.
    j_lo = min((pw + sw - 1) // sw, ow)
    last = w - 1 - (kw - 1) * dw + pw  # the largest window start, padded coordinates
    j_hi = max(min(last // sw + 1 if last >= 0 else 0, ow), j_lo)
    best = np.empty(ow, x.dtype)
    where = np.empty(ow, np.int64)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        for i in range(oh):
            h0 = i * sh - ph
            # Window rows [k0, k1) fall inside the input.
            k0 = 0
            while k0 < kh and h0 + k0 * dh < 0:
                k0 += 1
            k1 = kh
            while k1 > k0 and h0 + (k1 - 1) * dh >= h:
                k1 -= 1
            row = (p * oh + i) * ow
            # Edge columns: every window element tested against the bounds.
            for t in range(j_lo + ow - j_hi):
                j = t if t < j_lo else j_hi + t - j_lo
                w0 = j * sw - pw
                top = -np.inf
                at = -1
                for ki in range(k0, k1):
                    hi = h0 + ki * dh
                    for kj in range(kw):
                        wj = w0 + kj * dw
                        if wj < 0 or wj >= w:
                            continue
                        v = xf[plane + hi * w + wj]
                        if at < 0 or v > top or v != v:
                            top = v
                            at = hi * w + wj
                vf[row + j] = top
                jf[row + j] = at
            if j_hi <= j_lo:
                continue
            if k1 <= k0:
                for j in range(j_lo, j_hi):
                    vf[row + j] = -np.inf
                    jf[row + j] = -1
                continue
            # Inner columns: window element by window element in row-major order, each
            # over the whole run of columns, into a row buffer of the best values and
            # their offsets from the window's corner; branch-free selects, unsigned
            # indices (a signed one makes Numba test it for wraparound) and the common
            # strides as constants, so that LLVM vectorises the loop (a runtime stride
            # other than 1 keeps it scalar: 2-3x slower).
            for j in range(j_lo, j_hi):
                best[j] = -np.inf
                where[j] = k0 * dh * w
            for ki in range(k0, k1):
                for kj in range(kw):
                    offset = ki * dh * w + kj * dw
                    start = np.uint64(plane + h0 * w - pw + offset)
                    if sw == 2:
                        _max_row(xf, start, np.uint64(2), offset, j_lo, j_hi, best, where)
                    elif sw == 1:
                        _max_row(xf, start, np.uint64(1), offset, j_lo, j_hi, best, where)
                    else:
                        _max_row(xf, start, np.uint64(sw), offset, j_lo, j_hi, best, where)
            corner = h0 * w - pw
            for j in range(j_lo, j_hi):
                vf[row + j] = best[j]
                jf[row + j] = corner + j * sw + where[j]


@njit(inline="always", error_model="numpy", boundscheck=False)
def _max_2x2_row(xf, vf, jf, start, corner, stride, right, down, row, count):
    # vf, jf[row + j] = the maximum of the 2x2 window at xf[start + j*stride] (elements
    # `right` and `down` apart) and its plane index (`corner`: the row's first window's),
    # for j < count: the four elements in registers, compared in row-major order by the
    # rule above with branch-free selects. Inlined, so each call site compiles with its
    # own constant stride.
    for j in range(np.uint64(count)):
        s = start + j * stride
        best = xf[s]
        at = np.int64(0)
        v = xf[s + right]
        take = (v > best) | (v != v)
        at = np.int64(right) if take else at
        best = v if take else best
        v = xf[s + down]
        take = (v > best) | (v != v)
        at = np.int64(down) if take else at
        best = v if take else best
        v = xf[s + down + right]
        take = (v > best) | (v != v)
        at = np.int64(down + right) if take else at
        best = v if take else best
        vf[row + j] = best
        jf[row + j] = corner + np.int64(j * stride) + at


@njit(**_OPTIONS)
def _max_pool_2x2_planes(x, sh, sw, dh, dw, values, indices, p_lo, p_hi):
    # `_max_pool_planes` for a 2x2 window every one of which lies inside the input (no
    # padding, and no window of ceil mode past the edge): one loop per output row, each
    # output's window in registers, no row buffers. The general kernel's buffered loop
    # over window elements vectorises only on long rows and ran scalar through memory on
    # the MNIST net's rows of 12 and 4 outputs; this one vectorises at stride 2 (measured
    # 1 thread, loaded: (64, 10, 24, 24) 2.2-2.4 -> 0.31-0.35 ms, PyTorch 2.3;
    # (8, 64, 64, 64) 2.0-2.6 -> 0.8-0.9; (4, 32, 128, 128) 2.25 -> 0.75).
    n, c, h, w = x.shape
    oh, ow = values.shape[2], values.shape[3]
    xf = x.reshape(n * c * h * w)
    vf = values.reshape(n * c * oh * ow)
    jf = indices.reshape(n * c * oh * ow)
    right, down = np.uint64(dw), np.uint64(dh * w)
    for p in range(p_lo, p_hi):
        plane = p * h * w
        for i in range(oh):
            row = np.uint64((p * oh + i) * ow)
            corner = i * sh * w
            start = np.uint64(plane + corner)
            if sw == 2:
                _max_2x2_row(xf, vf, jf, start, corner, np.uint64(2), right, down, row, ow)
            else:
                _max_2x2_row(xf, vf, jf, start, corner, np.uint64(sw), right, down, row, ow)


@njit(**_OPTIONS)
def _max_pool_backward_planes(g, index, plane_size, out, bad, p_lo, p_hi):
    # out (P, plane_size) = zeros with g (P, L) summed at index (P, L), plane by plane (no
    # two iterations write the same plane), in the order of the outputs as PyTorch sums.
    # bad[p] counts plane p's indices outside [0, plane_size) (skipped).
    length = g.shape[1]
    for p in range(p_lo, p_hi):
        bad[p] = 0
        for e in range(plane_size):
            out[p, e] = 0
        for j in range(length):
            k = index[p, j]
            if 0 <= k < plane_size:
                out[p, k] += g[p, j]
            else:
                bad[p] += 1


def _run_planes(kernel, args, planes, size):
    """kernel(*args, 0, planes); for `size` elements or more, over ranges of the planes
    on several threads at once."""
    if threads.parallel(size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: kernel(*args, lo, hi), planes, threads.part_count(), align=1)
    else:
        kernel(*args, 0, planes)


def max_pool_2d(x, kernel, stride, padding, dilation, out):
    """Max pooling of float (N, C, H, W) with implicit -inf padding: (values, int64
    indices), the indices flat positions in each (n, c) plane of the unpadded input."""
    n, c, h, w = x.shape
    values = np.empty((n, c) + tuple(out), x.dtype)
    indices = np.empty((n, c) + tuple(out), np.int64)
    if (tuple(kernel) == (2, 2) and tuple(padding) == (0, 0)
            and (out[0] - 1) * stride[0] + dilation[0] < h and (out[1] - 1) * stride[1] + dilation[1] < w):
        _run_planes(_max_pool_2x2_planes, (np.ascontiguousarray(x), stride[0], stride[1], dilation[0], dilation[1],
                                           values, indices), n * c, x.size * 4)
        return values, indices
    _run_planes(_max_pool_planes, (np.ascontiguousarray(x), kernel[0], kernel[1], stride[0], stride[1],
                                   padding[0], padding[1], dilation[0], dilation[1], values, indices),
                n * c, x.size * math.prod(kernel))
    return values, indices


def max_pool_backward(g, index, plane_size):
    """(P, plane_size) planes of zeros with float `g` (P, L) summed at int64 `index`
    (P, L). Raises IndexError for an index outside [0, plane_size)."""
    planes = g.shape[0]
    out = np.empty((planes, plane_size), g.dtype)
    bad = np.empty(planes, np.int64)
    _run_planes(_max_pool_backward_planes, (np.ascontiguousarray(g), np.ascontiguousarray(index), plane_size, out,
                                            bad), planes, out.size)
    if bad.any():
        raise IndexError(f"max_pool_backward: an index is outside the planes of {plane_size} elements")
    return out
