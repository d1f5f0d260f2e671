"""The CPU backend: NumPy arrays, Numba `njit` loops and NumPy's BLAS.

One module per family of ops (`_families.FAMILIES`), each taking and returning arrays;
the CUDA backend has the same modules with the same function names. A family module
loads on first use, so importing ember_tensor does not load Numba.
"""
import importlib

from .._families import FAMILIES

__all__ = ["FAMILIES", "ATOMIC_ACCUMULATION"]

# Whether this backend's accumulating kernels add with atomics, in an order that varies
# from run to run (the ops PyTorch refuses under use_deterministic_algorithms): not here.
ATOMIC_ACCUMULATION = False


def __getattr__(name):
    if name in FAMILIES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
