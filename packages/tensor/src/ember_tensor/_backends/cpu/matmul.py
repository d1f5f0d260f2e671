"""CPU matrix products: NumPy's matmul, which calls BLAS for float32 and float64, and the
linear layer's product with a transposed weight and a bias. The BLAS runs on one thread;
large products split over ember's workers (`gemm.py`, `_batched_over_threads`)."""
import ml_dtypes
import numpy as np

from . import blas, gemm, threads

__all__ = ["matmul", "linear"]

# Multiply-adds from which a batched product splits its matrices over threads (~30 us of
# GEMM work at 1 thread on this project's machines): one thread per run of matrices.
_BATCH_SPLIT_WORK = 1 << 20


# Elements of the left operand below which a 2-d product is not offered to the split
# (it would need over 8K output columns to reach `gemm.SPLIT_WORK`): one attribute read
# spares the small products, most of them, the multiply-add count.
_FEW = 1024

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))
# Their type characters ("e", "E"): a string test is cheaper than comparing dtypes, and
# every small product pays it.
_HALF_CHARS = "".join(d.char for d in _HALF)
# float32 and float64: the dtypes whose 2-d products NumPy hands to BLAS.
_BLAS_CHARS = "fd"


def matmul(a, b):
    """Matrix product with NumPy's (= PyTorch's) batching rules, through BLAS for float32
    and float64; float16/bfloat16 are multiplied in float32 (the result stays float32)."""
    char = a.dtype.char
    if char in _HALF_CHARS:
        a, b = a.astype(np.float32), b.astype(np.float32)
    elif char in _BLAS_CHARS and a.ndim == 2 and b.ndim == 2 and b.dtype.char == char:
        # ndarray.dot reaches the same BLAS GEMM (bit for bit, layouts and the A @ A.T
        # special case included) with far less machinery than the matmul ufunc: 16x16
        # float32 1.3 us against 2.5 us, which a small product pays in full. A large one
        # splits over ember's threads (`gemm.py`: the BLAS runs on one); the size tests
        # cost a small one ~40 ns (`_FEW`), where computing M*K*N first cost ~280.
        if a.size < _FEW or a.size * b.shape[1] < gemm.SPLIT_WORK:
            return a.dot(b)
        return gemm.gemm(a, b)
    if char in _BLAS_CHARS and a.ndim >= 3 and a.shape[:-2] == b.shape[:-2] and b.dtype.char == char:
        out = _batched_over_threads(a, b)
        if out is not None:
            return out
    return np.matmul(a, b)


def _batched_over_threads(a, b):
    """a @ b for stacks of matrices of one batch shape, their matrices split over threads,
    or None when too small, on one thread, or the batch dims do not flatten to a view.

    NumPy's matmul calls one BLAS GEMM per matrix, and the BLAS does not thread a product
    as small as attention's (64 heads x 64x32 @ 32x64: 260 us on 1 or 2 OpenBLAS
    threads) where PyTorch's bmm splits the batch. Each thread here runs NumPy's matmul
    over its run of matrices with the BLAS at one thread (as always: `threads`), so the bits
    are a one-thread run's, whatever the budget. The 2-d form of this is `gemm.py`."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = a.size // (m * k) if m * k else 0
    if batch < 2 or not threads.parallel(batch * m * n * k, _BATCH_SPLIT_WORK):
        return None
    a3, b3 = a.reshape(batch, m, k), b.reshape(batch, k, n)
    # A copy never overlaps its source: the bounds test says whether reshape made one
    # (np.shares_memory's exact answer can cost far more than the product).
    if not (np.may_share_memory(a3, a) and np.may_share_memory(b3, b)):
        return None  # a copy to flatten them: NumPy's own loop reads them in place
    out = np.empty((batch, m, n), np.result_type(a, b))
    parts = min(threads.part_count(), batch)

    def run(i):
        lo, hi = i * batch // parts, (i + 1) * batch // parts
        np.matmul(a3[lo:hi], b3[lo:hi], out=out[lo:hi])
    threads.run_parts(run, parts)
    return out.reshape(a.shape[:-2] + (m, n))


def linear(x, weight, bias):
    """x @ weight.T + bias as one BLAS GEMM: x (*, in), weight (out, in), bias (out,) or None;
    float16/bfloat16 are multiplied in float32 (the result stays float32).

    >>> linear(np.ones((1, 2)), np.ones((3, 2)), np.zeros(3))
    array([[2., 2., 2.]])
    """
    if x.dtype in _HALF:
        # NumPy's BLAS has no half GEMM (a bfloat16 product would run NumPy's generic loop,
        # ~1.6x slower than float32 BLAS here): widen, multiply in float32, and let the op
        # round the float32 result back (float32 accumulation, as cuBLAS's half GEMMs do).
        x, weight = x.astype(np.float32), weight.astype(np.float32)
        bias = None if bias is None else bias.astype(np.float32)
    lead = x.shape[:-1]
    flat = x.reshape(-1, x.shape[-1])
    work = flat.size * weight.shape[0]
    if bias is not None and blas.MIN_WORK <= work and (work < gemm.SPLIT_WORK
                                                       or not threads.parallel(work, gemm.SPLIT_WORK)):
        # A product on one thread: the bias rides in its GEMM (`blas.py`: same bits).
        y = blas.product_with_bias(flat, weight, bias)
        if y is not None:
            return y.reshape(lead + (weight.shape[0],))
    # BLAS reads W^T in place; float32/float64 through ndarray.dot (see matmul), split over
    # ember's threads when large (`gemm.py`; the size test here spares a small one the call).
    if flat.dtype.char not in _BLAS_CHARS:
        y = flat @ weight.T
    elif flat.size < _FEW or work < gemm.SPLIT_WORK:
        y = flat.dot(weight.T)
    else:
        y = gemm.gemm(flat, weight.T)
    if bias is not None:
        y += bias
    return y.reshape(lead + (weight.shape[0],))
