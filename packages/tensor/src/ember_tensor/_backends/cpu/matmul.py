"""CPU matrix products: NumPy's matmul, which calls BLAS for float32 and float64."""
import ml_dtypes
import numpy as np

__all__ = ["matmul"]


_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def matmul(a, b):
    """Matrix product with NumPy's (= PyTorch's) batching rules, through BLAS for float32
    and float64; float16/bfloat16 are multiplied in float32 (the result stays float32)."""
    if a.dtype in _HALF:
        a, b = a.astype(np.float32), b.astype(np.float32)
    return np.matmul(a, b)
