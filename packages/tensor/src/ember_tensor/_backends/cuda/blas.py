"""cuBLAS matrix products for CUDA tensors, through nvmath-python's cuBLAS bindings.

`_backends.cuda.matmul._gemm` asks `gemm` first and falls back to the Numba tiled kernel of
`_backends.cuda.kernels.loops` when it returns False: when nvmath-python (``pip install
nvmath-python[cu12]``) is not importable, under the simulator (never called there), for
dtypes other than float16/bfloat16/float32/float64, and for operands whose matrices are
not strided like a (possibly transposed) matrix in memory.

float32/float64 go to cublas{S,D}gemmStridedBatched; float16 and bfloat16 to
cublasGemmStridedBatchedEx with the operands and the result in the half type and
CUBLAS_COMPUTE_32F (float32 accumulation, as the CPU path computes them in float32;
cuBLAS picks tensor-core kernels for these types on its own).

The call: ember's arrays are row-major, cuBLAS's column-major. A row-major (m, n)
matrix read as column-major is its transpose, so C = A @ B is computed as
C^T = B^T @ A^T with the operands swapped and no copies: an operand with unit column
stride is passed as is (op N, leading dimension = its row stride), one with unit row
stride (a transposed view) as op T (leading dimension = its column stride). Batches use
the strided-batched entry points (a batch stride of 0 broadcasts one matrix).

Run on an H100 with nvmath-python 1.0.0: `tests/test_cuda_blas.py`'s `gpu` test multiplies
every layout and dtype through cuBLAS and matches the CPU. Under the simulator the same
file checks the calls against cuBLAS's documented contract with a stand-in bindings
module that computes what cuBLAS would (and, where nvmath-python is installed, the
stand-in's signatures and the constants below against nvmath's).
"""
import threading

import numpy as np

from . import nvmath_bindings

__all__ = ["gemm", "available", "handles"]

_OP_N, _OP_T = 0, 1  # cublasOperation_t
_lock = threading.Lock()
_handles = {}  # (device index, thread id) -> cublasHandle_t


def _bindings():
    """nvmath's cuBLAS bindings module, or None when they cannot be had."""
    return nvmath_bindings.load("cublas")


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


# cudaDataType_t / cublasComputeType_t / cublasGemmAlgo_t values (library_types.h, cublas_api.h).
CUDA_R_16F, CUDA_R_16BF = 2, 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
# NumPy dtype name -> cudaDataType_t of the half types cublasGemmStridedBatchedEx takes.
_HALF_TYPES = {"float16": CUDA_R_16F, "bfloat16": CUDA_R_16BF}
_FULL_TYPES = ("float32", "float64")


def handles(dtype):
    """Whether `gemm` takes arrays of NumPy dtype `dtype` (when cuBLAS is available)."""
    return np.dtype(dtype).name in _HALF_TYPES or np.dtype(dtype).name in _FULL_TYPES


def gemm(a, b, out, stream):
    """out[z] = a[z] @ b[z] on cuBLAS for 3-d device views; False when cuBLAS cannot."""
    if not handles(out.dtype) or a.dtype != out.dtype or b.dtype != out.dtype:
        return False
    cublas = _bindings()
    if cublas is None:
        return False
    pa, pb, pc = _operand(a), _operand(b), _operand(out)
    if pa is None or pb is None or pc is None or pc[0] != _OP_N:
        return False
    batch, m, n = out.shape
    k = a.shape[2]
    from . import runtime
    from .arrays import ptr as _ptr
    handle = _handle(cublas, runtime.current_index())  # one handle per device and thread
    cublas.set_stream(handle, _stream_handle(stream))
    name = out.dtype.name
    # alpha, beta: host scalars (pointer mode host) of the compute type.
    scalar_type = np.float32 if name in _HALF_TYPES else out.dtype
    one, zero = np.ones(1, scalar_type), np.zeros(1, scalar_type)
    # C^T (n x m) = B^T (n x k) @ A^T (k x m) in cuBLAS's column-major terms.
    if name in _HALF_TYPES:
        kind = _HALF_TYPES[name]
        cublas.gemm_strided_batched_ex(
            handle, pb[0], pa[0], n, m, k, one.ctypes.data, _ptr(b), kind, pb[1], pb[2],
            _ptr(a), kind, pa[1], pa[2], zero.ctypes.data, _ptr(out), kind, pc[1], pc[2], batch,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)
        return True
    fn = cublas.sgemm_strided_batched if name == "float32" else cublas.dgemm_strided_batched
    fn(handle, pb[0], pa[0], n, m, k, one.ctypes.data, _ptr(b), pb[1], pb[2],
       _ptr(a), pa[1], pa[2], zero.ctypes.data, _ptr(out), pc[1], pc[2], batch)
    return True
