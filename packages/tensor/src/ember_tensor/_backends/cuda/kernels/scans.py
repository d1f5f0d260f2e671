"""Numba CUDA kernels for scans along rows: cumsum/cumprod, cummax/cummin, logcumsumexp.

Rows lie in a contiguous (rows, n) buffer. Each row is cut into `nchunks` chunks of
`size` elements and a scan runs in three grid-stride passes, one thread per chunk:
  *_totals   each chunk's own total (sum, product, (best, index) or log-sum-exp)
  *_carries  one thread per row turns its chunk totals into exclusive carries, in place
  *_scan     each chunk is scanned again starting from its carry
With many rows (or short ones) nchunks is 1 and only the last pass runs (with the
identity as carry): a thread per row. Few long rows get many chunks, so that every
GPU thread has work. The scan of a chunk is the CPU's loop (`_backends.cpu.kernels.index`), so cummax /
cummin keep its rules exactly (NaN sticks, an equal value moves the index forward);
sums and products differ from the CPU's only by the rounding of the chunked order.
Complex logcumsumexp (rare) runs one thread a row (`lse_rows_complex`).
"""
import cmath
import math

from numba import cuda

__all__ = ["acc_totals", "acc_carries", "acc_scan", "extreme_totals", "extreme_carries", "extreme_scan",
           "lse_totals", "lse_carries", "lse_scan", "lse_rows_complex"]


@cuda.jit(device=True)
def _accumulate(is_prod, acc, x):
    return acc * x if is_prod else acc + x


@cuda.jit(cache=True)
def acc_totals(rows, n, nchunks, size, is_prod, identity, totals):
    """totals[t] = sum (or product) of chunk t % nchunks of row t // nchunks."""
    for t in range(cuda.grid(1), totals.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        acc = identity
        for i in range(lo, min(lo + size, n)):
            acc = _accumulate(is_prod, acc, rows[r * n + i])
        totals[t] = acc


@cuda.jit(cache=True)
def acc_carries(totals, nchunks, is_prod, identity):
    """Each row's chunk totals replaced by the sum (product) of the chunks before it."""
    for r in range(cuda.grid(1), totals.size // nchunks, cuda.gridsize(1)):
        acc = identity
        for c in range(r * nchunks, (r + 1) * nchunks):
            x = totals[c]
            totals[c] = acc
            acc = _accumulate(is_prod, acc, x)


@cuda.jit(cache=True)
def acc_scan(rows, n, nchunks, size, is_prod, carries, out):
    """Running sums (products) of each chunk, starting from the chunk's carry."""
    for t in range(cuda.grid(1), carries.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        acc = carries[t]
        for i in range(r * n + lo, r * n + min(lo + size, n)):
            acc = _accumulate(is_prod, acc, rows[i])
            out[i] = acc


@cuda.jit(device=True)
def _replaces(take_max, best, x):
    # The CPU's rule: a NaN sticks once seen (each later NaN moves the index to itself);
    # an equal value moves the index forward.
    if x != x:
        return True
    if best != best:
        return False
    return x >= best if take_max else x <= best


@cuda.jit(cache=True)
def extreme_totals(rows, n, nchunks, size, take_max, best_of, at_of):
    """(value, index) of each chunk's running extreme at its end."""
    for t in range(cuda.grid(1), at_of.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        best = rows[r * n + lo]
        at = lo
        for i in range(lo, min(lo + size, n)):
            x = rows[r * n + i]
            if _replaces(take_max, best, x):
                best = x
                at = i
        best_of[t] = best
        at_of[t] = at


@cuda.jit(cache=True)
def extreme_carries(best_of, at_of, nchunks, take_max):
    """Each chunk's (value, index) replaced by the running extreme of the chunks before it
    (index -1: none, for a row's first chunk)."""
    for r in range(cuda.grid(1), at_of.size // nchunks, cuda.gridsize(1)):
        best = best_of[r * nchunks]
        at = -1
        for c in range(r * nchunks, (r + 1) * nchunks):
            x = best_of[c]
            ix = at_of[c]
            best_of[c] = best
            at_of[c] = at
            if at < 0 or _replaces(take_max, best, x):
                best = x
                at = ix


@cuda.jit(cache=True)
def extreme_scan(rows, n, nchunks, size, take_max, best_of, at_of, values, indices):
    """Running max (min) of each chunk and where it was last reached, from its carry."""
    for t in range(cuda.grid(1), at_of.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        best = best_of[t]
        at = at_of[t]
        if at < 0:
            best = rows[r * n + lo]
            at = lo
        for i in range(lo, min(lo + size, n)):
            x = rows[r * n + i]
            if _replaces(take_max, best, x):
                best = x
                at = i
            values[r * n + i] = best
            indices[r * n + i] = at


@cuda.jit(device=True)
def _log_add_exp(acc, x):
    # log(exp(acc) + exp(x)) without overflow; infinities and NaN as the CPU's loop.
    if x != x or acc != acc:
        return math.nan
    hi = max(acc, x)
    lo = min(acc, x)
    if hi == -math.inf:
        return -math.inf
    if hi == math.inf:
        return math.inf
    return hi + math.log1p(math.exp(lo - hi))


@cuda.jit(cache=True)
def lse_totals(rows, n, nchunks, size, totals):
    """totals[t] = log-sum-exp of chunk t % nchunks of row t // nchunks (float64)."""
    for t in range(cuda.grid(1), totals.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        acc = -math.inf
        for i in range(lo, min(lo + size, n)):
            acc = _log_add_exp(acc, rows[r * n + i])
        totals[t] = acc


@cuda.jit(cache=True)
def lse_carries(totals, nchunks):
    """Each row's chunk totals replaced by the log-sum-exp of the chunks before it."""
    for r in range(cuda.grid(1), totals.size // nchunks, cuda.gridsize(1)):
        acc = -math.inf
        for c in range(r * nchunks, (r + 1) * nchunks):
            x = totals[c]
            totals[c] = acc
            acc = _log_add_exp(acc, x)


@cuda.jit(cache=True)
def lse_scan(rows, n, nchunks, size, carries, out):
    """Running log-sum-exp of each chunk, starting from the chunk's carry."""
    for t in range(cuda.grid(1), carries.size, cuda.gridsize(1)):
        r = t // nchunks
        lo = (t - r * nchunks) * size
        acc = carries[t]
        for i in range(r * n + lo, r * n + min(lo + size, n)):
            acc = _log_add_exp(acc, rows[i])
            out[i] = acc


@cuda.jit(device=True)
def _log1p_complex(z):
    """log(1 + z) without the cancellation of 1 + z for small |z| (PyTorch's formula)."""
    x = z.real
    y = z.imag
    theta = math.atan2(y, x + 1.0)
    if math.hypot(x, y) < 0.5:
        r = x * (2.0 + x) + y * y
        if r == 0.0:  # underflow: log1p(z) ~ z
            return complex(x, theta)
        return complex(0.5 * math.log1p(r), theta)
    return complex(math.log(math.hypot(x + 1.0, y)), theta)


@cuda.jit(cache=True)
def lse_rows_complex(rows, n, out):
    """Running log-sum-exp of complex128 rows, one thread a row, by the CPU's rules
    (`_backends.cpu.kernels.index.logcumsumexp_rows_complex`): the term of smaller real
    part joins the larger as log1p(exp(min - max)) + max; NaN parts give NaN from there
    on, two -inf real parts keep the running value, two +inf ones give log(exp + exp)."""
    for r in range(cuda.grid(1), out.size // max(n, 1), cuda.gridsize(1)):
        acc = complex(-math.inf, 0.0)
        for i in range(r * n, r * n + n):
            x = rows[i]
            if math.isnan(acc.real) or math.isnan(acc.imag) or math.isnan(x.real) or math.isnan(x.imag):
                acc = complex(math.nan, math.nan)
            else:
                lo, hi = (x, acc) if x.real < acc.real else (acc, x)
                if math.isinf(lo.real) and lo.real == hi.real:
                    acc = lo if lo.real < 0 else cmath.log(cmath.exp(lo) + cmath.exp(hi))
                else:
                    acc = _log1p_complex(cmath.exp(lo - hi)) + hi
            out[i] = acc
