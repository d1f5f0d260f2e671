"""Numba loops of layer norm: each row of contiguous elements normalised in one read for
its statistics and one for its output, and the backward in two reads of a row, where the
NumPy expression made a dozen float64 temporaries. Statistics and sums accumulate in
float64; outputs and input gradients are stored in the input's dtype. For float32 input
the elementwise arithmetic runs in float32 (as PyTorch's), which halves the vector work
and drops the conversions: the forward's output pass (statistics still float64; 1024 rows
of 128: 89 -> 61 us) and the whole backward (148 -> 56 us), whose weight and bias column
sums gather float32 partial sums of `_FLUSH_ROWS` rows into float64. The loops may
reassociate their sums (fastmath "reassoc" only: no contraction, no finite-math
assumptions), which lets LLVM vectorise a row's sum, where a strict order made each
add wait for the last: 1024 rows of 128 float32, forward 294 -> 87 us, backward 207 -> 108 us.

Each kernel is serial over a range of rows and releases the GIL: from
`PARALLEL_THRESHOLD` elements the ranges run on several threads at once
(`threads.split`), as the batch norm loops of `nn.py` do (no prange twin to compile). The
bodies inline no function of another file, so Numba's on-disk cache (keyed on this file)
can never serve a stale kernel.
"""
import numpy as np
from numba import njit

from .. import threads

__all__ = ["layer_norm_forward", "layer_norm_backward", "output_affine", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 16  # a split over threads costs ~20-40 us
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})


@njit(**_OPTIONS)
def _forward_rows(x, weight, bias, eps, out, mean, rstd, r_lo, r_hi):
    # x, out: (rows, size); weight, bias: (size,) (ones and zeros when absent), float64,
    # or float32 for float32 x. Two passes for the statistics in float64 (the mean, then
    # the centred squares), as accurate as Welford for a row in cache, and vectorisable;
    # the output pass in weight's dtype (the statistics rounded to it once a row).
    size = x.shape[1]
    stats = np.empty(2, weight.dtype)
    for r in range(r_lo, r_hi):
        total = 0.0
        for i in range(size):
            total += x[r, i]
        m = total / size
        squares = 0.0
        for i in range(size):
            d = x[r, i] - m
            squares += d * d
        rs = 1.0 / np.sqrt(squares / size + eps)
        mean[r] = m
        rstd[r] = rs
        stats[0] = m
        stats[1] = rs
        m_out = stats[0]
        rs_out = stats[1]
        for i in range(size):
            out[r, i] = (x[r, i] - m_out) * rs_out * weight[i] + bias[i]


@njit(**_OPTIONS)
def _backward_rows(g, x, mean, rstd, weight, gi, gw, gb, r_lo, r_hi):
    # With xhat = (x - mean) * rstd and gx = g * weight, the input gradient of a row is
    # rstd * (gx - mean(gx) - xhat * mean(gx * xhat)); gw and gb (float64, (size,)) gather
    # the column sums of g * xhat and g over rows r_lo .. r_hi.
    size = x.shape[1]
    for r in range(r_lo, r_hi):
        m = mean[r]
        rs = rstd[r]
        sum_gx = 0.0
        sum_gx_xhat = 0.0
        for i in range(size):
            xhat = (x[r, i] - m) * rs
            gv = g[r, i]
            gx = gv * weight[i]
            sum_gx += gx
            sum_gx_xhat += gx * xhat
            gw[i] += gv * xhat
            gb[i] += gv
        mean_gx = sum_gx / size
        mean_gx_xhat = sum_gx_xhat / size
        for i in range(size):
            xhat = (x[r, i] - m) * rs
            gi[r, i] = rs * (g[r, i] * weight[i] - mean_gx - xhat * mean_gx_xhat)


# Rows whose float32 column sums are added into the float64 totals at once: a partial sum
# of 32 rows loses no more than the row sums themselves, and the flush is 1/32 of a row.
_FLUSH_ROWS = 32


@njit(**_OPTIONS)
def _backward_rows_float32(g, x, mean, rstd, weight, gi, gw, gb, r_lo, r_hi):
    # `_backward_rows` for float32 g and x with float32 weight: the same formula in float32
    # arithmetic (mean and rstd rounded to float32 per row); gw and gb stay float64 totals.
    size = x.shape[1]
    part_w = np.zeros(size, np.float32)
    part_b = np.zeros(size, np.float32)
    inv_size = np.float32(1.0 / size)
    for r in range(r_lo, r_hi):
        m = np.float32(mean[r])
        rs = np.float32(rstd[r])
        sum_gx = np.float32(0.0)
        sum_gx_xhat = np.float32(0.0)
        for i in range(size):
            xhat = (x[r, i] - m) * rs
            gv = g[r, i]
            gx = gv * weight[i]
            sum_gx += gx
            sum_gx_xhat += gx * xhat
            part_w[i] += gv * xhat
            part_b[i] += gv
        mean_gx = sum_gx * inv_size
        mean_gx_xhat = sum_gx_xhat * inv_size
        for i in range(size):
            xhat = (x[r, i] - m) * rs
            gi[r, i] = rs * (g[r, i] * weight[i] - mean_gx - xhat * mean_gx_xhat)
        if (r - r_lo) % _FLUSH_ROWS == _FLUSH_ROWS - 1 or r == r_hi - 1:
            for i in range(size):
                gw[i] += part_w[i]
                gb[i] += part_b[i]
                part_w[i] = 0.0
                part_b[i] = 0.0


def output_affine(dtype, weight, bias):
    """The float64 `weight` and `bias` in the dtype `_forward_rows` computes the output of
    `dtype` input in: float32 for float32 (the module docstring), else float64. The fused
    prologues (`fused_layer_norm`) pass theirs through this too, to keep eager's bits."""
    if dtype == np.float32:
        return weight.astype(np.float32), bias.astype(np.float32)
    return weight, bias


def layer_norm_forward(x2, weight, bias, eps):
    """(output in x2's dtype, mean, rstd in float64) of each row of contiguous x2 (rows,
    size); `weight`, `bias`: float64 (size,)."""
    weight, bias = output_affine(x2.dtype, weight, bias)
    rows = x2.shape[0]
    out = np.empty_like(x2)
    mean, rstd = np.empty(rows), np.empty(rows)
    args = (x2, weight, bias, float(eps), out, mean, rstd)
    if threads.parallel(x2.size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: _forward_rows(*args, lo, hi), rows, threads.part_count(), align=1)
    else:
        _forward_rows(*args, 0, rows)
    return out, mean, rstd


def layer_norm_backward(g2, x2, mean, rstd, weight):
    """(grad_input in x2's dtype, grad_weight, grad_bias in float64) for contiguous (rows,
    size) g2 and x2 in the same dtype, float64 mean/rstd (rows,) and weight (size,)."""
    rows, size = x2.shape
    gi = np.empty_like(x2)
    kernel = _backward_rows
    if x2.dtype == np.float32:
        kernel, weight = _backward_rows_float32, weight.astype(np.float32)
    if not threads.parallel(x2.size, PARALLEL_THRESHOLD):
        gw, gb = np.zeros(size), np.zeros(size)
        kernel(g2, x2, mean, rstd, weight, gi, gw, gb, 0, rows)
        return gi, gw, gb
    parts = []

    def part(lo, hi):
        # Each range sums its own columns; they are added in row order below, so the
        # result does not depend on which thread finished first.
        sums = (np.zeros(size), np.zeros(size))
        kernel(g2, x2, mean, rstd, weight, gi, sums[0], sums[1], lo, hi)
        parts.append((lo, sums))
    threads.split(part, rows, threads.part_count(), align=1)
    parts.sort(key=lambda p: p[0])
    gw, gb = parts[0][1]
    for _, (w, b) in parts[1:]:
        gw += w
        gb += b
    return gi, gw, gb
