"""Numba CUDA kernels for searching and counting: searchsorted, bincount, histc, and the
pieces of unique / unique_consecutive (run starts, scatter of the groups, a sort of
whole slices for `dim=`).

All grid-stride loops over flat contiguous buffers. Keys compare in PyTorch's order (NaN
largest). Counting kernels add with atomics (integers for counts, so they are exact;
float64 for bincount's weights, whose order of addition is the only thing that may make
them differ from the CPU's in the last bits).
"""
from numba import cuda

__all__ = ["search", "bincount", "bincount_weighted", "histc", "iota", "run_starts", "slice_run_starts",
           "scatter_groups", "group_counts", "slice_step"]


@cuda.jit(device=True)
def _less(a, b):
    # a < b with NaN the largest value (and equal to itself)
    return a < b or (b != b and a == a)


@cuda.jit(cache=True)
def search(seq, m, values, nv, batched, right, out):
    """out[t] = where values[t] goes in its row of seq (row t // nv, or the only one):
    the first place whose element is >= it (> it when `right`)."""
    for t in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        base = (t // nv) * m if batched else 0
        v = values[t]
        lo = 0
        hi = m
        while lo < hi:
            mid = (lo + hi) // 2
            x = seq[base + mid]
            if (not _less(v, x)) if right else _less(x, v):
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo


@cuda.jit(cache=True)
def bincount(values, counts):
    """counts[v] += 1 for each value v."""
    for t in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(counts, values[t], 1)


@cuda.jit(cache=True)
def bincount_weighted(values, weights, sums):
    """sums[v] += weight for each value v (float64)."""
    for t in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.add(sums, values[t], weights[t])


@cuda.jit(cache=True)
def histc(values, lo, hi, counts):
    """counts[bin of x] += 1 for x in [lo, hi] (NaN and values outside are skipped; hi
    lands in the last bin), bins of equal width as the CPU computes them."""
    bins = counts.size
    width = hi - lo
    for t in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        x = values[t]
        if not (x >= lo and x <= hi):
            continue
        b = int((x - lo) * bins / width)
        if b >= bins:
            b = bins - 1
        cuda.atomic.add(counts, b, 1)


@cuda.jit(cache=True)
def iota(out):
    """out[i] = i."""
    for t in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[t] = t


@cuda.jit(cache=True)
def run_starts(keys, n, flags):
    """flags[j] = 1 where a run of equal keys starts (j == 0 or keys[j] != keys[j-1]).
    Order codes (unique) hold NaNs equal; float values (unique_consecutive) never do."""
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        flags[j] = 1 if j == 0 or keys[j] != keys[j - 1] else 0


@cuda.jit(device=True)
def _slice_differs(keys, m, a, b):
    for c in range(m):
        if keys[a * m + c] != keys[b * m + c]:
            return True
    return False


@cuda.jit(cache=True)
def slice_run_starts(keys, m, order, n, flags):
    """flags[j] = 1 where slice order[j] (m keys each) differs from slice order[j-1]."""
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        if j == 0:
            flags[j] = 1
        else:
            flags[j] = 1 if _slice_differs(keys, m, order[j], order[j - 1]) else 0


@cuda.jit(cache=True)
def scatter_groups(src, m, order, n, flags, group, values, starts, inverse):
    """For sorted position j of source slice order[j] (m elements) in group group[j] - 1:
    inverse[order[j]] = the group; a group's first position writes its slice and start."""
    for j in range(cuda.grid(1), n, cuda.gridsize(1)):
        g = group[j] - 1
        at = order[j]
        inverse[at] = g
        if flags[j]:
            starts[g] = j
            for c in range(m):
                values[g * m + c] = src[at * m + c]


@cuda.jit(cache=True)
def group_counts(starts, n, counts):
    """counts[g] = the length of group g from the run starts."""
    groups = counts.size
    for g in range(cuda.grid(1), groups, cuda.gridsize(1)):
        end = starts[g + 1] if g + 1 < groups else n
        counts[g] = end - starts[g]


@cuda.jit(device=True)
def _slice_after(keys, m, rows, a, b):
    # Whether slice a sorts after slice b: lexicographically by order codes, then by
    # index (padding indices >= rows sort last), so the network's order is stable.
    if a < rows and b < rows:
        for c in range(m):
            x = keys[a * m + c]
            y = keys[b * m + c]
            if x != y:
                return x > y
    return a > b


@cuda.jit(cache=True)
def slice_step(keys, m, rows, order, k, j):
    """One stage (k, j) of a bitonic sort of slice indices `order` (a power of two long)
    by the slices' codes."""
    for p in range(cuda.grid(1), order.size // 2, cuda.gridsize(1)):
        i = 2 * j * (p // j) + p % j
        a = order[i]
        b = order[i + j]
        if _slice_after(keys, m, rows, a, b) == ((i & k) == 0):
            order[i] = b
            order[i + j] = a
