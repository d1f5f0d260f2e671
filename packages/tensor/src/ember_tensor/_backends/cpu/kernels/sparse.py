"""Numba kernels of sparse COO tensors: coalescing (segment sum of sorted entries) and
sparse x dense products.

Values arrive as 2-d arrays (nnz, prod(dense dims)) so that one compiled loop serves
every hybrid shape; sparse coordinates arrive flattened to one int64 key per entry
(row-major over the sparse dims), which turns PyTorch's lexsort into a single argsort.
Everything compiles lazily on first call (`numba.njit` without signatures).
"""
import numba
import numpy as np

__all__ = ["segment_sum", "spmm", "spmm_parallel", "sampled_dot", "flat_keys", "unflatten_keys"]


@numba.njit(cache=False)
def segment_sum(sorted_keys, order, values, out_keys, out_values):
    """Sum runs of equal keys: entries are visited in `order`; returns the run count."""
    n = sorted_keys.shape[0]
    width = values.shape[1]
    run = -1
    prev = -1
    for i in range(n):
        key = sorted_keys[i]
        src = order[i]
        if run < 0 or key != prev:
            run += 1
            out_keys[run] = key
            for j in range(width):
                out_values[run, j] = values[src, j]
            prev = key
        else:
            for j in range(width):
                out_values[run, j] += values[src, j]
    return run + 1


@numba.njit(cache=False)
def spmm(rows, cols, values, dense, out):
    """out[r, :] += v * dense[c, :] for every entry (r, c, v); `out` starts as the bias."""
    width = dense.shape[1]
    for k in range(rows.shape[0]):
        r = rows[k]
        c = cols[k]
        v = values[k]
        for j in range(width):
            out[r, j] += v * dense[c, j]


@numba.njit(parallel=True, cache=False)
def spmm_parallel(row_starts, cols, values, dense, out):
    """`spmm` over rows in parallel; entries sorted by row, row r spans row_starts[r:r+2]."""
    width = dense.shape[1]
    for r in numba.prange(row_starts.shape[0] - 1):
        for k in range(row_starts[r], row_starts[r + 1]):
            c = cols[k]
            v = values[k]
            for j in range(width):
                out[r, j] += v * dense[c, j]


@numba.njit(cache=False)
def sampled_dot(rows, cols, a, b, out):
    """out[k] = dot(a[rows[k], :], b[cols[k], :]): a dense product read only at the pattern."""
    width = a.shape[1]
    for k in range(rows.shape[0]):
        acc = 0.0
        r = rows[k]
        c = cols[k]
        for j in range(width):
            acc += a[r, j] * b[c, j]
        out[k] = acc


def flat_keys(indices, sparse_shape):
    """One int64 row-major key per column of `indices` (sparse_dim, nnz)."""
    keys = np.zeros(indices.shape[1], np.int64)
    for d, n in enumerate(sparse_shape):
        keys = keys * n + indices[d]
    return keys


def unflatten_keys(keys, sparse_shape):
    """Inverse of `flat_keys`: (sparse_dim, nnz) int64 indices."""
    out = np.empty((len(sparse_shape), keys.shape[0]), np.int64)
    rest = keys.copy()
    for d in range(len(sparse_shape) - 1, -1, -1):
        n = sparse_shape[d]
        out[d] = rest % n if n else 0
        rest = rest // n if n else rest
    return out
