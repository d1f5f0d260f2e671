"""CPU matrix products: NumPy's matmul, which calls BLAS for float32 and float64, and the
linear layer's product with a transposed weight and a bias."""
import numpy as np

__all__ = ["matmul", "linear"]


def matmul(a, b):
    """Matrix product through NumPy (BLAS for float32/float64)."""
    return np.matmul(a, b)


def linear(x, weight, bias):
    """x @ weight.T + bias as one BLAS GEMM: x (*, in), weight (out, in), bias (out,) or None.

    >>> linear(np.ones((1, 2)), np.ones((3, 2)), np.zeros(3))
    array([[2., 2., 2.]])
    """
    lead = x.shape[:-1]
    y = x.reshape(-1, x.shape[-1]) @ weight.T  # BLAS reads W^T in place
    if bias is not None:
        y += bias
    return y.reshape(lead + (weight.shape[0],))
