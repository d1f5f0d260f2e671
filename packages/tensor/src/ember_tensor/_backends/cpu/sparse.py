"""The sparse family on the CPU: the kernels of sparse COO tensors over NumPy arrays.

`coalesce` sorts entries by their row-major key (one stable argsort) and sums runs of
equal keys (a Numba segment sum); `spmm` multiplies a sparse matrix into a dense one
(serial over entries, or parallel over output rows of the coalesced matrix when there
are many); `sampled_dot` reads a dense product only at a pattern's entries.
"""
import numpy as np

from ..lazy import lazy

_K = lazy("cpu.kernels.sparse")  # Numba loads on first use

__all__ = ["coalesce", "spmm", "sampled_dot"]

# Below this many nonzeros a prange loop costs more to start than it saves.
PARALLEL_NNZ = 1 << 15


def coalesce(indices, values, sparse_shape):
    """Sorted unique int64 `indices` (sparse_dim, n) and `values` (n, *dense) summed per
    index, for entries `indices` (sparse_dim, nnz) and `values` (nnz, *dense)."""
    nnz = indices.shape[1]
    dense_shape = values.shape[1:]
    keys = _K.flat_keys(indices, sparse_shape)
    order = np.argsort(keys, kind="stable")
    flat_values = np.ascontiguousarray(values.reshape(nnz, int(np.prod(dense_shape))))
    out_keys = np.empty(nnz, np.int64)
    out_values = np.empty_like(flat_values)
    n = _K.segment_sum(keys[order], order, flat_values, out_keys, out_values) if nnz else 0
    return _K.unflatten_keys(out_keys[:n], sparse_shape), out_values[:n].reshape((n,) + dense_shape)


def spmm(indices, values, dense, n_rows, np_dtype, coalesced):
    """The dense (n_rows, m) product of the sparse matrix (`indices` (2, nnz), `values`
    (nnz,); `coalesced`: sorted by row, no duplicates) with `dense` (k, m), in `np_dtype`
    (computed in float64 for other kinds)."""
    compute = np.dtype(np_dtype) if np.dtype(np_dtype).kind == "f" else np.dtype(np.float64)
    nnz = indices.shape[1]
    if nnz >= PARALLEL_NNZ and not coalesced:  # the parallel kernel gives each thread whole rows
        indices, values = coalesce(indices, values, (n_rows, dense.shape[0]))
    vals = values.astype(compute, copy=False)
    dense = np.ascontiguousarray(dense, compute)
    out = np.zeros((n_rows, dense.shape[1]), compute)
    if nnz >= PARALLEL_NNZ:
        # Coalesced entries are sorted by row: each thread owns whole output rows.
        row_starts = np.searchsorted(indices[0], np.arange(n_rows + 1)).astype(np.int64)
        _K.spmm_parallel(row_starts, np.ascontiguousarray(indices[1]), vals, dense, out)
    elif nnz:
        _K.spmm(np.ascontiguousarray(indices[0]), np.ascontiguousarray(indices[1]), vals, dense, out)
    return out


def sampled_dot(indices, a, b):
    """out[k] = dot(a[rows[k]], b[cols[k]]) in float64 for the (2, nnz) `indices`: the
    product a @ b.T read only at those entries."""
    av = np.ascontiguousarray(a, np.float64)
    bv = np.ascontiguousarray(b, np.float64)
    out = np.empty(indices.shape[1], np.float64)
    if indices.shape[1]:
        _K.sampled_dot(np.ascontiguousarray(indices[0]), np.ascontiguousarray(indices[1]), av, bv, out)
    return out
