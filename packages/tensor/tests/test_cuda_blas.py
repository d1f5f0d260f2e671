"""The cuBLAS calls of `_backends.cuda.blas`, checked against cuBLAS's contract without a GPU.

Under Numba's simulator device arrays live in host memory, so a stand-in for nvmath's
`cublas` bindings module can do what cuBLAS documents: read column-major operands at the
given pointers with the given ops, leading dimensions and batch strides, check the
argument rules cuBLAS enforces (CUBLAS_STATUS_INVALID_VALUE otherwise), and write C. A
matmul routed through it must then equal the CPU's: wrong pointers, leading dimensions,
ops, types or scalars show up as wrong numbers or a broken rule. On a real GPU the
stand-in would read device pointers as host memory (a segfault, seen on an H100): there
the `gpu` test below multiplies every layout and dtype with cuBLAS itself.
"""
import ctypes
import os

import ml_dtypes
import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")

OP_N, OP_T = 0, 1
# cudaDataType_t codes -> NumPy dtypes, for the Ex entry point.
DATA_TYPES = {2: np.dtype(np.float16), 14: np.dtype(ml_dtypes.bfloat16)}
COMPUTE_32F, GEMM_DEFAULT = 68, -1


def _scalar(ptr, dtype):
    return np.frombuffer((ctypes.c_char * np.dtype(dtype).itemsize).from_address(ptr), dtype)[0]


def _column_major(ptr, dtype, rows, cols, ld, stride, batch):
    """The (batch, rows, cols) column-major matrices at device pointer `ptr` (host memory here)."""
    item = np.dtype(dtype).itemsize
    extent = (batch - 1) * stride + (cols - 1) * ld + rows
    buf = np.ctypeslib.as_array((ctypes.c_uint8 * (extent * item)).from_address(ptr)).view(dtype)
    return np.lib.stride_tricks.as_strided(buf, (batch, rows, cols), (stride * item, item, ld * item),
                                           writeable=True)


class FakeCublas:
    """Stands in for `nvmath.bindings.cublas`: computes what cuBLAS would, records the calls."""

    def __init__(self):
        self.calls = []

    def create(self):
        return 1234

    def set_stream(self, handle, stream):
        assert handle == 1234 and isinstance(stream, int)

    def _gemm(self, dtype, scalar_type, transa, transb, m, n, k, alpha, a, lda, sa, b, ldb, sb,
              beta, c, ldc, sc, batch):
        assert transa in (OP_N, OP_T) and transb in (OP_N, OP_T)
        assert min(m, n, k) >= 0 and batch >= 1
        # cuBLAS's rules: each leading dimension covers the stored matrix's rows.
        assert lda >= max(1, m if transa == OP_N else k), "lda"
        assert ldb >= max(1, k if transb == OP_N else n), "ldb"
        assert ldc >= max(1, m), "ldc"
        A = _column_major(a, dtype, *((m, k) if transa == OP_N else (k, m)), lda, sa, batch)
        B = _column_major(b, dtype, *((k, n) if transb == OP_N else (n, k)), ldb, sb, batch)
        C = _column_major(c, dtype, m, n, ldc, sc, batch)
        opA = A if transa == OP_N else A.transpose(0, 2, 1)
        opB = B if transb == OP_N else B.transpose(0, 2, 1)
        assert _scalar(beta, scalar_type) == 0  # C is not read when beta is 0
        wide = _scalar(alpha, scalar_type) * (opA.astype(np.float64) @ opB.astype(np.float64))
        C[...] = wide.astype(dtype)

    def sgemm_strided_batched(self, handle, *args):
        self.calls.append(("sgemm", args))
        self._gemm(np.float32, np.float32, *args)

    def dgemm_strided_batched(self, handle, *args):
        self.calls.append(("dgemm", args))
        self._gemm(np.float64, np.float64, *args)

    def gemm_strided_batched_ex(self, handle, transa, transb, m, n, k, alpha, a, atype, lda, sa,
                                b, btype, ldb, sb, beta, c, ctype, ldc, sc, batch, compute, algo):
        self.calls.append(("gemm_ex", (transa, transb, m, n, k, atype, lda, sa, btype, ldb, sb,
                                       ctype, ldc, sc, batch, compute, algo)))
        assert atype == btype == ctype and compute == COMPUTE_32F and algo == GEMM_DEFAULT
        self._gemm(DATA_TYPES[atype], np.float32, transa, transb, m, n, k, alpha, a, lda, sa,
                   b, ldb, sb, beta, c, ldc, sc, batch)


@pytest.fixture
def cublas(monkeypatch):
    """Route CUDA matmuls to the stand-in, as on a GPU with nvmath-python installed."""
    if not SIMULATED:
        pytest.skip("the stand-in reads device memory as host memory: simulator only")
    from ember_tensor._backends.cuda import storage as _cuda  # noqa: F401 - the backend first: it imports _cuda_matmul at its end
    from ember_tensor._backends.cuda import blas as _cuda_blas, matmul as _cuda_matmul
    fake = FakeCublas()
    monkeypatch.setattr(_cuda_matmul, "SIMULATOR", False)
    monkeypatch.setattr(_cuda_blas, "_bindings", lambda: fake)
    monkeypatch.setattr(_cuda_blas, "_handles", {})
    # The simulator's streams have no driver handle to give cuBLAS.
    monkeypatch.setattr(_cuda_blas, "_stream_handle", lambda stream: 0)
    return fake


def _operands(dtype):
    a = et.tensor(np.arange(15, dtype=np.float32).reshape(3, 5) / 4 - 1).to(dtype)
    b = et.tensor(np.arange(10, dtype=np.float32).reshape(5, 2) / 3 - 1).to(dtype)
    return a, b


LAYOUTS = [
    ("contiguous", lambda a, b: a @ b),
    ("a_transposed_view", lambda a, b: a.t().contiguous().t() @ b),
    ("b_transposed_view", lambda a, b: a @ b.t().contiguous().t()),
    ("both_transposed", lambda a, b: (b.t() @ a.t())),
    ("row_slices", lambda a, b: a[1:] @ b[:, 1:]),
    ("matrix_vector", lambda a, b: a @ b[:, 0]),
    ("vector_matrix", lambda a, b: a[0] @ b),
    ("batched_broadcast", lambda a, b: a.expand(2, 3, 5) @ b),
    ("bmm", lambda a, b: et.bmm(et.stack([a, a * 2]), et.stack([b, -b]))),
    ("batched_transposed", lambda a, b: et.stack([a, -a]).transpose(1, 2).contiguous().transpose(1, 2) @ b),
]
ENTRY = {et.float32: "sgemm", et.float64: "dgemm", et.float16: "gemm_ex", et.bfloat16: "gemm_ex"}


@pytest.mark.parametrize("dtype", list(ENTRY), ids=str)
@pytest.mark.parametrize("name,fn", LAYOUTS, ids=[n for n, _ in LAYOUTS])
def test_cublas_calls_compute_the_cpu_product(cublas, dtype, name, fn):
    """Every layout of every cuBLAS dtype goes through its entry point and gives the CPU's product."""
    a, b = _operands(dtype)
    expected = fn(a, b)
    got = fn(a.cuda(), b.cuda())
    assert cublas.calls and {entry for entry, _ in cublas.calls} == {ENTRY[dtype]}
    assert got.dtype == expected.dtype and got.shape == expected.shape
    tol = {et.float16: 2e-3, et.bfloat16: 2e-2}.get(dtype, 1e-6)
    np.testing.assert_allclose(got.cpu().float().numpy(), expected.float().numpy(), rtol=tol, atol=tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", list(ENTRY), ids=str)
def test_cublas_computes_the_cpu_product_of_every_layout_on_a_gpu(dtype):
    """On a real GPU with nvmath-python: every layout of every cuBLAS dtype, through cuBLAS
    itself (not the tiled kernel), gives the CPU's product."""
    from ember_tensor._backends.cuda import blas as _cuda_blas
    if not _cuda_blas.available():
        pytest.skip("nvmath-python (cuBLAS bindings) is not installed")
    calls = []
    gemm = _cuda_blas.gemm

    def counted(*args):
        done = gemm(*args)
        calls.append(done)
        return done

    _cuda_blas.gemm = counted
    try:
        for name, fn in LAYOUTS:
            a, b = _operands(dtype)
            calls.clear()
            got = fn(a.cuda(), b.cuda())
            assert calls and all(calls), f"{name}: not computed by cuBLAS"
            expected = fn(a, b)
            tol = {et.float16: 2e-3, et.bfloat16: 2e-2}.get(dtype, 1e-6)
            np.testing.assert_allclose(got.cpu().float().numpy(), expected.float().numpy(), rtol=tol, atol=tol,
                                       err_msg=name)
    finally:
        _cuda_blas.gemm = gemm


def test_half_types_use_the_ex_entry_point_with_float32_compute(cublas):
    """float16 and bfloat16 call gemm_strided_batched_ex with their data type and float32 compute."""
    a, b = _operands(et.bfloat16)
    a.cuda() @ b.cuda()
    a.half().cuda() @ b.half().cuda()
    # C^T (2 x 3) = B^T (2 x 5) @ A^T (5 x 3): B first, both op N, ld = the row strides;
    # one matrix each, so batch strides 0 (C's is its matrix size).
    (entry, bf16), (_, f16) = cublas.calls
    assert entry == "gemm_ex"
    assert bf16 == (OP_N, OP_N, 2, 3, 5, 14, 2, 0, 14, 5, 0, 14, 2, 6, 1, COMPUTE_32F, GEMM_DEFAULT)
    assert f16[5] == f16[8] == f16[11] == 2


def test_transposed_views_are_passed_as_op_t_without_copies(cublas):
    """A transposed view is passed as op T with its own leading dimension, not copied."""
    a, b = _operands(et.float32)
    at = a.t().contiguous().cuda().t()  # (3, 5) with unit row stride
    at @ b.cuda()
    (_, args), = cublas.calls
    transa, transb, m, n, k, _alpha, _pb, ldb_, _sb, _pa, lda_, _sa = args[:12]
    assert (transa, transb, m, n, k) == (OP_N, OP_T, 2, 3, 5)
    assert ldb_ == 2 and lda_ == 3  # B's row stride; A's column stride


def test_operands_without_a_unit_stride_fall_back_to_the_tiled_kernel(cublas):
    """An operand with no unit stride is not cuBLAS's: the tiled kernel computes the product."""
    from ember_tensor._backends.cuda import blas as _cuda_blas
    a, b = _operands(et.float32)
    stepped = et.cat([b, -b], 1).cuda()[:, ::2]  # column stride 2: neither op N nor op T
    out = et.empty(1, 3, 2, device="cuda")._data
    assert _cuda_blas.gemm(a.cuda()._data.reshape(1, 3, 5), stepped._data.reshape(1, 5, 2), out, 0) is False
    assert not cublas.calls
    expected = a @ et.cat([b, -b], 1)[:, ::2]
    np.testing.assert_allclose((a.cuda() @ stepped).cpu().numpy(), expected.numpy(), rtol=1e-6)
    assert not cublas.calls


def test_integer_products_never_reach_cublas(cublas):
    """Integer products stay with the tiled kernel (cuBLAS has no integer GEMM here)."""
    from ember_tensor._backends.cuda import blas as _cuda_blas
    a, b = _operands(et.float32)
    assert ((a.long().cuda() @ b.long().cuda()).cpu().tolist() == (a.long() @ b.long()).tolist())
    assert not cublas.calls
    assert not _cuda_blas.handles(np.int64) and _cuda_blas.handles(ml_dtypes.bfloat16)


def test_stand_in_and_constants_match_nvmath_where_installed():
    """The stand-in's signatures and the constants are nvmath-python's (where it is installed)."""
    # Checked with nvmath-python 1.0.0; re-checked wherever it is installed (GPU machines).
    cublas_bindings = pytest.importorskip("nvmath.bindings.cublas")
    import inspect

    import nvmath
    from ember_tensor._backends.cuda import storage as _cuda  # noqa: F401 - the backend first, as above
    from ember_tensor._backends.cuda import blas as _cuda_blas
    assert int(cublas_bindings.ComputeType.COMPUTE_32F) == _cuda_blas.CUBLAS_COMPUTE_32F
    assert int(cublas_bindings.GemmAlgo.DFALT) == _cuda_blas.CUBLAS_GEMM_DEFAULT
    assert int(nvmath.CudaDataType.CUDA_R_16F) == _cuda_blas.CUDA_R_16F
    assert int(nvmath.CudaDataType.CUDA_R_16BF) == _cuda_blas.CUDA_R_16BF
    def documented(name):
        return len(getattr(cublas_bindings, name).__doc__.split("(", 1)[1].split(")", 1)[0].split(","))
    # The stand-ins' arguments, less self (and dtype, scalar_type of _gemm, plus the handle).
    assert documented("gemm_strided_batched_ex") == len(
        inspect.signature(FakeCublas.gemm_strided_batched_ex).parameters) - 1
    for name in ("sgemm_strided_batched", "dgemm_strided_batched"):
        assert documented(name) == len(inspect.signature(FakeCublas._gemm).parameters) - 3 + 1, name
