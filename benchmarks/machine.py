"""This machine's limits: STREAM-style memory bandwidth and BLAS GEMM peak (NumPy)."""
import os
import time

import numpy as np


def memory_bandwidth(n=1 << 25, repeats=5):
    """Best copy bandwidth in bytes/s of a 128 MiB float32 array (read + write counted)."""
    a = np.ones(n, np.float32)
    b = np.empty_like(a)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best


def stream_triad(n=1 << 25, repeats=5):
    """Best STREAM triad bandwidth in bytes/s, ``a[i] = b[i] + s * c[i]`` on 128 MiB float32
    arrays in one Numba loop on the calling thread (1 thread), counted as STREAM counts it:
    two arrays read and one written, 12 bytes an element (write-allocate traffic not counted)."""
    import numba

    @numba.njit(cache=False, nogil=True)
    def triad(a, b, c, s):
        for i in range(a.shape[0]):
            a[i] = b[i] + s * c[i]

    a, b, c = np.empty(n, np.float32), np.ones(n, np.float32), np.ones(n, np.float32)
    triad(a, b, c, np.float32(3.0))  # compile and touch every page
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        triad(a, b, c, np.float32(3.0))
        best = min(best, time.perf_counter() - t)
    return 3 * a.nbytes / best


def gemm_peak(n=2048, repeats=3):
    """Best float32 GEMM rate in FLOP/s through NumPy's BLAS."""
    a = np.random.rand(n, n).astype(np.float32)
    b = np.random.rand(n, n).astype(np.float32)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best


def describe():
    """A one-line description of the machine."""
    import platform
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
