"""The CUDA LU factorisation's block-wide pivot search keeps LAPACK's choice of pivot.

Only the CUDA kernel searches a column in parallel: the rows are dealt round-robin to a
block's threads, so ties in |value| and NaNs could pick another row than LAPACK's getrf
(which the CPU calls), and with it other factors and determinant signs. The ops' results
on every device are the op database's (linalg family, tests/test_op_families.py).
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


def reference_getrf(matrix):
    """LAPACK getrf's unblocked algorithm in NumPy: (LU, 0-based pivots); idamax's choice
    (first largest |value|, `>` so a NaN maximum is never beaten)."""
    a = matrix.astype(np.float64).copy()
    n = a.shape[0]
    pivots = []
    for k in range(n):
        p, best = k, abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > best:
                p, best = i, abs(a[i, k])
        pivots.append(p)
        a[[k, p]] = a[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, pivots


def test_the_block_wide_pivot_search_keeps_lapacks_choice():
    """The CUDA backend's LU gives getrf's pivots and factors for ties, and NaNs below and on the diagonal."""
    # Equal |values| in rows that different threads search (the simulator's block is 4
    # threads, rows are dealt round-robin): the first row must win, as idamax picks it.
    # NaNs below the diagonal are passed over; a NaN on the diagonal is taken.
    from ember_tensor._backends.cuda import linalg as _cuda_linalg, storage
    n = 9
    base = np.eye(n) * 0.5 + np.triu(np.full((n, n), 0.25), 1)
    ties = base.copy()
    ties[[2, 3, 5, 6], 0] = [-4., 4., 4., -4.]
    ties[[4, 7], 1] = [2., -2.]
    nan_below, nan_diagonal = base.copy(), base.copy()
    nan_below[[1, 4], 0] = [np.nan, 3.]
    nan_diagonal[[0, 4], 0] = [np.nan, 3.]
    for values in (ties, nan_below, nan_diagonal):
        expected_lu, expected_pivots = reference_getrf(values)
        a = storage.from_numpy(values.copy())
        with device_only():
            pivots, _, _ = _cuda_linalg.lu(a, n, 1)
        assert storage.to_numpy(pivots).tolist() == expected_pivots
        np.testing.assert_allclose(storage.to_numpy(a), expected_lu, rtol=1e-12, equal_nan=True)
