"""The CPU LU of real matrices rounds each trailing update ``a - l * u`` once (a fused
multiply-add, `_backends/cpu/kernels/lu.py`), as LAPACK's elimination does on a CPU with
FMA (PyTorch's MKL); its pivots, info and factors otherwise as before (NumPy's batched
elimination, kept for complex matrices, is the reference)."""
import numpy as np
import pytest

import ember_tensor as E
from ember_tensor._backends.cpu.linalg import lu as cpu_lu


def _numpy_elimination(a):
    # The elimination before the kernel: products and differences rounded apart.
    m, n = a.shape
    lu = a.copy()
    pivots, info = [], 0
    for j in range(min(m, n)):
        sizes = np.abs(lu[j:, j])
        p = j + int(np.argmax(sizes))
        pivots.append(p + 1)
        lu[[j, p]] = lu[[p, j]]
        d = lu[j, j]
        if d == 0 and info == 0:
            info = j + 1
        lu[j + 1:, j] /= d if d != 0 else 1
        lu[j + 1:, j + 1:] -= lu[j + 1:, j, None] * lu[j, None, j + 1:]
    return lu, np.array(pivots, np.int32), info


def test_a_singular_matrix_keeps_the_rounding_residue_an_fma_leaves():
    # A^T of [[1, 2, 3], [2, 4, 6], [0, 1, 5]]: the second pivot is 4 - fl(2/3) * 6, which
    # is 0 when the product is rounded first and 2**-52 when it is not (PyTorch's MKL).
    a = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [3.0, 6.0, 5.0]])
    lu, pivots, info = cpu_lu.lu_factor(a)
    assert lu[1, 1] == 2.0 ** -52 and info == 0 and list(pivots) == [3, 2, 3]
    rounded_twice, _, rounded_twice_info = _numpy_elimination(a)
    assert rounded_twice[1, 1] == 0 and rounded_twice_info == 2


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 6), (2, 7, 7), (0, 3, 3), (3, 0, 2)])
def test_pivots_info_and_factors_agree_with_the_elimination(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    lu, pivots, info = cpu_lu.lu_factor(a)
    flat = a.reshape((int(np.prod(shape[:-2])),) + shape[-2:])
    for i, matrix in enumerate(flat):
        want_lu, want_pivots, want_info = _numpy_elimination(matrix)
        got_lu = lu.reshape(flat.shape)[i]
        np.testing.assert_array_equal(pivots.reshape((len(flat), -1))[i], want_pivots)
        assert info.reshape(-1)[i] == want_info
        np.testing.assert_allclose(got_lu, want_lu, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_zero_columns_nan_and_exact_singularity():
    a = np.array([[[0.0, 1.0], [0.0, 2.0]], [[np.nan, 1.0], [2.0, 3.0]], [[1.0, np.nan], [5.0, 1.0]],
                  [[1.0, 2.0], [2.0, 4.0]]])
    lu, pivots, info = cpu_lu.lu_factor(a)
    for i, matrix in enumerate(a):
        want_lu, want_pivots, want_info = _numpy_elimination(matrix)
        np.testing.assert_array_equal(lu[i], want_lu)
        np.testing.assert_array_equal(pivots[i], want_pivots)
        assert info[i] == want_info
    assert list(info) == [1, 0, 0, 2]


def test_the_ops_take_the_kernel():
    a = E.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [3.0, 6.0, 5.0]], dtype=E.float64)
    LU, pivots = E.linalg.lu_factor(a)
    assert LU[1, 1].item() != 0 and abs(LU[1, 1].item()) < 1e-15
