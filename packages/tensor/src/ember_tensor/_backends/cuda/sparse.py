"""The sparse family on CUDA: the kernels of sparse COO tensors over device arrays.

The same functions as `_backends.cpu.sparse`. `coalesce` numbers the entries by their
row-major key (a kernel), groups equal keys with the device `unique` (a sort, run starts
and a cumsum) and sums each group's values with the device scatter-add; the one value
read back is the number of groups, which sizes the output (PyTorch's CUDA coalesce
synchronises there too). `spmm` runs one thread per (entry, output column) pair with
atomic adds into the output; `sampled_dot` one thread per entry.
"""
import numpy as np

from . import arrays, counting, scatter, storage
from .launch import grid_stride
from .kernels import sparse as K

__all__ = ["coalesce", "spmm", "sampled_dot"]


def _sizes(sparse_shape):
    return storage.from_numpy(np.asarray(sparse_shape, np.int64).reshape(-1))


def coalesce(indices, values, sparse_shape):
    """Sorted unique int64 `indices` (sparse_dim, n) and `values` (n, *dense) summed per
    index, for entries `indices` (sparse_dim, nnz) and `values` (nnz, *dense)."""
    nnz = indices.shape[1]
    dense_shape = tuple(values.shape[1:])
    width = int(np.prod(dense_shape, dtype=np.int64))
    keys = storage.empty((nnz,), np.int64)
    sizes = _sizes(sparse_shape)
    if nnz:
        grid_stride(K.flat_keys, nnz, storage.contiguous(indices), sizes, keys)
    unique_keys, group, _ = counting.unique(keys, None, False)
    n = unique_keys.shape[0]
    out_indices = storage.empty((len(sparse_shape), n), np.int64)
    if n and len(sparse_shape):
        grid_stride(K.unflatten_keys, n, unique_keys, sizes, out_indices)
    # Booleans sum as integers (a group is true when any entry is), as PyTorch's add.
    work = np.dtype(np.int64) if values.dtype == np.bool_ else values.dtype
    rows = (storage.contiguous(values) if work == values.dtype else storage.astype(values, work)).reshape((nnz, width))
    out = storage.zeros((n, width), work)
    if n and width:
        expanded = arrays.broadcast_to(group.reshape((nnz, 1)), (nnz, width))
        scatter.scatter(out, 0, expanded, rows, "sum", True, None, work)
    if work != values.dtype:
        out = storage.astype(out, values.dtype)
    return out_indices, out.reshape((n,) + dense_shape)


def spmm(indices, values, dense, n_rows, np_dtype, coalesced):
    """The dense (n_rows, m) product of the sparse matrix (`indices` (2, nnz), `values`
    (nnz,)) with `dense` (k, m), in `np_dtype` (atomic adds: `coalesced` is not needed)."""
    out = storage.zeros((n_rows, dense.shape[1]), np_dtype)
    nnz, width = indices.shape[1], dense.shape[1]
    if nnz == 0 or width == 0:
        return out
    values = storage.contiguous(values if values.dtype == np_dtype else storage.astype(values, np_dtype))
    dense = storage.contiguous(dense if dense.dtype == np_dtype else storage.astype(dense, np_dtype))
    indices = storage.contiguous(indices)
    grid_stride(K.spmm_atomic, nnz * width, indices[0], indices[1], values, dense, out)
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
        grid_stride(K.sampled_dot, nnz, indices[0], indices[1], a, b, out)
    return out
