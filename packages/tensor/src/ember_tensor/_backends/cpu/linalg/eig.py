"""Eigen-decomposition of general (non-symmetric) square matrices: LAPACK's geev, batched
by NumPy. Results are always complex, as PyTorch's: a real matrix may have complex
eigenvalues, and NumPy returns real arrays when all of a batch's happen to be real."""
import numpy as np

__all__ = ["eig", "eigvals"]


def _complex_of(dtype):
    return np.result_type(dtype, np.complex64)


def eig(a):
    """(eigenvalues, eigenvectors) of each matrix of `a`, complex; eigenvectors are the
    columns, each of unit norm (geev's normalization, as PyTorch's). None when `a`
    holds an inf or a nan (LAPACK would loop or return garbage)."""
    if not np.isfinite(a).all():
        return None
    complex_dtype = _complex_of(a.dtype)
    if a.size == 0:
        return np.zeros(a.shape[:-1], complex_dtype), np.zeros(a.shape, complex_dtype)
    values, vectors = np.linalg.eig(a)
    return values.astype(complex_dtype, copy=False), vectors.astype(complex_dtype, copy=False)


def eigvals(a):
    """The eigenvalues of each matrix of `a`, complex (None when `a` is not finite)."""
    if not np.isfinite(a).all():
        return None
    if a.size == 0:
        return np.zeros(a.shape[:-1], _complex_of(a.dtype))
    return np.linalg.eigvals(a).astype(_complex_of(a.dtype), copy=False)
