"""The linear layer's bias inside its GEMM (`_backends/cpu/blas.py`): the same bits as the
product followed by ``+= bias``, for every depth up to `MAX_DEPTH`, both BLAS dtypes and
odd shapes; declined (None) where those bits are not assured or the call would not pay."""
import numpy as np
import pytest

from ember_tensor._backends.cpu import blas, matmul

# (M, K, N): depths 1 to MAX_DEPTH, widths that are not multiples of the BLAS's blocks
CASES = [(4096, 1, 1031), (1024, 64, 256), (1024, 128, 384), (1031, 128, 129), (513, 256, 257),
         (2048, 256, 128)]


def _operands(m, k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((n, k)).astype(dtype),
            (rng.standard_normal(n) * 10).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", CASES)
def test_the_bias_in_the_gemm_keeps_the_two_passes_bits(m, k, n, dtype):
    x, w, b = _operands(m, k, n, dtype)
    got = blas.product_with_bias(x, w, b)
    if got is None:
        pytest.skip("NumPy's BLAS is not an OpenBLAS with cblas_?gemm")
    want = x.dot(w.T)
    want += b
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    # the backend's linear takes it (one thread) and gives those bits too
    assert matmul.linear(x, w, b).tobytes() == want.tobytes()


def test_declines_what_it_cannot_assure_or_would_not_pay():
    x, w, b = _operands(1024, 128, 384, np.float32)
    deep_x, deep_w, _ = _operands(1024, blas.MAX_DEPTH + 1, 384, np.float32)
    small_x, small_w, small_b = _operands(16, 16, 16, np.float32)
    assert blas.product_with_bias(deep_x, deep_w, b) is None                  # past one block of depth
    assert blas.product_with_bias(small_x, small_w, small_b) is None          # the call would not pay
    assert blas.product_with_bias(x, w, b.astype(np.float64)) is None         # mixed dtypes
    assert blas.product_with_bias(x.astype(np.float16), w.astype(np.float16), b.astype(np.float16)) is None
    assert blas.product_with_bias(np.asfortranarray(x), w, b) is None         # not C-contiguous
    assert blas.product_with_bias(x, np.asfortranarray(w), b) is None
    assert blas.product_with_bias(x[:0], w, b) is None                        # empty
