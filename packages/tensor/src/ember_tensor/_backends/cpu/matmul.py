"""CPU matrix products: NumPy's matmul, which calls BLAS for float32 and float64."""
import numpy as np

__all__ = ["matmul"]


def matmul(a, b):
    """Matrix product through NumPy (BLAS for float32/float64)."""
    return np.matmul(a, b)
