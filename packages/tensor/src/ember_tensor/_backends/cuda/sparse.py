"""The sparse family on CUDA: the kernels of sparse COO tensors over device arrays.

`spmm` runs one thread per (entry, output column) pair, grid-stride, with atomic adds
into the output (entries of one row, duplicates included, land on different threads);
`sampled_dot` runs one thread per entry. The other sparse ops compose dense tensor ops
that run on the device (`ember_tensor.sparse._compose`).
"""
import numpy as np
from numba import cuda

from . import storage
from .launch import grid_stride

__all__ = ["spmm", "sampled_dot"]


@cuda.jit
def _spmm_atomic(rows, cols, values, dense, out):
    width = dense.shape[1]
    total = rows.shape[0] * width
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        k = t // width
        j = t - k * width
        cuda.atomic.add(out, (rows[k], j), values[k] * dense[cols[k], j])


@cuda.jit
def _sampled_dot(rows, cols, a, b, out):
    width = a.shape[1]
    for k in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        acc = 0.0
        r = rows[k]
        c = cols[k]
        for j in range(width):
            acc += a[r, j] * b[c, j]
        out[k] = acc


def _zeros(shape, np_dtype):
    out = storage.empty(shape, np_dtype)
    storage.fill_(out, 0)
    return out


def spmm(indices, values, dense, n_rows, np_dtype, coalesced):
    """The dense (n_rows, m) product of the sparse matrix (`indices` (2, nnz), `values`
    (nnz,)) with `dense` (k, m), in `np_dtype` (atomic adds: `coalesced` is not needed)."""
    out = _zeros((n_rows, dense.shape[1]), np_dtype)
    nnz, width = indices.shape[1], dense.shape[1]
    if nnz == 0 or width == 0:
        return out
    values = storage.contiguous(values if values.dtype == np_dtype else storage.astype(values, np_dtype))
    dense = storage.contiguous(dense if dense.dtype == np_dtype else storage.astype(dense, np_dtype))
    indices = storage.contiguous(indices)
    grid_stride(_spmm_atomic, nnz * width, indices[0], indices[1], values, dense, out)
    return out


def sampled_dot(indices, a, b):
    """out[k] = dot(a[rows[k]], b[cols[k]]) in float64 for the (2, nnz) `indices`: the
    product a @ b.T read only at those entries."""
    nnz = indices.shape[1]
    out = storage.empty((nnz,), np.float64)
    if nnz:
        a = storage.contiguous(a if a.dtype == np.float64 else storage.astype(a, np.float64))
        b = storage.contiguous(b if b.dtype == np.float64 else storage.astype(b, np.float64))
        indices = storage.contiguous(indices)
        grid_stride(_sampled_dot, nnz, indices[0], indices[1], a, b, out)
    return out
