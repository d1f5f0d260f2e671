"""QR in LAPACK's compact form (geqrf): R on and above the diagonal, the Householder
vectors below it, and their scales tau. NumPy's ``qr(mode="raw")`` calls geqrf and
returns the Fortran-ordered (transposed) factor."""
import numpy as np

__all__ = ["geqrf"]


def geqrf(a):
    """(compact QR, tau) of each m x n matrix of `a`: tau has min(m, n) entries."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-2] + (min(m, n),), a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau.astype(a.dtype, copy=False)
