"""Numba CUDA kernels of the sampling family: embedding's row gather and its atomic
scatter-add backward, and one_hot (the window kernels unfold/fold use are in `windows`).

Grid-stride loops over flat output (or input) elements; an embedding row is reached by
its flat offset, so the tables here are 1-d views of C-contiguous (rows, width) arrays.
Nothing here calls a function of another file, so Numba's on-disk cache (keyed on this
file) can never serve a stale kernel.
"""
from numba import cuda

__all__ = ["take_rows", "count_rows", "add_rows", "add_rows_scaled", "one_hot"]


@cuda.jit(cache=True)
def take_rows(table, index, width, out):
    """out[i*width + j] = table[index[i]*width + j] (elements moved as unsigned bits)."""
    for p in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[p] = table[index[p // width] * width + p % width]


@cuda.jit(cache=True)
def count_rows(index, one, counts):
    """counts[index[i]] += one, atomically (`one` typed as counts: float sums stay exact)."""
    for i in range(cuda.grid(1), index.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(counts, index[i], one)


@cuda.jit(cache=True)
def add_rows(rows, index, width, grad):
    """grad[index[i]*width + j] += rows[i*width + j], atomically (repeated rows add up)."""
    for p in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(grad, index[p // width] * width + p % width, rows[p])


@cuda.jit(cache=True)
def add_rows_scaled(rows, index, counts, width, grad):
    """`add_rows` with each row divided by how often its index occurs (scale_grad_by_freq)."""
    for p in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        k = index[p // width]
        cuda.atomic.add(grad, k * width + p % width, rows[p] / counts[k])


@cuda.jit(cache=True)
def one_hot(index, out):
    """out[i, k] = 1 where index[i] == k, else 0 (index: flat (M,), out: (M, classes))."""
    classes = out.shape[1]
    start, step = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, index.shape[0] * classes, step):
        m = i // classes
        k = i % classes
        out[m, k] = 1 if index[m] == k else 0
