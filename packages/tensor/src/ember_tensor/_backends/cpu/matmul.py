"""CPU matrix products: NumPy's matmul, which calls BLAS for float32 and float64, and the
linear layer's product with a transposed weight and a bias."""
import ml_dtypes
import numpy as np

__all__ = ["matmul", "linear"]


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
        # float32 1.3 us against 2.5 us, which a small product pays in full.
        return a.dot(b)
    return np.matmul(a, b)


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
    # BLAS reads W^T in place; float32/float64 through ndarray.dot (see matmul).
    y = flat.dot(weight.T) if flat.dtype.char in _BLAS_CHARS else flat @ weight.T
    if bias is not None:
        y += bias
    return y.reshape(lead + (weight.shape[0],))
