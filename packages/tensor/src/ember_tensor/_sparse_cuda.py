"""numba.cuda kernel of sparse x dense products (``sparse.mm`` on CUDA tensors).

One thread per (entry, output column) pair, grid-stride: each adds ``v * dense[c, j]``
into ``out[r, j]`` with an atomic add, since entries of one row (duplicates included)
may land on different threads. Imported only when a CUDA operand appears, so importing
ember_tensor never loads numba.cuda; the kernel compiles on its first launch.
"""
import numpy as np
from numba import cuda

__all__ = ["spmm_cuda"]

THREADS = 128
MAX_BLOCKS = 1024


@cuda.jit
def _spmm_atomic(rows, cols, values, dense, out):
    width = dense.shape[1]
    total = rows.shape[0] * width
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        k = t // width
        j = t - k * width
        cuda.atomic.add(out, (rows[k], j), values[k] * dense[cols[k], j])


def spmm_cuda(indices, values, dense, out):
    """out += sparse(indices, values) @ dense; `indices` on the host, the rest device arrays."""
    nnz, width = indices.shape[1], dense.shape[1]
    if nnz == 0 or width == 0:
        return
    rows = cuda.to_device(np.ascontiguousarray(indices[0]))
    cols = cuda.to_device(np.ascontiguousarray(indices[1]))
    blocks = min(MAX_BLOCKS, (nnz * width + THREADS - 1) // THREADS)
    _spmm_atomic[blocks, THREADS](rows, cols, values, dense, out)
