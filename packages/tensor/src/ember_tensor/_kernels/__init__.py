"""Compute kernels: Numba loops for the CPU (and numba.cuda kernels for CUDA)."""
