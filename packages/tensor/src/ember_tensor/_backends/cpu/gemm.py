"""2-d matrix products on ember's threads: one BLAS GEMM, split into blocks of the output's
rows or columns over ember's workers, each block one single-threaded BLAS call writing its
part of the output.

Why not the BLAS's own threads: ember's parallel kernels run on its own worker pool
(`pool.py`), and OpenBLAS's threads are a second pool on the same cores. Between its
GEMMs each busy-waits for its next task; alternating (a GEMM, then a softmax, then a
GEMM) they take each other's cores (a Transformer step at 2 threads spent 7.5 ms in
lock waits and 4.4 ms in the spin). PyTorch has one OpenMP pool for MKL and its loops;
so does ember now: `threads` keeps OpenBLAS at one thread and the products that are
worth it are split here, over the same workers as everything else.

How a block is computed: by OpenBLAS's cblas_?gemm called through ctypes (which lets go
of the GIL for the call), on pointers into the operands with their leading dimensions.
NumPy's `dot` on a block was slower three ways (measured 2026-11-28, quiet 2-core Xeon,
float32, best of 25): a block of rows of a transposed operand (a weight gradient's
``x.T @ g``) is not a layout NumPy hands to the BLAS, so each block was copied first
((384, 1024) @ (1024, 128), one run: whole 1039 us, split 912; blocks by pointer 634); a worker
took the GIL after its wake-up to slice and dispatch; and only rows could be split.

Rows or columns: OpenBLAS packs the whole right operand for every call, so a product of
few rows (a batch of 64 through a wide layer) split by rows packs it twice — each half
of (64, 784) @ (784, 512) took 521 us of the whole's 876. Split by columns, each block
packs its half (291 us). So a product of under `_FEW_ROWS` rows splits by columns.

Bits: a block computed alone is bit-for-bit that block of the whole product, a
one-thread run's, when row blocks start on 8-row boundaries, column blocks on 64-column
ones, and the output's width is a multiple of 8 (tested, both dtypes, every layout, from
4M multiply-adds). Other widths are not split: OpenBLAS's kernel for a last partial
column block sums in an order that depends on where the block ends (seen: float64,
width 257). Nor are products with fewer than 16 rows (a column split differed for 1-5
rows), nor ``a @ a.T`` (one buffer: NumPy's SYRK), nor products of two dtypes or of
neither float dtype (NumPy's own loops).
"""
import numpy as np

from . import blas, threads
from .blas import ROW_MAJOR, NO_TRANS, TRANS

__all__ = ["gemm", "row_block"]

# Multiply-adds from which a product splits (~0.2 ms at one thread). Measured 2026-11-28
# on a quiet 2-core Xeon, float32, best of 25, one thread against split in two by pointer:
# (1024, 128) @ (128, 128) 265 -> 181 us, (64, 784) @ (784, 512) 557 -> 337 (columns).
# Below 8M (2M-4M on the ninth session's machine) handing a part over and meeting after it
# cost more than half the product.
SPLIT_WORK = 1 << 23
# Fewest rows a row block gets: a thinner block is a skinny GEMM the BLAS runs far below
# its peak, and takes other kernels (4 rows: other bits; one row would be a GEMV).
_MIN_BLOCK = 8
# Column blocks start on multiples of this (OpenBLAS's float kernels work on 16 columns
# of a row-major output at once, 8 for float64; 64 keeps whole cache lines per block).
_COLUMN_ALIGN = 64
# Products with fewer rows than this split by columns (see the module's docstring). At 64
# rows columns won (best of 8, 15 rounds: (64, 512) @ (512, 512)^T 301 us against 462 by
# rows, one thread 484); at 512 rows rows did, even with a wider output ((512, 64) @
# (64, 784), the MLP's weight gradient: 301 against 527, one thread 409).
_FEW_ROWS = 128



def gemm(a, b, out=None):
    """a @ b for 2-d float32/float64 arrays of one dtype, by BLAS, split by rows or columns
    over ember's threads when the budget, the work and the shape allow; written into `out`
    ((M, N)) when given (split only when C-contiguous and of the product's dtype).

    >>> gemm(np.ones((2, 3)), np.ones((3, 2)))
    array([[3., 3.],
           [3., 3.]])
    """
    m, n = a.shape[0], b.shape[1]
    work = m * n * a.shape[1]
    # The work test first: a small product (most of them) pays no call into `threads`.
    parts = _parts(m, n) if work >= SPLIT_WORK and threads.parallel(work, SPLIT_WORK) else 1
    if parts > 1 and (a.dtype != b.dtype or a.dtype.char not in "fd"
                      or out is not None and (out.dtype != a.dtype or not out.flags.c_contiguous)):
        parts = 1  # NumPy's dot casts (into `out`, or one operand to the other's dtype), whole
    if parts > 1 and (np.may_share_memory(a, b) or out is not None and (np.may_share_memory(out, a)
                                                                        or np.may_share_memory(out, b))):
        parts = 1  # NumPy's SYRK for a @ a.T; NumPy's dot copies an operand that `out` overlaps
    if parts <= 1:
        if out is None:
            return a.dot(b)
        return np.matmul(a, b, out=out)
    if out is None:
        out = np.empty((m, n), a.dtype)
    call = blas.gemm_function(a.dtype)
    if call is None:
        return _split_by_numpy(a, b, out)
    # NumPy copies an operand with no unit stride before its GEMM; so does this, once.
    a = a if _layout(a) else np.ascontiguousarray(a)
    b = b if _layout(b) else np.ascontiguousarray(b)
    blocks = _blocks(a, b, out, parts, by_rows=_by_rows(m, n))
    threads.run_parts(lambda i: call(*blocks[i]), parts)
    return out


def _split_by_numpy(a, b, out):
    """out = a @ b by NumPy's dot on blocks of rows over ember's threads (a BLAS other than
    OpenBLAS: no GEMM to call by address)."""
    m = a.shape[0]
    parts = min(threads.part_count(), m // _MIN_BLOCK)

    def run(i):
        rows = slice(*row_block(m, parts, i))
        np.dot(a[rows], b, out=out[rows])
    threads.run_parts(run, parts)
    return out


def _by_rows(m, n):
    """Whether an (m, n) output splits into blocks of rows (else of columns)."""
    return m >= _FEW_ROWS or n < 2 * _COLUMN_ALIGN


def _parts(m, n):
    """How many blocks a product splits into: the thread count, fewer when there are too
    few rows (`_MIN_BLOCK`) or columns (`_COLUMN_ALIGN`) for them; 1 (whole) when the
    width is not a multiple of 8 or there are under 16 rows."""
    if n % 8 or m < 2 * _MIN_BLOCK:
        return 1
    return min(threads.part_count(), m // _MIN_BLOCK if _by_rows(m, n) else n // _COLUMN_ALIGN)


def row_block(size, parts, i):
    """Part `i` of `parts` near-equal ranges of range(size), starting on multiples of 8 (the
    BLAS's register blocks: no block's edge falls inside one)."""
    return _block(size, parts, i, 8)


def _block(size, parts, i, align):
    """Part `i` of `parts` near-equal ranges of range(size), starting on multiples of `align`."""
    lo, hi = i * size // parts, (i + 1) * size // parts
    return lo - lo % align if i else 0, size if i == parts - 1 else hi - hi % align


def _layout(x):
    """(transpose flag, leading dimension) under which cblas reads the 2-d array `x` in
    place (row-major), or None when neither axis has a unit stride (NumPy's test)."""
    item, (rows, cols), (down, across) = x.itemsize, x.shape, x.strides
    if across == item and down % item == 0 and down >= max(cols, 1) * item:
        return NO_TRANS, down // item
    if down == item and across % item == 0 and across >= max(rows, 1) * item:
        return TRANS, across // item
    return None


def _blocks(a, b, out, parts, by_rows):
    """cblas_?gemm's arguments for each block of out = a @ b: `parts` blocks of rows (a's
    rows, out's rows) or of columns (b's columns, out's columns)."""
    (m, k), n = a.shape, b.shape[1]
    (trans_a, lda), (trans_b, ldb) = _layout(a), _layout(b)
    item, ldc = out.itemsize, out.strides[0] // out.itemsize
    pa, pb, pc = a.ctypes.data, b.ctypes.data, out.ctypes.data
    blocks = []
    for i in range(parts):
        if by_rows:
            lo, hi = _block(m, parts, i, 8)
            place = (hi - lo, n, k, 1.0, pa + lo * a.strides[0], lda, pb, ldb, 0.0, pc + lo * out.strides[0], ldc)
        else:
            lo, hi = _block(n, parts, i, _COLUMN_ALIGN)
            place = (m, hi - lo, k, 1.0, pa, lda, pb + lo * b.strides[1], ldb, 0.0, pc + lo * item, ldc)
        blocks.append((ROW_MAJOR, trans_a, trans_b) + place)
    return blocks
