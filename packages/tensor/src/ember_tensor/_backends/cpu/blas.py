"""NumPy's OpenBLAS called directly: its cblas_?gemm as a ctypes function
(`gemm_function`: the split products of `gemm.py` call it on pointers into their blocks),
and the linear layer's product and bias as one call of it (`product_with_bias`).

A ctypes call lets go of the GIL for the call and runs on the one thread the BLAS is held
at, as NumPy's does; its address is the one `threads.blas_gemm_address` finds (None where
NumPy's BLAS is not a known OpenBLAS: callers keep NumPy's own calls then).

``y = x @ w.T + bias`` by cblas_?gemm with beta 1 into a ``y`` that already holds the bias
(PyTorch's addmm does the same), where ``x.dot(w.T)`` then ``y += bias`` made a second
pass over the output. That pass cost as much as a tenth of the product: (1024, 128) @
(128, 384) float32, 814 us against 727 (a Transformer step's four linear layers: ~0.2 ms).
ndarray.dot cannot ask for beta 1. A ctypes call costs ~8 us more than ndarray.dot, so
only products of `MIN_WORK` multiply-adds or more take it ((128, 128) @ (128, 128): even;
(1024, 128) @ (128, 128): 29 us saved).

Bits: the BLAS adds its sum of products to the bias in one rounding, which is what
``y += bias`` did to the finished sum, while the reduction dim fits one of its blocks:
up to `MAX_DEPTH` (448 measured for OpenBLAS's SkylakeX sgemm; beyond its block the
bias would enter before the last block's partial sum, another rounding). `MAX_DEPTH`
stays well below that, for other CPUs' kernels and blocks (tests/test_blas_bias.py holds
the bits to the two passes'). Deeper products, other dtypes and layouts keep the two
passes (`product_with_bias` returns None).
"""
import ctypes

import numpy as np

from . import threads

__all__ = ["gemm_function", "product_with_bias", "MAX_DEPTH", "MIN_WORK", "ROW_MAJOR", "NO_TRANS", "TRANS"]

MAX_DEPTH = 256  # in_features up to which the bias rides in the GEMM (see the docstring)
MIN_WORK = 1 << 22  # multiply-adds from which the ctypes call pays (see the docstring)

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112  # CBLAS's enums
_KINDS = {np.dtype(np.float32): ("s", ctypes.c_float), np.dtype(np.float64): ("d", ctypes.c_double)}
_functions = {}


def gemm_function(dtype):
    """OpenBLAS's cblas_sgemm/cblas_dgemm for float32/float64 `dtype` as a ctypes function
    (which releases the GIL for the call), or None where NumPy's BLAS is not a known
    OpenBLAS."""
    dtype = np.dtype(dtype)
    if dtype not in _functions:
        kind, real = _KINDS[dtype]
        found = threads.blas_gemm_address(kind)
        if found is None:
            _functions[dtype] = None
        else:
            address, ilp64 = found
            integer = ctypes.c_int64 if ilp64 else ctypes.c_int32
            prototype = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int, integer, integer, integer,
                                         real, ctypes.c_void_p, integer, ctypes.c_void_p, integer, real,
                                         ctypes.c_void_p, integer)
            _functions[dtype] = prototype(address)
    return _functions[dtype]


def product_with_bias(x, weight, bias):
    """x @ weight.T + bias as one GEMM for C-contiguous float32/float64 x (M, K), weight
    (N, K) and bias (N,) of one dtype with 0 < K <= `MAX_DEPTH` and M*K*N >= `MIN_WORK`;
    None otherwise (or where the BLAS is not NumPy's OpenBLAS), for the caller's two
    passes.

    >>> product_with_bias(np.ones((2048, 3)), np.ones((1024, 3)), np.arange(1024.0))[1, :3]
    array([3., 4., 5.])
    """
    dtype = x.dtype
    m, k = x.shape
    n = weight.shape[0]
    if (dtype not in _KINDS or weight.dtype != dtype or bias.dtype != dtype or not 0 < k <= MAX_DEPTH
            or m * k * n < MIN_WORK or not (x.flags.c_contiguous and weight.flags.c_contiguous
                                             and bias.flags.c_contiguous)):
        return None
    gemm = gemm_function(dtype)
    if gemm is None:
        return None
    y = np.empty((m, n), dtype)
    y[...] = bias
    gemm(ROW_MAJOR, NO_TRANS, TRANS, m, n, k, 1.0, x.ctypes.data, k, weight.ctypes.data, k, 1.0, y.ctypes.data, n)
    return y
