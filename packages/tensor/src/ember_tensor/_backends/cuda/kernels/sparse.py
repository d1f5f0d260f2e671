"""Numba CUDA kernels of sparse COO tensors: row-major keys of sparse coordinates and
their inverse, the sparse x dense product and the sampled dense product.

The same jobs as `_backends.cpu.kernels.sparse`, one thread per element, grid-stride.
`spmm` adds into its output with atomics (entries of one row, duplicates included, land
on different threads); the others write each output element once.
"""
from numba import cuda

__all__ = ["flat_keys", "unflatten_keys", "spmm_atomic", "sampled_dot"]


@cuda.jit(cache=True)
def flat_keys(indices, sizes, keys):
    """keys[k]: the row-major number of column k of `indices` (sparse_dim, nnz) in a
    grid of `sizes`."""
    for k in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        key = 0
        for d in range(sizes.shape[0]):
            key = key * sizes[d] + indices[d, k]
        keys[k] = key


@cuda.jit(cache=True)
def unflatten_keys(keys, sizes, out):
    """out[:, k]: the coordinates of row-major number keys[k] in a grid of `sizes` (the
    inverse of `flat_keys`)."""
    for k in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        rest = keys[k]
        for d in range(sizes.shape[0] - 1, -1, -1):
            n = sizes[d]
            out[d, k] = rest % n if n else 0
            rest = rest // n if n else rest


@cuda.jit
def spmm_atomic(rows, cols, values, dense, out):
    """out[r, :] += v * dense[c, :] for every entry (r, c, v), one thread per (entry, column)."""
    width = dense.shape[1]
    total = rows.shape[0] * width
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        k = t // width
        j = t - k * width
        cuda.atomic.add(out, (rows[k], j), values[k] * dense[cols[k], j])


@cuda.jit
def sampled_dot(rows, cols, a, b, out):
    """out[k] = dot(a[rows[k], :], b[cols[k], :]): a dense product read only at the pattern."""
    width = a.shape[1]
    for k in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        acc = 0.0
        r = rows[k]
        c = cols[k]
        for j in range(width):
            acc += a[r, j] * b[c, j]
        out[k] = acc
