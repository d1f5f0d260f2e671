"""Custom kernels written in Python, for the CPU and CUDA from one source.

- ``kernel``: an elementwise op from a scalar function (with ``grad=`` derivatives);
  ``kernel.helper`` marks functions a kernel body calls.
- ``reduce_kernel``: a reduction from an associative combine function and its identity.
- ``raw_kernel``: an op from hand-written Numba loops, with a user-given backward.
"""
from .elementwise import CustomKernel, kernel
from .raw import raw_kernel
from .reduce import reduce_kernel

__all__ = ["kernel", "reduce_kernel", "raw_kernel", "CustomKernel"]
