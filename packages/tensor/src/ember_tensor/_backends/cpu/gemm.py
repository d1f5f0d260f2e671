"""2-d matrix products on ember's threads: one BLAS GEMM, split by blocks of the output's
rows over ember's workers, each block one single-threaded BLAS call writing its rows of
the output.

Why not the BLAS's own threads: ember's parallel kernels run on its own worker pool
(`pool.py`), and OpenBLAS's threads are a second pool on the same cores. Between its
GEMMs each busy-waits for its next task; alternating (a GEMM, then a softmax, then a
GEMM) they take each other's cores (a Transformer step at 2 threads spent 7.5 ms in
lock waits and 4.4 ms in the spin). PyTorch has one OpenMP pool for MKL and its loops;
so does ember now: `threads` keeps OpenBLAS at one thread and the products that are
worth it are split here, over the same workers as everything else.

Bits: a block of rows computed alone is bit-for-bit that block of the whole product, a
one-thread run's, when the blocks start on 8-row boundaries and the output's width is a
multiple of 8 (tested). Other widths are not split: OpenBLAS's kernel for a last partial
column block sums in an order that depends on where the rows end (seen: float64, width
257, the 8 rows before each cut). Nor are products with fewer than 16 rows (a column
split differed in the same way for 1-5 rows), nor ``a @ a.T`` (one buffer: NumPy's SYRK).
"""
import numpy as np

from . import threads

__all__ = ["gemm", "row_block"]

# Multiply-adds from which a product splits. Measured 2026-11-28 on this project's 2-core
# machine under other sessions' load (4-8), float32, best of 15 rounds / median, one BLAS
# thread against split in two: (1024, 128) @ (128, 384) 703 / 718 us against 494 / 822;
# (256, 256) @ (256, 256) 228 / 238 against 151 / 296; (64, 784) @ (784, 512) 411 / 428
# against 306 / 647; but from 2M to 4M multiply-adds the split never won, even at best
# ((64, 128) @ (128, 512) 67 against 103 us): handing a part over and meeting after it
# cost more than half the product. Hence 8M (~0.2 ms at one thread).
SPLIT_WORK = 1 << 23
# Fewest rows a block gets: a thinner block is a skinny GEMM the BLAS runs far below its
# peak, and takes other kernels (4 rows: other bits; one row would be a GEMV).
_MIN_BLOCK = 8


def gemm(a, b, out=None):
    """a @ b for 2-d float32/float64 arrays of one dtype, by BLAS, split by rows over ember's
    threads when the budget, the work and the shape allow; written into `out` ((M, N)) when
    given (split only when C-contiguous and of the product's dtype).

    >>> gemm(np.ones((2, 3)), np.ones((3, 2)))
    array([[3., 3.],
           [3., 3.]])
    """
    m, n = a.shape[0], b.shape[1]
    work = m * n * a.shape[1]
    # The work test first: a small product (most of them) pays no call into `threads`.
    parts = _parts(m, n) if work >= SPLIT_WORK and threads.parallel(work, SPLIT_WORK) else 1
    if parts > 1 and out is not None and (out.dtype != np.result_type(a, b) or not out.flags.c_contiguous):
        parts = 1  # an `out` np.dot cannot write: NumPy's matmul casts into it, whole
    if parts <= 1 or np.may_share_memory(a, b):
        if out is None:
            return a.dot(b)
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((m, n), np.result_type(a, b))

    def run(i):
        lo, hi = row_block(m, parts, i)
        np.dot(a[lo:hi], b, out=out[lo:hi])
    threads.run_parts(run, parts)
    return out


def _parts(m, n):
    """How many row blocks a product splits into: the thread count, fewer when there are too
    few rows for blocks of `_MIN_BLOCK`; 1 (whole) when the width is not a multiple of 8."""
    return min(threads.part_count(), m // _MIN_BLOCK) if n % 8 == 0 else 1


def row_block(size, parts, i):
    """Part `i` of `parts` near-equal ranges of range(size), starting on multiples of 8 (the
    BLAS's register blocks: no block's edge falls inside one)."""
    lo, hi = i * size // parts, (i + 1) * size // parts
    return lo - lo % 8 if i else 0, size if i == parts - 1 else hi - hi % 8
