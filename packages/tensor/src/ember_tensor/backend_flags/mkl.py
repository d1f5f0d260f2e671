"""``torch.backends.mkl``: ember's BLAS is NumPy's (OpenBLAS in NumPy's wheels), not MKL."""
__all__ = ["is_available"]


def is_available():
    """False: ember does not call MKL."""
    return False
