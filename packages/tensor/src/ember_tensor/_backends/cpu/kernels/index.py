"""Numba kernels for indexing, index ops and scans on the CPU.

Every strided operand reaches a kernel as a 1-d buffer over its memory plus element
strides (see `_backends/cpu/lines.flat_buffer`), so one compiled specialization per dtype serves every
rank and layout, as with PyTorch's TensorIterator. Two shapes of loop cover the ops:

  gather_3 / put_3 / put_3_add / fill_3
      out[a, j, b] <-> buf[before[a] + offs[j] + after[b]]: advanced indexing,
      index_select, index_add/copy/fill, take, put. `offs` are the (bounds-checked)
      offsets the index tensors select; `before`/`after` those of the unindexed dims.
  gather_dim / scatter_dim
      one index per element along `dim` (gather, scatter, scatter_reduce): an odometer
      walks the index's shape and keeps each operand's offset up to date incrementally.

Scans run over rows of a C-contiguous (rows, n) array; floats accumulate in float64 and
integers in int64 as PyTorch's CPU kernels do. Everything compiles lazily on first call
and is cached on disk (`cache=True` keys on this file, and nothing here inlines code
from another file, so a stale kernel cannot load).
"""
import numpy as np
from numba import njit

__all__ = ["strided_offsets", "add_index_offsets", "gather_3", "put_3", "put_3_add", "fill_3", "gather_dim",
           "scatter_dim", "SCATTER_MODES", "cumsum_rows", "cumprod_rows", "cumextreme_rows",
           "logcumsumexp_rows", "logcumsumexp_rows_complex", "bincount", "histc", "mode_rows", "topk_rows"]

_JIT = dict(cache=True, nogil=True, error_model="numpy")

# Modes of scatter_dim (an int so one compiled kernel serves them all: scatter is bound by
# random memory access, not by the switch).
SCATTER_MODES = {"copy": 0, "sum": 1, "add": 1, "prod": 2, "multiply": 2, "amax": 3, "amin": 4,
                 "mean": 1}


@njit(**_JIT)
def strided_offsets(shape, strides, base):
    """Element offsets of every element of a (shape, strides) view, in row-major order."""
    ndim = shape.shape[0]
    total = 1
    for d in range(ndim):
        total *= shape[d]
    out = np.empty(total, np.int64)
    if total == 0:
        return out
    coord = np.zeros(ndim, np.int64)
    off = base
    for i in range(total):
        out[i] = off
        d = ndim - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                off += strides[d]
                break
            off -= strides[d] * (shape[d] - 1)
            coord[d] = 0
            d -= 1
    return out


@njit(**_JIT)
def add_index_offsets(idx, size, stride, offs):
    """offs[i] += idx[i] * stride (negative indices count from the end); returns the position
    of the first index outside [-size, size), or -1."""
    for i in range(idx.shape[0]):
        k = idx[i]
        if k < 0:
            k += size
        if k < 0 or k >= size:
            return i
        offs[i] += k * stride
    return -1


@njit(**_JIT)
def gather_3(buf, before, offs, after, out):
    """out[a, j, b] = buf[before[a] + offs[j] + after[b]] (out C-contiguous, 3-d)."""
    if after.shape[0] == 1:  # indexing the last dims: a plain gather, no inner loop
        for a in range(before.shape[0]):
            base = before[a] + after[0]
            for j in range(offs.shape[0]):
                out[a, j, 0] = buf[base + offs[j]]
        return
    for a in range(before.shape[0]):
        for j in range(offs.shape[0]):
            base = before[a] + offs[j]
            for b in range(after.shape[0]):
                out[a, j, b] = buf[base + after[b]]


@njit(**_JIT)
def put_3(buf, before, offs, after, vals):
    """buf[before[a] + offs[j] + after[b]] = vals[a, j, b] (last write wins)."""
    if after.shape[0] == 1:
        for a in range(before.shape[0]):
            base = before[a] + after[0]
            for j in range(offs.shape[0]):
                buf[base + offs[j]] = vals[a, j, 0]
        return
    for a in range(before.shape[0]):
        for j in range(offs.shape[0]):
            base = before[a] + offs[j]
            for b in range(after.shape[0]):
                buf[base + after[b]] = vals[a, j, b]


@njit(**_JIT)
def put_3_add(buf, before, offs, after, vals):
    """buf[before[a] + offs[j] + after[b]] += vals[a, j, b] (repeated offsets add up)."""
    for a in range(before.shape[0]):
        for j in range(offs.shape[0]):
            base = before[a] + offs[j]
            for b in range(after.shape[0]):
                buf[base + after[b]] += vals[a, j, b]


@njit(**_JIT)
def fill_3(buf, before, offs, after, value):
    """buf[before[a] + offs[j] + after[b]] = value."""
    for a in range(before.shape[0]):
        for j in range(offs.shape[0]):
            base = before[a] + offs[j]
            for b in range(after.shape[0]):
                buf[base + after[b]] = value


@njit(**_JIT)
def gather_dim(src, src_off, src_strides, dim_stride, dim_size, idx, idx_off, idx_strides,
               shape, out):
    """out[i...] = src[i with i[dim] replaced by idx[i...]] over the index's `shape`.

    `src_strides` has 0 at `dim`. Returns (position, value) of the first out-of-range
    index, or (-1, 0) when all are in range (nothing is read past a bad index).
    """
    ndim = shape.shape[0]
    total = out.shape[0]
    coord = np.zeros(ndim, np.int64)
    so = src_off
    io = idx_off
    for i in range(total):
        k = idx[io]
        if k < 0 or k >= dim_size:  # PyTorch's gather takes no negative indices
            return i, k
        out[i] = src[so + k * dim_stride]
        d = ndim - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                so += src_strides[d]
                io += idx_strides[d]
                break
            so -= src_strides[d] * (shape[d] - 1)
            io -= idx_strides[d] * (shape[d] - 1)
            coord[d] = 0
            d -= 1
    return -1, 0


@njit(**_JIT)
def _scatter_line(dst, do, ds, dim_stride, idx, io, is_, src, so, ss, n, mode, counts):
    # One run along the last dim; the mode is tested once per run, not per element.
    if mode == 0:
        for j in range(n):
            dst[do + j * ds + idx[io + j * is_] * dim_stride] = src[so + j * ss]
    elif mode == 1:
        for j in range(n):
            dst[do + j * ds + idx[io + j * is_] * dim_stride] += src[so + j * ss]
    elif mode == 2:
        for j in range(n):
            dst[do + j * ds + idx[io + j * is_] * dim_stride] *= src[so + j * ss]
    else:
        for j in range(n):
            pos = do + j * ds + idx[io + j * is_] * dim_stride
            v = src[so + j * ss]
            if v != v or (mode == 3 and v > dst[pos]) or (mode == 4 and v < dst[pos]):
                dst[pos] = v
    if counts.shape[0]:
        for j in range(n):
            counts[do + j * ds + idx[io + j * is_] * dim_stride] += 1


@njit(**_JIT)
def scatter_dim(dst, dst_strides, dim_stride, idx, idx_off, idx_strides, src, src_off, src_strides,
                shape, mode, counts):
    """dst[i with i[dim] replaced by idx[i...]] (op)= src[i...] over the index's `shape`.

    `dst` is a 1-d buffer (offset 0, `dst_strides` 0 at `dim`); `src` strided (all-zero
    strides for a scalar). mode: 0 copy, 1 add, 2 multiply, 3 amax, 4 amin (NaN wins).
    `counts` (same size as dst, or empty) counts the values each element received. The
    caller has checked every index (0 <= idx < size of dim).
    """
    ndim = shape.shape[0]
    last = ndim - 1
    n = shape[last]
    outer = 1
    for d in range(last):
        outer *= shape[d]
    if n == 0:
        return
    coord = np.zeros(ndim, np.int64)
    do = 0
    io = idx_off
    so = src_off
    for _ in range(outer):
        _scatter_line(dst, do, dst_strides[last], dim_stride, idx, io, idx_strides[last], src, so,
                      src_strides[last], n, mode, counts)
        d = last - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < shape[d]:
                do += dst_strides[d]
                io += idx_strides[d]
                so += src_strides[d]
                break
            do -= dst_strides[d] * (shape[d] - 1)
            io -= idx_strides[d] * (shape[d] - 1)
            so -= src_strides[d] * (shape[d] - 1)
            coord[d] = 0
            d -= 1


@njit(**_JIT)
def cumsum_rows(a, acc_zero, out):
    """out[r, i] = a[r, 0] + ... + a[r, i], accumulated in acc_zero's type."""
    for r in range(a.shape[0]):
        acc = acc_zero
        for i in range(a.shape[1]):
            acc += a[r, i]
            out[r, i] = acc


@njit(**_JIT)
def cumprod_rows(a, acc_one, out):
    """out[r, i] = a[r, 0] * ... * a[r, i], accumulated in acc_one's type."""
    for r in range(a.shape[0]):
        acc = acc_one
        for i in range(a.shape[1]):
            acc *= a[r, i]
            out[r, i] = acc


@njit(**_JIT)
def cumextreme_rows(a, take_max, values, indices):
    """Running max (take_max) or min of each row and the index where it was last reached.

    Like PyTorch, an equal value moves the index forward, and a NaN sticks once seen:
    every later NaN (and only a NaN) moves the index to itself.
    """
    for r in range(a.shape[0]):
        best = a[r, 0]
        at = 0
        for i in range(a.shape[1]):
            x = a[r, i]
            if x != x:
                best = x
                at = i
            elif best != best:
                pass
            elif (take_max and x >= best) or (not take_max and x <= best):
                best = x
                at = i
            values[r, i] = best
            indices[r, i] = at


@njit(**_JIT)
def logcumsumexp_rows(a, out):
    """out[r, i] = log(sum(exp(a[r, :i+1]))) computed stably in float64."""
    for r in range(a.shape[0]):
        acc = -np.inf
        for i in range(a.shape[1]):
            x = np.float64(a[r, i])
            hi = max(acc, x)
            lo = min(acc, x)
            if x != x or acc != acc:
                acc = np.nan
            elif hi == -np.inf:
                acc = -np.inf
            elif hi == np.inf:
                acc = np.inf
            else:
                acc = hi + np.log1p(np.exp(lo - hi))
            out[r, i] = acc


@njit(**_JIT)
def _log1p_complex(z):
    """log(1 + z) without the cancellation of 1 + z for small |z| (PyTorch's formula)."""
    x, y = z.real, z.imag
    theta = np.arctan2(y, x + 1.0)
    if abs(z) < 0.5:
        r = x * (2.0 + x) + y * y
        if r == 0.0:  # underflow: log1p(z) ~ z
            return complex(x, theta)
        return complex(0.5 * np.log1p(r), theta)
    return complex(np.log(np.hypot(x + 1.0, y)), theta)


@njit(**_JIT)
def logcumsumexp_rows_complex(a, out):
    """out[r, i] = log(sum(exp(a[r, :i+1]))) of complex128 rows, PyTorch's way: each step
    adds the term of smaller real part to the larger as log1p(exp(min - max)) + max;
    NaN parts give NaN from there on, two -inf real parts keep the running value, two
    +inf ones give log(exp(min) + exp(max))."""
    for r in range(a.shape[0]):
        acc = complex(-np.inf, 0.0)
        for i in range(a.shape[1]):
            x = a[r, i]
            if np.isnan(acc.real) or np.isnan(acc.imag) or np.isnan(x.real) or np.isnan(x.imag):
                acc = complex(np.nan, np.nan)
            else:
                lo, hi = (x, acc) if x.real < acc.real else (acc, x)
                if not np.isfinite(lo.real) and lo.real == hi.real:
                    acc = lo if lo.real < 0 else np.log(np.exp(lo) + np.exp(hi))
                else:
                    acc = _log1p_complex(np.exp(lo - hi)) + hi
            out[r, i] = acc


@njit(**_JIT)
def bincount(values, weights, out):
    """out[values[i]] += weights[i] (weights of length 0 count 1 each)."""
    if weights.shape[0]:
        for i in range(values.shape[0]):
            out[values[i]] += weights[i]
    else:
        for i in range(values.shape[0]):
            out[values[i]] += 1


@njit(**_JIT)
def histc(values, lo, hi, out):
    """Histogram of `values` into len(out) equal bins over [lo, hi]; hi lands in the last."""
    bins = out.shape[0]
    width = hi - lo
    for i in range(values.shape[0]):
        x = np.float64(values[i])
        if x < lo or x > hi or x != x:
            continue
        b = int((x - lo) * bins / width)
        if b == bins:
            b -= 1
        out[b] += 1


@njit(**_JIT)
def mode_rows(sorted_keys, order, chosen):
    """chosen[r, 0] = original index of the last occurrence of row r's most frequent value.

    Rows are sorted ascending (stably, `order` maps back), so the first longest run is the
    smallest most frequent value, as in PyTorch.
    """
    n = sorted_keys.shape[1]
    for r in range(sorted_keys.shape[0]):
        best_count = 0
        best_index = 0
        i = 0
        while i < n:
            j = i
            last = order[r, i]
            while j + 1 < n and sorted_keys[r, j + 1] == sorted_keys[r, i]:
                j += 1
                if order[r, j] > last:
                    last = order[r, j]
            if j - i + 1 > best_count:
                best_count = j - i + 1
                best_index = last
            i = j + 1
        chosen[r, 0] = best_index


@njit(inline="always")
def _before(a, b, largest):
    # Whether a sorts strictly before b in a top-k list (NaN counts as the largest value).
    if largest:
        return (a != a and b == b) or a > b
    return (b != b and a == a) or a < b


@njit(**_JIT)
def topk_rows(keys, k, largest, out):
    """out[r] = column indices of row r's k largest (smallest) keys, best first; among
    equal keys the earlier index wins, as in a stable sort. One pass with a sorted buffer
    of k entries: O(n k) worst case, ~O(n) for random data and small k."""
    n = keys.shape[1]
    for r in range(keys.shape[0]):
        count = 0
        for i in range(n):
            x = keys[r, i]
            if count == k and not _before(x, keys[r, out[r, k - 1]], largest):
                continue
            pos = count if count < k else k - 1
            while pos > 0 and _before(x, keys[r, out[r, pos - 1]], largest):
                out[r, pos] = out[r, pos - 1]
                pos -= 1
            out[r, pos] = i
            if count < k:
                count += 1
