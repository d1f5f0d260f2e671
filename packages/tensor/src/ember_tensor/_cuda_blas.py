"""cuBLAS matrix products for CUDA tensors, through nvmath-python's cuBLAS bindings.

`_cuda._gemm` asks `gemm` first and falls back to the Numba tiled kernel of
`_kernels.cuda_loops` when it returns False: when nvmath-python (``pip install
nvmath-python[cu12]``) is not importable, under the simulator (never called there), for
dtypes other than float32/float64, and for operands whose matrices are not strided
like a (possibly transposed) matrix in memory.

The call: ember's arrays are row-major, cuBLAS's column-major. A row-major (m, n)
matrix read as column-major is its transpose, so C = A @ B is computed as
C^T = B^T @ A^T with the operands swapped and no copies: an operand with unit column
stride is passed as is (op N, leading dimension = its row stride), one with unit row
stride (a transposed view) as op T (leading dimension = its column stride). Batches use
the strided-batched entry points (a batch stride of 0 broadcasts one matrix).

Not yet run on a real GPU (no GPU has been lent to this work so far): the code follows
cuBLAS's documented contract; `tests/test_cuda.py` compares it with the CPU there.
"""
import threading

import numpy as np

__all__ = ["gemm", "available"]

_OP_N, _OP_T = 0, 1  # cublasOperation_t
_lock = threading.Lock()
_handles = {}  # (device index, thread id) -> cublasHandle_t
_cublas = None
_unusable = False


def _bindings():
    """nvmath's cuBLAS bindings module, or None when they cannot be had."""
    global _cublas, _unusable
    if _cublas is None and not _unusable:
        try:
            from nvmath.bindings import cublas
            _cublas = cublas
        except Exception:  # not installed, or no libcublas: the Numba kernel does the work
            _unusable = True
    return _cublas


def available():
    """Whether matrix products go to cuBLAS."""
    return _bindings() is not None


def _handle(cublas, device_index):
    key = (device_index, threading.get_ident())
    handle = _handles.get(key)
    if handle is None:
        with _lock:
            handle = _handles[key] = cublas.create()
    return handle


def _operand(x):
    """(op, leading dimension, batch stride) in elements for 3-d view x, or None."""
    item = x.dtype.itemsize
    sz, s0, s1 = (s // item for s in x.strides)
    _, rows, cols = x.shape
    if cols == 1 or s1 == 1:  # each row is contiguous: op N, ld = the row stride
        ld = s0 if rows > 1 else max(1, cols)
        if ld >= max(1, cols):
            return _OP_N, ld, sz
    if rows == 1 or s0 == 1:  # each column is contiguous (a transposed view): op T
        ld = s1 if cols > 1 else max(1, rows)
        if ld >= max(1, rows):
            return _OP_T, ld, sz
    return None  # the Numba kernel reads any strides


def _stream_handle(stream):
    if not stream:
        return 0
    handle = stream.handle
    return int(getattr(handle, "value", handle) or 0)


def gemm(a, b, out, stream):
    """out[z] = a[z] @ b[z] on cuBLAS for 3-d device views; False when cuBLAS cannot."""
    if out.dtype not in (np.float32, np.float64) or a.dtype != out.dtype or b.dtype != out.dtype:
        return False
    cublas = _bindings()
    if cublas is None:
        return False
    pa, pb, pc = _operand(a), _operand(b), _operand(out)
    if pa is None or pb is None or pc is None or pc[0] != _OP_N:
        return False
    batch, m, n = out.shape
    k = a.shape[2]
    from numba import cuda
    from ._cuda import _ptr
    handle = _handle(cublas, cuda.get_current_device().id)
    cublas.set_stream(handle, _stream_handle(stream))
    one, zero = np.ones(1, out.dtype), np.zeros(1, out.dtype)  # host scalars (pointer mode host)
    fn = cublas.sgemm_strided_batched if out.dtype == np.float32 else cublas.dgemm_strided_batched
    # C^T (n x m) = B^T (n x k) @ A^T (k x m) in cuBLAS's column-major terms.
    fn(handle, pb[0], pa[0], n, m, k, one.ctypes.data, _ptr(b), pb[1], pb[2],
       _ptr(a), pa[1], pa[2], zero.ctypes.data, _ptr(out), pc[1], pc[2], batch)
    return True
