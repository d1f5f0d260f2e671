"""det, slogdet, logdet, inv, solve, solve_triangular, cholesky (and cholesky_solve,
cholesky_inverse) on CUDA tensors: the CPU's results and errors, computed on the device.

Each CUDA call runs inside `device_only()`, so a copy of an operand to the host fails
the test. inv, solve and cholesky read back one int64 (the first failing batch element)
and, on failure, its LAPACK info, to raise PyTorch's LinAlgError as the CPU does: their
tests use `device_only(allow_scalar_reads=True)`. Shapes stay small (the simulator runs a
Python thread per CUDA thread); matrices are well conditioned (diagonally dominant).
"""
import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only, run_on_simulated_devices

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

FLOATS = [et.float32, et.float64]
TOL = {et.float32: 2e-4, et.float64: 1e-10}
LAYOUTS = ["contiguous", "strided", "transposed"]
# (batch shape, n): 0x0 matrices, 0-size batches, single and batched matrices up to 40.
SHAPES = [((), 0), ((), 1), ((), 3), ((2,), 4), ((0,), 3), ((2,), 0), ((3, 1), 2), ((), 12)]
rng = np.random.default_rng(0)


def well_conditioned(batch, n, symmetric=False):
    a = rng.standard_normal(tuple(batch) + (n, n))
    if symmetric:
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return a + n * np.eye(n) * np.where(rng.random(n) < 0.5, -1, 1)  # dominant diagonal, mixed signs


def make(values, dtype, layout, device):
    """A tensor of `values` as contiguous, every other column of a wider tensor (strided),
    or the transpose of a transposed copy (column-major), made on `device`."""
    values = np.asarray(values, np.float64)
    if layout == "strided" and values.ndim:
        return et.tensor(np.repeat(values, 2, axis=-1), dtype=dtype, device=device)[..., ::2]
    if layout == "transposed" and values.ndim > 1:
        return et.tensor(np.swapaxes(values, -1, -2).copy(), dtype=dtype, device=device).mT
    return et.tensor(values, dtype=dtype, device=device)


def both(values, dtype, layout="contiguous"):
    return make(values, dtype, layout, "cpu"), make(values, dtype, layout, "cuda")


def check(got, expected, dtype):
    assert got.device.type == "cuda"
    assert got.dtype == expected.dtype and tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.cpu().numpy(), expected.numpy(), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,n", SHAPES)
def test_lu_based_ops_match_cpu(batch, n, dtype, layout):
    cpu, cuda = both(well_conditioned(batch, n), dtype, layout)
    with device_only():
        det, (sign, logabs), logdet = et.linalg.det(cuda), et.linalg.slogdet(cuda), et.logdet(cuda)
    check(det, et.linalg.det(cpu), dtype)
    check(sign, et.linalg.slogdet(cpu).sign, dtype)
    check(logabs, et.linalg.slogdet(cpu).logabsdet, dtype)
    check(logdet, et.logdet(cpu), dtype)
    with device_only(allow_scalar_reads=True):
        inverse = et.linalg.inv(cuda)
    check(inverse, et.linalg.inv(cpu), dtype)


def test_a_40x40_matrix_and_a_batch_of_them():
    cpu, cuda = both(well_conditioned((2,), 40), et.float64)
    with device_only(allow_scalar_reads=True):
        inverse, det = et.linalg.inv(cuda), et.linalg.det(cuda)
    check(inverse, et.linalg.inv(cpu), et.float64)
    np.testing.assert_allclose(det.cpu().numpy(), et.linalg.det(cpu).numpy(), rtol=1e-10)


def test_pivots_and_determinant_signs_follow_lapack():
    # Ties in |value| pick the first row; zeros force swaps; singular gives 0 / (0, -inf).
    values = np.array([[[0., 1.], [1., 0.]], [[2., 1.], [-2., 3.]], [[1., 2.], [2., 4.]], [[0., 0.], [0., 0.]],
                       [[-3., 0.], [0., 1.]]])
    for dtype in FLOATS:
        cpu, cuda = both(values, dtype)
        with device_only():
            det, (sign, logabs) = et.linalg.det(cuda), et.linalg.slogdet(cuda)
            logdet = et.logdet(cuda)
        check(det, et.linalg.det(cpu), dtype)
        check(sign, et.linalg.slogdet(cpu).sign, dtype)
        check(logabs, et.linalg.slogdet(cpu).logabsdet, dtype)
        check(logdet, et.logdet(cpu), dtype)  # nan for a negative determinant


SOLVE_CASES = [  # (A batch, n, B shape, left)
    ((), 3, (3, 2), True),
    ((), 3, (3,), True),                 # a vector right-hand side
    ((2,), 4, (2, 4), True),             # a batch of vectors
    ((2,), 3, (3, 5), True),             # B broadcast over A's batch
    ((1,), 3, (4, 3, 2), True),          # A broadcast over B's batch
    ((2, 1), 2, (3, 2, 1), True),
    ((), 3, (2, 3), False),              # X @ A = B
    ((2,), 3, (2, 4, 3), False),
    ((0,), 3, (0, 3, 2), True),
    ((), 0, (0, 2), True),
    ((), 3, (3, 0), True),
]


def test_a_singular_matrix_broadcast_over_no_right_hand_sides_solves_nothing():
    a_cpu, a_cuda = both(np.zeros((1, 2, 2)), et.float64)
    b_cpu, b_cuda = both(np.zeros((0, 2, 3)), et.float64)
    with device_only(allow_scalar_reads=True):
        x = et.linalg.solve(a_cuda, b_cuda)
    check(x, et.linalg.solve(a_cpu, b_cpu), et.float64)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,n,b_shape,left", SOLVE_CASES)
def test_solve_matches_cpu(batch, n, b_shape, left, dtype, layout):
    a_cpu, a_cuda = both(well_conditioned(batch, n), dtype, layout)
    b_cpu, b_cuda = both(rng.standard_normal(b_shape), dtype, layout)
    with device_only(allow_scalar_reads=True):
        x = et.linalg.solve(a_cuda, b_cuda, left=left)
    check(x, et.linalg.solve(a_cpu, b_cpu, left=left), dtype)


TRIANGULAR_CASES = [  # (A batch, n, B shape, left)
    ((), 1, (1, 1), True), ((), 4, (4, 3), True), ((), 4, (2, 4), False), ((2,), 3, (3, 2), True),
    ((2,), 3, (3, 3), False), ((), 3, (2, 3, 1), True), ((0,), 2, (0, 2, 2), True), ((), 0, (0, 3), True),
    ((2, 1), 3, (4, 3, 2), True),  # A broadcast over B's batch, read in place
]


@pytest.mark.parametrize("upper", [True, False], ids=["upper", "lower"])
@pytest.mark.parametrize("unitriangular", [False, True], ids=["", "unit"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,n,b_shape,left", TRIANGULAR_CASES)
def test_solve_triangular_matches_cpu(batch, n, b_shape, left, dtype, layout, unitriangular, upper):
    a_cpu, a_cuda = both(well_conditioned(batch, n), dtype, layout)  # the other triangle must be ignored
    b_cpu, b_cuda = both(rng.standard_normal(b_shape), dtype, layout)
    kwargs = dict(upper=upper, left=left, unitriangular=unitriangular)
    with device_only():
        x = et.linalg.solve_triangular(a_cuda, b_cuda, **kwargs)
    check(x, et.linalg.solve_triangular(a_cpu, b_cpu, **kwargs), dtype)


def test_solve_triangular_with_a_zero_diagonal_gives_the_cpus_inf_and_nan():
    a = np.array([[2., 0., 0.], [1., 0., 0.], [1., 1., 3.]])
    b = np.array([[1., 0.], [2., 0.], [3., -1.]])
    for dtype in FLOATS:
        (a_cpu, a_cuda), (b_cpu, b_cuda) = both(a, dtype), both(b, dtype)
        with device_only():
            x = et.linalg.solve_triangular(a_cuda, b_cuda, upper=False)
        expected = et.linalg.solve_triangular(a_cpu, b_cpu, upper=False).numpy()
        np.testing.assert_array_equal(x.cpu().numpy(), expected)


def test_solve_triangular_mixed_dtypes_follow_the_cpu():
    a_cpu, a_cuda = both(well_conditioned((), 3), et.float32)
    b_cpu, b_cuda = both(rng.standard_normal((3, 2)), et.float64)
    with device_only():
        x = et.linalg.solve_triangular(a_cuda, b_cuda, upper=True)
    check(x, et.linalg.solve_triangular(a_cpu, b_cpu, upper=True), et.float32)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch,n", SHAPES)
def test_cholesky_family_matches_cpu(batch, n, dtype, layout, upper):
    values = well_conditioned(batch, n, symmetric=True)
    values = values + np.triu(rng.standard_normal(values.shape), 1)  # cholesky reads the lower triangle only
    cpu, cuda = both(values, dtype, layout)
    with device_only(allow_scalar_reads=True):
        factor = et.linalg.cholesky(cuda, upper=upper)
    expected = et.linalg.cholesky(cpu, upper=upper)
    check(factor, expected, dtype)
    rhs_cpu, rhs_cuda = both(rng.standard_normal(tuple(batch) + (n, 2)), dtype)
    with device_only(allow_scalar_reads=True):
        solved = et.cholesky_solve(rhs_cuda, factor, upper=upper)
        inverse = et.cholesky_inverse(factor, upper=upper)
    check(solved, et.cholesky_solve(rhs_cpu, expected, upper=upper), dtype)
    check(inverse, et.cholesky_inverse(expected, upper=upper), dtype)


def test_out_arguments_take_the_device_results():
    cpu, cuda = both(well_conditioned((2,), 3), et.float64)
    out = et.empty((2, 3, 3), dtype=et.float64, device="cuda")
    with device_only(allow_scalar_reads=True):
        result = et.linalg.inv(cuda, out=out)
    assert result is out
    check(out, et.linalg.inv(cpu), et.float64)


SINGULAR = np.array([[[2., 0.], [0., 1.]], [[1., 2.], [2., 4.]]])
NOT_PD = np.array([[[2., 0.], [0., 1.]], [[1., 0.], [0., 1.]], [[1., 2.], [2., 1.]]])

ERROR_CASES = {
    "inv singular": lambda d: et.linalg.inv(d(SINGULAR)),
    "inv singular one matrix": lambda d: et.linalg.inv(d(SINGULAR[1])),
    "inv zero first pivot": lambda d: et.linalg.inv(d(np.zeros((3, 3)))),
    "solve singular": lambda d: et.linalg.solve(d(SINGULAR), d(np.ones((2, 2)))),
    "cholesky not pd": lambda d: et.linalg.cholesky(d(NOT_PD)),
    "cholesky upper not pd": lambda d: et.linalg.cholesky(d(-np.eye(3)), upper=True),
    "cholesky_inverse singular": lambda d: et.cholesky_inverse(d(np.zeros((2, 2)))),
    "not square": lambda d: et.linalg.inv(d(np.ones((2, 3)))),
    "det 1-d": lambda d: et.linalg.det(d(np.ones(3))),
    "int dtype": lambda d: et.linalg.det(d(np.ones((2, 2))).long()),
    "half dtype": lambda d: et.linalg.cholesky(d(np.eye(2)).half()),
    "solve dtypes": lambda d: et.linalg.solve(d(np.eye(2)), d(np.ones(2)).float()),
    "solve shapes": lambda d: et.linalg.solve(d(np.eye(3)), d(np.ones((2, 2)))),
    "solve batches": lambda d: et.linalg.solve(d(np.ones((2, 2, 2))), d(np.ones((3, 2, 1)))),
    "solve vector right": lambda d: et.linalg.solve(d(np.eye(2)), d(np.ones(2)), left=False),
    "triangular A not square": lambda d: et.linalg.solve_triangular(d(np.ones((3, 2))), d(np.ones((3, 2))),
                                                                    upper=True),
    "triangular 1-d B": lambda d: et.linalg.solve_triangular(d(np.eye(2)), d(np.ones(2)), upper=True),
    "triangular shapes": lambda d: et.linalg.solve_triangular(d(np.eye(2)), d(np.ones((3, 1))), upper=True,
                                                              left=True),
    "triangular right shapes": lambda d: et.linalg.solve_triangular(d(np.eye(2)), d(np.ones((1, 3))),
                                                                    upper=False, left=False),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_errors_match_the_cpu(name):
    def on(device):
        return lambda values: et.tensor(np.asarray(values, np.float64), device=device)

    with pytest.raises(Exception) as expected:
        ERROR_CASES[name](on("cpu"))
    with device_only(allow_scalar_reads=True):
        with pytest.raises(expected.type) as got:
            ERROR_CASES[name](on("cuda"))
    assert str(got.value) == str(expected.value)


def test_the_ex_variants_run_on_the_device():
    cpu, cuda = both(well_conditioned((2,), 3, symmetric=True), et.float32)
    rhs_cpu, rhs_cuda = both(rng.standard_normal((2, 3)), et.float32)
    with device_only(allow_scalar_reads=True):
        inverse, inverse_info = et.linalg.inv_ex(cuda)
        factor, factor_info = et.linalg.cholesky_ex(cuda)
        solved, solved_info = et.linalg.solve_ex(cuda, rhs_cuda)
    check(inverse, et.linalg.inv(cpu), et.float32)
    check(factor, et.linalg.cholesky(cpu), et.float32)
    check(solved, et.linalg.solve(cpu, rhs_cpu), et.float32)
    for info in (inverse_info, factor_info, solved_info):
        assert info.device.type == "cuda" and info.cpu().tolist() == [0, 0]


SECOND_DEVICE_SCRIPT = """
    import numpy as np
    import ember_tensor as et

    a = np.array([[4., 1.], [1., 3.]])
    x = et.tensor(a, device="cuda:1")
    before = et.cuda.memory_allocated(0)
    results = [et.linalg.inv(x), et.linalg.det(x), et.linalg.cholesky(x),
               et.linalg.solve(x, x), et.linalg.solve_triangular(x, x, upper=True)]
    assert all(r.device == et.device("cuda:1") for r in results)
    assert et.cuda.current_device() == 0 and et.cuda.memory_allocated(0) == before
    assert np.allclose(results[0].cpu().numpy(), np.linalg.inv(a))
    assert np.allclose(results[2].cpu().numpy(), np.linalg.cholesky(a))
    print("ok")
"""


def test_ops_on_a_second_device_compute_and_allocate_there():
    if "simulator" not in et.cuda.get_device_name().lower():
        pytest.skip("simulates a second device on Numba's CUDA simulator")
    run_on_simulated_devices(SECOND_DEVICE_SCRIPT, devices=2)


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
