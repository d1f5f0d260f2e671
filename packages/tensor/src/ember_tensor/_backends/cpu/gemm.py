"""2-d matrix products on ember's threads: one BLAS GEMM, split by blocks of the output's
rows (of its columns when it has few rows) over ember's workers, each block one
single-threaded BLAS call writing its slice of the output.

Why not the BLAS's own threads: ember's parallel kernels run on its own worker pool
(`pool.py`), and OpenBLAS's threads are a second pool on the same cores. Between its
GEMMs each busy-waits for its next task; alternating (a GEMM, then a softmax, then a
GEMM) they take each other's cores (a Transformer step at 2 threads spent 7.5 ms in
lock waits and 4.4 ms in the spin, slower than at 1 thread). PyTorch has one OpenMP pool
for MKL and its loops; so does ember now: `threads` keeps OpenBLAS at one thread and the
products that are worth it are split here, over the same workers as everything else.

Bits: OpenBLAS splits a product's depth (k) the same way whatever its rows, so a block
of rows computed alone is bit-for-bit that block of the whole product: a split product
equals a one-thread run (tested). Products a GEMV would take (one row or column) and
``a @ a.T`` (one buffer: NumPy's SYRK) are never split.
"""
import numpy as np

from . import threads

__all__ = ["gemm"]

# Multiply-adds from which a product splits. Measured 2026-11-28 on this project's 2-core
# machine under other sessions' load (4-8), float32, best of 15 rounds / median, one BLAS
# thread against split in two: (1024, 128) @ (128, 384) 703 / 718 us against 494 / 822;
# (256, 256) @ (256, 256) 228 / 238 against 151 / 296; (64, 784) @ (784, 512) 411 / 428
# against 306 / 647; but from 2M to 4M multiply-adds the split never won, even at best
# ((64, 128) @ (128, 512) 67 against 103 us): handing a part over and meeting after it
# cost more than half the product. Hence 8M (~0.2 ms at one thread).
SPLIT_WORK = 1 << 23
# Fewest rows (columns) a block gets: a thinner block is a skinny GEMM the BLAS runs far
# below its peak (and one row would be a GEMV, other bits).
_MIN_BLOCK = 8


def gemm(a, b, out=None):
    """a @ b for 2-d float32/float64 arrays of one dtype, by BLAS, split over ember's threads
    when the budget and the work allow; written into `out` ((M, N)) when given (split
    only when C-contiguous and of the product's dtype).

    >>> gemm(np.ones((2, 3)), np.ones((3, 2)))
    array([[3., 3.],
           [3., 3.]])
    """
    m, n = a.shape[0], b.shape[1]
    work = m * n * a.shape[1]
    # The work test first: a small product (most of them) pays no call into `threads`.
    parts = _parts(m, n) if work >= SPLIT_WORK and threads.parallel(work, SPLIT_WORK) else 1
    dtype = np.result_type(a, b)
    if out is not None and (out.dtype != dtype or not out.flags.c_contiguous):
        parts = 1  # an `out` np.dot cannot write: NumPy's matmul casts into it, whole
    if parts <= 1 or np.may_share_memory(a, b):
        if out is None:
            return a.dot(b)
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((m, n), dtype)
    if m >= parts * _MIN_BLOCK:
        def run(i):
            lo, hi = _bounds(m, parts, i)
            np.dot(a[lo:hi], b, out=out[lo:hi])
    elif _strided_by_one(a) and _strided_by_one(b):
        # Few rows, many columns: blocks of columns. A column slice of the output is not
        # C-contiguous (np.dot refuses it) but BLAS writes it in place with its row
        # stride, which NumPy's matmul passes on for operands with a unit stride.
        def run(i):
            lo, hi = _bounds(n, parts, i)
            np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
    else:
        return np.dot(a, b, out=out)
    threads.run_parts(run, parts)
    return out


def _parts(m, n):
    """How many blocks a product splits into: the thread count, fewer when the output's
    rows and columns are both too few for blocks of `_MIN_BLOCK`."""
    parts = threads.part_count()
    while parts > 1 and max(m, n) < parts * _MIN_BLOCK:
        parts -= 1
    return parts


def _strided_by_one(x):
    """Whether one of a 2-d array's axes has unit stride (BLAS reads it in place)."""
    return x.itemsize in x.strides


def _bounds(size, parts, i):
    """Part `i` of `parts` near-equal ranges of range(size), aligned to 8 where possible (the
    BLAS's register blocks: no block's edge falls inside one)."""
    lo, hi = i * size // parts, (i + 1) * size // parts
    return lo - lo % 8 if i else 0, size if i == parts - 1 else hi - hi % 8
