"""``torch.backends.openmp``: ember's parallel CPU kernels run on Numba's threading layer
(OpenMP where available)."""
__all__ = ["is_available"]


def is_available():
    """Whether Numba's parallel kernels can use an OpenMP threading layer."""
    try:
        from numba.np.ufunc import omppool  # noqa: F401 - its presence is the answer
    except ImportError:
        return False
    return True
