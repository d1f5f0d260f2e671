"""Numba CUDA kernels for sorting and selection along rows: order codes, bitonic sorts,
and reading the sorted rows (sort values, top-k, k-th value, medians, mode).

Every row to sort is a line of `n` keys in a contiguous (rows, n) buffer. Keys of any
dtype are first turned into uint64 *order codes* whose unsigned order is PyTorch's
order of the keys (NaN largest, -0.0 == 0.0; descending sorts invert the codes), so one
sort kernel serves every dtype. Each code travels with its column index and pairs
compare as (code, index): all pairs of a row are distinct, so the (unstable) bitonic
network gives exactly the stable sort's order. Rows are padded to a power of two
`width` with sentinels (largest code, index >= n) that sort last.

  shared_sort     one block sorts a chunk of CHUNK pairs in shared memory (whole rows up
                  to CHUNK); chunks of a longer row come out in alternating directions,
                  as the bitonic network needs them
  global_step     one compare-exchange stage (k, j) of the network over every row in
                  global memory, for j >= CHUNK (one launch per stage)
  shared_merge    the stages j < CHUNK of one k, each chunk in shared memory
  take_sorted     columns [start, start + m) of the sorted rows: indices and the values
  take_position   one column per row chosen from its NaN count (median / nanmedian)
  mode_rows       the most frequent value of each sorted row, one thread per row
  topk_select     top-k for small k without sorting: each thread of a row's block keeps
                  its k best (code, index) pairs, thread 0 merges the block's lists

Kernels are dtype-generic Numba functions compiled lazily per argument types; values
are moved as unsigned integers of their item size, so bfloat16 needs no special case.
"""
import numpy as np
from numba import cuda

from .loops import SIMULATOR

__all__ = ["CHUNK", "THREADS", "NAN_CODE", "SELECT_K", "SELECT_THREADS", "float32_codes", "float64_codes",
           "int_codes", "shared_sort", "global_step", "shared_merge", "take_sorted", "take_position", "mode_rows",
           "topk_select"]

# Pairs sorted in shared memory by one block (uint64 + int64: 32 KiB on a GPU), and the
# block size. The simulator runs a Python thread per CUDA thread: a tiny chunk there makes
# short test rows exercise the global stages too.
CHUNK = 16 if SIMULATOR else 2048
THREADS = 4 if SIMULATOR else 512

# topk_select: the largest k it takes, and its block size (a list of SELECT_K pairs per
# thread in shared memory: 32 KiB on a GPU).
SELECT_K = 32
SELECT_THREADS = 4 if SIMULATOR else 64
_SELECT_SHARED = SELECT_K * SELECT_THREADS

NAN_CODE = np.uint64(0xFFFFFFFFFFFFFFFF)
_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_SIGN64 = np.uint64(0x8000000000000000)
_ALL32 = np.uint64(0xFFFFFFFF)
_SIGN32 = np.uint64(0x80000000)

# take_position modes
FIXED, MEDIAN, NANMEDIAN = 0, 1, 2


@cuda.jit(device=True)
def _finish(code, descending):
    return _ALL64 - code if descending else code


@cuda.jit(cache=True)
def float32_codes(keys, bits, n_rows, n, width, descending, codes, idx):
    """Order codes of float32 keys (`bits`: the same memory read as uint32), padded."""
    for t in range(cuda.grid(1), n_rows * width, cuda.gridsize(1)):
        r = t // width
        j = t - r * width
        c = NAN_CODE
        if j < n:
            x = keys[r * n + j]
            if x != x:
                c = _finish(NAN_CODE, descending)
            elif x == 0:
                c = _finish(_SIGN32, descending)  # -0.0 and 0.0 are equal keys
            else:
                b = np.uint64(bits[r * n + j])
                c = _finish(_ALL32 - b if b >= _SIGN32 else b | _SIGN32, descending)
        codes[t] = c
        idx[t] = j


@cuda.jit(cache=True)
def float64_codes(keys, bits, n_rows, n, width, descending, codes, idx):
    """Order codes of float64 keys (`bits`: the same memory read as uint64), padded."""
    for t in range(cuda.grid(1), n_rows * width, cuda.gridsize(1)):
        r = t // width
        j = t - r * width
        c = NAN_CODE
        if j < n:
            x = keys[r * n + j]
            if x != x:
                c = _finish(NAN_CODE, descending)
            elif x == 0:
                c = _finish(_SIGN64, descending)
            else:
                b = bits[r * n + j]
                c = _finish(_ALL64 - b if b >= _SIGN64 else b | _SIGN64, descending)
        codes[t] = c
        idx[t] = j


@cuda.jit(cache=True)
def int_codes(bits, n_rows, n, width, descending, codes, idx):
    """Order codes of int64 keys read as uint64 (flipping the sign bit orders them)."""
    for t in range(cuda.grid(1), n_rows * width, cuda.gridsize(1)):
        r = t // width
        j = t - r * width
        c = NAN_CODE
        if j < n:
            c = _finish(bits[r * n + j] ^ _SIGN64, descending)
        codes[t] = c
        idx[t] = j


@cuda.jit(device=True)
def _after(ac, ai, bc, bi):
    return ac > bc or (ac == bc and ai > bi)


@cuda.jit(device=True)
def _exchange(sc, si, i, j, k, position):
    # Bitonic compare-exchange of i and i + j; the direction comes from the pair's
    # position in the whole row (chunks of a long row alternate directions).
    lo = i
    hi = i + j
    ascending = ((position + i) & k) == 0
    if _after(sc[lo], si[lo], sc[hi], si[hi]) == ascending:
        c = sc[lo]
        sc[lo] = sc[hi]
        sc[hi] = c
        x = si[lo]
        si[lo] = si[hi]
        si[hi] = x


@cuda.jit(cache=True)
def shared_sort(codes, idx, n_rows, width, chunk):
    """Sort every `chunk` (<= CHUNK) of each padded row: all stages k <= chunk."""
    sc = cuda.shared.array(CHUNK, np.uint64)
    si = cuda.shared.array(CHUNK, np.int64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    per_row = width // chunk
    for task in range(cuda.blockIdx.x, n_rows * per_row, cuda.gridDim.x):
        base = task * chunk
        position = (task % per_row) * chunk
        for t in range(tid, chunk, step):
            sc[t] = codes[base + t]
            si[t] = idx[base + t]
        cuda.syncthreads()
        k = 2
        while k <= chunk:
            j = k // 2
            while j > 0:
                for t in range(tid, chunk // 2, step):
                    _exchange(sc, si, 2 * j * (t // j) + t % j, j, k, position)
                cuda.syncthreads()
                j //= 2
            k *= 2
        for t in range(tid, chunk, step):
            codes[base + t] = sc[t]
            idx[base + t] = si[t]
        cuda.syncthreads()


@cuda.jit(cache=True)
def shared_merge(codes, idx, n_rows, width, chunk, k):
    """Stages j = chunk/2 .. 1 of bitonic step k, each chunk of each row in shared memory."""
    sc = cuda.shared.array(CHUNK, np.uint64)
    si = cuda.shared.array(CHUNK, np.int64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    per_row = width // chunk
    for task in range(cuda.blockIdx.x, n_rows * per_row, cuda.gridDim.x):
        base = task * chunk
        position = (task % per_row) * chunk
        for t in range(tid, chunk, step):
            sc[t] = codes[base + t]
            si[t] = idx[base + t]
        cuda.syncthreads()
        j = chunk // 2
        while j > 0:
            for t in range(tid, chunk // 2, step):
                _exchange(sc, si, 2 * j * (t // j) + t % j, j, k, position)
            cuda.syncthreads()
            j //= 2
        for t in range(tid, chunk, step):
            codes[base + t] = sc[t]
            idx[base + t] = si[t]
        cuda.syncthreads()


@cuda.jit(cache=True)
def global_step(codes, idx, n_rows, width, k, j):
    """One stage (k, j) of the bitonic network over all rows, in global memory."""
    half = width // 2
    for t in range(cuda.grid(1), n_rows * half, cuda.gridsize(1)):
        r = t // half
        p = t - r * half
        i = 2 * j * (p // j) + p % j
        lo = r * width + i
        hi = lo + j
        ascending = (i & k) == 0
        if _after(codes[lo], idx[lo], codes[hi], idx[hi]) == ascending:
            c = codes[lo]
            codes[lo] = codes[hi]
            codes[hi] = c
            x = idx[lo]
            idx[lo] = idx[hi]
            idx[hi] = x


@cuda.jit(cache=True)
def take_sorted(src, n, idx, width, start, m, values, indices):
    """indices[r, c] = idx[r, start + c] and values[r, c] = src[r, that index], c < m."""
    n_rows = values.size // m if m else 0
    for t in range(cuda.grid(1), n_rows * m, cuda.gridsize(1)):
        r = t // m
        c = t - r * m
        at = idx[r * width + start + c]
        indices[t] = at
        values[t] = src[r * n + at]


@cuda.jit(cache=True)
def take_position(src, n, codes, idx, width, mode, k, floating, values, indices):
    """One column per sorted ascending row: `k` (FIXED), or the median (NaN propagates:
    the first NaN is chosen when there is one) or the lower median of the non-NaN values
    (an all-NaN row gives its first NaN)."""
    for r in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        valid = n
        if floating:
            while valid > 0 and codes[r * width + valid - 1] == NAN_CODE:
                valid -= 1
        if mode == FIXED:
            column = k
        elif mode == MEDIAN:
            column = valid if valid < n else (n - 1) // 2
        else:
            column = (valid - 1) // 2 if valid > 0 else 0
        at = idx[r * width + column]
        indices[r] = at
        values[r] = src[r * n + at]


@cuda.jit(cache=True)
def mode_rows(src, n, codes, idx, width, floating, values, indices):
    """The first longest run of equal codes in each sorted row (its smallest most frequent
    value) and the largest original index in that run; NaNs never equal each other."""
    for r in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        base = r * width
        best_count = 0
        best_index = 0
        i = 0
        while i < n:
            c = codes[base + i]
            last = idx[base + i]
            j = i
            if not (floating and c == NAN_CODE):
                while j + 1 < n and codes[base + j + 1] == c:
                    j += 1
                    if idx[base + j] > last:
                        last = idx[base + j]
            if j - i + 1 > best_count:
                best_count = j - i + 1
                best_index = last
            i = j + 1
        indices[r] = best_index
        values[r] = src[r * n + best_index]


@cuda.jit(device=True)
def _before(ac, ai, bc, bi):
    return ac < bc or (ac == bc and ai < bi)


@cuda.jit(cache=True)
def topk_select(codes, n, k, chosen):
    """chosen[r, :k] = the columns of the k smallest (code, index) pairs of row r of the
    unpadded (rows, n) `codes`, in order (k <= SELECT_K; blockDim.x == SELECT_THREADS)."""
    best_c = cuda.local.array(SELECT_K, np.uint64)
    best_i = cuda.local.array(SELECT_K, np.int64)
    heads = cuda.local.array(SELECT_THREADS, np.int64)
    sc = cuda.shared.array(_SELECT_SHARED, np.uint64)
    si = cuda.shared.array(_SELECT_SHARED, np.int64)
    tid = cuda.threadIdx.x
    for r in range(cuda.blockIdx.x, chosen.size // k, cuda.gridDim.x):
        count = 0
        for j in range(tid, n, SELECT_THREADS):
            c = codes[r * n + j]
            if count < k or _before(c, j, best_c[k - 1], best_i[k - 1]):
                p = count if count < k else k - 1  # a full list drops its last pair
                while p > 0 and _before(c, j, best_c[p - 1], best_i[p - 1]):
                    best_c[p] = best_c[p - 1]
                    best_i[p] = best_i[p - 1]
                    p -= 1
                best_c[p] = c
                best_i[p] = j
                if count < k:
                    count += 1
        for q in range(SELECT_K):
            sc[tid * SELECT_K + q] = best_c[q] if q < count else NAN_CODE
            si[tid * SELECT_K + q] = best_i[q] if q < count else -1
        cuda.syncthreads()
        if tid == 0:
            # k-way merge of the sorted lists: at most SELECT_THREADS * k comparisons
            for t in range(SELECT_THREADS):
                heads[t] = t * SELECT_K
            for out in range(k):
                pick = -1
                for t in range(SELECT_THREADS):
                    h = heads[t]
                    if h < (t + 1) * SELECT_K and si[h] >= 0:
                        if pick < 0 or _before(sc[h], si[h], sc[heads[pick]], si[heads[pick]]):
                            pick = t
                chosen[r * k + out] = si[heads[pick]]
                heads[pick] += 1
        cuda.syncthreads()
