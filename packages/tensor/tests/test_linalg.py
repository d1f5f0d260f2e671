"""Linear algebra against NumPy: tensordot,
kron, cross, factorizations, solvers, norms; contiguous, transposed, batched and 0-d
inputs; PyTorch's errors for singular, non-square and wrongly typed inputs."""
import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES, cpu_result, matches_the_cpu
from linalg_cases import assert_close, laid_out

RNG = np.random.default_rng(0)


def _tril_solve(L, B):
    return np.linalg.solve(L @ np.swapaxes(L, -1, -2), B)


A = RNG.standard_normal((2, 3, 3))
B = RNG.standard_normal((2, 3, 2))
SPD = A @ np.swapaxes(A, -1, -2) + 3 * np.eye(3)
TALL = RNG.standard_normal((4, 3))
NILPOTENT = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])

CASES = [
    # (name, ember call on (A, B, SPD, TALL) tensors, NumPy reference)
    ("inv", lambda a, b, s, t: E.linalg.inv(a), lambda a, b, s, t: np.linalg.inv(a)),
    ("inverse", lambda a, b, s, t: a.inverse(), lambda a, b, s, t: np.linalg.inv(a)),
    ("det", lambda a, b, s, t: E.linalg.det(a), lambda a, b, s, t: np.linalg.det(a)),
    ("det_method", lambda a, b, s, t: a.det(), lambda a, b, s, t: np.linalg.det(a)),
    ("slogdet", lambda a, b, s, t: E.linalg.slogdet(a).logabsdet, lambda a, b, s, t: np.linalg.slogdet(a)[1]),
    ("slogdet_sign", lambda a, b, s, t: E.slogdet(a)[0], lambda a, b, s, t: np.linalg.slogdet(a)[0]),
    ("logdet", lambda a, b, s, t: E.logdet(s), lambda a, b, s, t: np.linalg.slogdet(s)[1]),
    ("solve", lambda a, b, s, t: E.linalg.solve(a, b), lambda a, b, s, t: np.linalg.solve(a, b)),
    ("solve_vector", lambda a, b, s, t: E.linalg.solve(a, b[..., 0]),
     lambda a, b, s, t: np.linalg.solve(a, b[..., :1])[..., 0]),
    ("solve_broadcast", lambda a, b, s, t: E.linalg.solve(a[0], b), lambda a, b, s, t: np.linalg.solve(a[0], b)),
    ("solve_right", lambda a, b, s, t: E.linalg.solve(a, b.mT, left=False),
     lambda a, b, s, t: np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), b), -1, -2)),
    ("cholesky", lambda a, b, s, t: E.linalg.cholesky(s), lambda a, b, s, t: np.linalg.cholesky(s)),
    ("cholesky_upper", lambda a, b, s, t: E.cholesky(s, upper=True),
     lambda a, b, s, t: np.swapaxes(np.linalg.cholesky(s), -1, -2)),
    ("cholesky_solve", lambda a, b, s, t: E.cholesky_solve(b, E.linalg.cholesky(s)),
     lambda a, b, s, t: np.linalg.solve(s, b)),
    ("cholesky_inverse", lambda a, b, s, t: E.linalg.cholesky(s).cholesky_inverse(), lambda a, b, s, t: np.linalg.inv(s)),
    ("cholesky_inverse_upper", lambda a, b, s, t: E.cholesky_inverse(E.linalg.cholesky(s, upper=True), upper=True),
     lambda a, b, s, t: np.linalg.inv(s)),
    ("solve_triangular_upper", lambda a, b, s, t: E.linalg.solve_triangular(a, b, upper=True),
     lambda a, b, s, t: np.linalg.solve(np.triu(a), b)),
    ("solve_triangular_lower_right", lambda a, b, s, t: E.linalg.solve_triangular(a, b.mT, upper=False, left=False),
     lambda a, b, s, t: np.swapaxes(np.linalg.solve(np.swapaxes(np.tril(a), -1, -2), b), -1, -2)),
    ("solve_triangular_unit", lambda a, b, s, t: E.linalg.solve_triangular(a, b, upper=False, unitriangular=True),
     lambda a, b, s, t: np.linalg.solve(np.tril(a, -1) + np.eye(3), b)),
    ("eigvalsh", lambda a, b, s, t: E.linalg.eigvalsh(s), lambda a, b, s, t: np.linalg.eigvalsh(s)),
    ("eigh_reconstructs", lambda a, b, s, t: (lambda r: (r[1] * r[0].unsqueeze(-2)) @ r[1].mT)(E.linalg.eigh(s)),
     lambda a, b, s, t: s),
    ("svdvals", lambda a, b, s, t: E.linalg.svdvals(t), lambda a, b, s, t: np.linalg.svd(t, compute_uv=False)),
    ("svd_reconstructs", lambda a, b, s, t: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.Vh)(
        E.linalg.svd(b, full_matrices=False)), lambda a, b, s, t: b),
    ("svd_legacy_V", lambda a, b, s, t: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.V.mT)(E.svd(t)),
     lambda a, b, s, t: t),
    ("svd_full_shapes", lambda a, b, s, t: E.linalg.svd(t).U.abs().sum(0) * 0,
     lambda a, b, s, t: np.zeros(4)),
    ("qr_reconstructs", lambda a, b, s, t: (lambda r: r.Q @ r.R)(E.linalg.qr(t)), lambda a, b, s, t: t),
    ("qr_r", lambda a, b, s, t: E.linalg.qr(t, mode="r").R.abs(), lambda a, b, s, t: np.abs(np.linalg.qr(t, "r"))),
    ("qr_complete_q", lambda a, b, s, t: E.qr(t, some=False).Q.mT @ E.qr(t, some=False).Q,
     lambda a, b, s, t: np.eye(4)),
    ("pinv", lambda a, b, s, t: E.linalg.pinv(t), lambda a, b, s, t: np.linalg.pinv(t)),
    ("pinv_batched", lambda a, b, s, t: E.linalg.pinv(b), lambda a, b, s, t: np.linalg.pinv(b)),
    ("pinverse", lambda a, b, s, t: t.pinverse(), lambda a, b, s, t: np.linalg.pinv(t)),
    ("pinv_hermitian", lambda a, b, s, t: E.linalg.pinv(s, hermitian=True), lambda a, b, s, t: np.linalg.inv(s)),
    ("matrix_rank", lambda a, b, s, t: E.linalg.matrix_rank(t @ t.mT), lambda a, b, s, t: np.array(3)),
    ("lstsq", lambda a, b, s, t: E.linalg.lstsq(t, t[:, :2]).solution,
     lambda a, b, s, t: np.linalg.lstsq(t, t[:, :2], rcond=None)[0]),
    ("lstsq_gelsd_residuals", lambda a, b, s, t: E.linalg.lstsq(t, t[:, :1] + 1, driver="gelsd").residuals,
     lambda a, b, s, t: np.linalg.lstsq(t, t[:, :1] + 1, rcond=None)[1]),
    ("matrix_power", lambda a, b, s, t: E.linalg.matrix_power(a, 5), lambda a, b, s, t: np.linalg.matrix_power(a, 5)),
    ("matrix_power_neg", lambda a, b, s, t: a.matrix_power(-2), lambda a, b, s, t: np.linalg.matrix_power(a, -2)),
    ("matrix_power_0", lambda a, b, s, t: E.matrix_power(a, 0), lambda a, b, s, t: np.broadcast_to(np.eye(3), a.shape)),
    ("matrix_exp_diagonal", lambda a, b, s, t: E.linalg.matrix_exp(E.diag_embed(a[..., 0])),
     lambda a, b, s, t: np.exp(a[..., 0])[..., None] * np.eye(3)),
    # exp(N) = I + N + N^2 / 2 for this nilpotent N.
    ("matrix_exp_nilpotent", lambda a, b, s, t: E.tensor(NILPOTENT).expand(2, 3, 3).matrix_exp(),
     lambda a, b, s, t: np.broadcast_to(np.eye(3) + NILPOTENT + NILPOTENT @ NILPOTENT / 2, a.shape)),
    ("matrix_exp_inverse", lambda a, b, s, t: E.linalg.matrix_exp(a * 3) @ (a * -3).matrix_exp(),
     lambda a, b, s, t: np.broadcast_to(np.eye(3), a.shape)),
    ("vector_norm", lambda a, b, s, t: E.linalg.vector_norm(a), lambda a, b, s, t: np.linalg.norm(a.ravel())),
    ("vector_norm_dims", lambda a, b, s, t: E.linalg.vector_norm(a, 3.5, dim=(0, 2), keepdim=True),
     lambda a, b, s, t: (np.abs(a) ** 3.5).sum((0, 2), keepdims=True) ** (1 / 3.5)),
    ("vector_norm_inf", lambda a, b, s, t: E.linalg.vector_norm(a, float("inf"), 1),
     lambda a, b, s, t: np.abs(a).max(1)),
    ("vector_norm_0", lambda a, b, s, t: E.linalg.vector_norm(a, 0), lambda a, b, s, t: np.array(18.0)),
    ("matrix_norm_fro", lambda a, b, s, t: E.linalg.matrix_norm(a), lambda a, b, s, t: np.linalg.norm(a, "fro", (-2, -1))),
    ("matrix_norm_nuc", lambda a, b, s, t: E.linalg.matrix_norm(a, "nuc"), lambda a, b, s, t: np.linalg.norm(a, "nuc", (-2, -1))),
    ("matrix_norm_2", lambda a, b, s, t: E.linalg.matrix_norm(a, 2), lambda a, b, s, t: np.linalg.norm(a, 2, (-2, -1))),
    ("matrix_norm_-2", lambda a, b, s, t: E.linalg.matrix_norm(a, -2), lambda a, b, s, t: np.linalg.norm(a, -2, (-2, -1))),
    ("matrix_norm_1", lambda a, b, s, t: E.linalg.matrix_norm(a, 1), lambda a, b, s, t: np.linalg.norm(a, 1, (-2, -1))),
    ("matrix_norm_inf", lambda a, b, s, t: E.linalg.matrix_norm(a, float("inf"), dim=(0, 2), keepdim=True),
     lambda a, b, s, t: np.linalg.norm(a, np.inf, (0, 2), keepdims=True)),
    ("matrix_norm_-inf", lambda a, b, s, t: E.linalg.matrix_norm(a, -float("inf")), lambda a, b, s, t: np.linalg.norm(a, -np.inf, (-2, -1))),
    ("norm_default", lambda a, b, s, t: E.linalg.norm(a), lambda a, b, s, t: np.linalg.norm(a.ravel())),
    ("norm_matrix", lambda a, b, s, t: E.linalg.norm(t, "nuc"), lambda a, b, s, t: np.linalg.norm(t, "nuc")),
    ("norm_dim", lambda a, b, s, t: E.linalg.norm(a, 1, dim=-1), lambda a, b, s, t: np.linalg.norm(a, 1, -1)),
    ("cross", lambda a, b, s, t: E.linalg.cross(a, a.flip(0)), lambda a, b, s, t: np.cross(a, a[::-1])),
    ("cross_dim", lambda a, b, s, t: E.cross(a, b[..., :1], dim=1), lambda a, b, s, t: np.cross(a, b[..., :1], axis=1)),
    ("cross_first_dim_of_3", lambda a, b, s, t: a[0].cross(a[1]), lambda a, b, s, t: np.cross(a[0], a[1], axis=0)),
    ("kron", lambda a, b, s, t: E.kron(a, b), lambda a, b, s, t: np.kron(a, b)),
    ("kron_ranks", lambda a, b, s, t: t.kron(a[0, 0]), lambda a, b, s, t: np.kron(t, a[0, 0])),
    ("tensordot_int", lambda a, b, s, t: E.tensordot(a, s.permute(1, 2, 0), 2),
     lambda a, b, s, t: np.tensordot(a, s.transpose(1, 2, 0), 2)),
    ("tensordot_lists", lambda a, b, s, t: E.tensordot(a, b, ([1, 0], [1, 0])),
     lambda a, b, s, t: np.tensordot(a, b, ([1, 0], [1, 0]))),
    ("tensordot_0", lambda a, b, s, t: E.tensordot(a[0, 0], b[0, 0], 0), lambda a, b, s, t: np.tensordot(a[0, 0], b[0, 0], 0)),
    ("vdot", lambda a, b, s, t: E.vdot(a[0, 0], a[1, 1]), lambda a, b, s, t: np.vdot(a[0, 0], a[1, 1])),
    ("addbmm", lambda a, b, s, t: E.addbmm(a[0], a, s, beta=0.5, alpha=2),
     lambda a, b, s, t: 0.5 * a[0] + 2 * (a @ s).sum(0)),
    ("inner", lambda a, b, s, t: E.inner(a, b.mT), lambda a, b, s, t: np.inner(a, np.swapaxes(b, -1, -2))),
    ("inner_0d", lambda a, b, s, t: a[0, 0, 0].inner(t), lambda a, b, s, t: a[0, 0, 0] * t),
    ("addr", lambda a, b, s, t: E.addr(t[:3, :2], a[0, 0], b[0, :2, 0], beta=0.5, alpha=2),
     lambda a, b, s, t: 0.5 * t[:3, :2] + 2 * np.outer(a[0, 0], b[0, :2, 0])),
    ("addbmm_method", lambda a, b, s, t: a[0].addbmm(a, s), lambda a, b, s, t: a[0] + (a @ s).sum(0)),
]


@pytest.mark.parametrize("name,call,ref", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_linalg_matches_numpy(name, call, ref, transposed):
    arrays = (A, B, SPD, TALL)
    tensors = [laid_out(x, transposed) for x in arrays]
    assert_close(call(*tensors), ref(*arrays))


def test_results_are_float32_for_float32_inputs():
    a32 = E.tensor(SPD[0], dtype=E.float32)
    for result in (E.linalg.inv(a32), E.linalg.det(a32), E.linalg.cholesky(a32), E.linalg.eigh(a32)[1],
                   E.linalg.svd(a32)[0], E.linalg.pinv(a32), E.linalg.matrix_norm(a32, 2)):
        assert result.dtype == E.float32
    assert E.linalg.matrix_rank(a32).dtype == E.int64


def test_named_results_print_like_pytorch():
    result = E.linalg.slogdet(E.eye(2))
    assert result.sign.item() == 1.0 and result.logabsdet.item() == 0.0
    assert repr(result).startswith("torch.return_types.linalg_slogdet(\nsign=tensor(1.)")
    assert repr(E.svd(E.eye(2))).startswith("torch.return_types.svd(\nU=")


def test_singular_determinant_and_slogdet():
    singular = E.tensor([[1.0, 2.0], [2.0, 4.0]])
    assert E.linalg.det(singular).item() == 0.0
    sign, logabsdet = E.linalg.slogdet(singular)
    assert sign.item() == 0.0 and logabsdet.item() == float("-inf")
    assert np.isnan(E.logdet(-E.eye(3)).item())


def test_solve_triangular_with_a_zero_on_the_diagonal_gives_inf_like_pytorch():
    singular = E.tensor([[1.0, 0.0], [0.0, 0.0]])
    x = E.linalg.solve_triangular(singular, E.ones(2, 1), upper=True)
    assert np.isinf(x[1, 0].item()) and np.isnan(x[0, 0].item())  # 0 * inf in the back substitution


def test_zero_dim_and_empty_inputs():
    assert E.vdot(E.ones(0), E.ones(0)).item() == 0.0
    assert E.linalg.det(E.ones(0, 0)).item() == 1.0
    assert E.linalg.vector_norm(E.tensor(-3.0)).item() == 3.0
    assert tuple(E.linalg.inv(E.ones(2, 0, 0)).shape) == (2, 0, 0)
    assert E.einsum("->", E.tensor(2.0)).item() == 2.0


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
ERRORS = [
    (lambda: E.linalg.inv(E.ones(2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: E.linalg.inv(E.tensor(SINGULAR)), E.linalg.LinAlgError,
     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is singular."),
    (lambda: E.inverse(E.stack([E.eye(2), E.tensor(SINGULAR)])), E.linalg.LinAlgError,
     r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero"),
    (lambda: E.linalg.inv(E.ones(2, 2, dtype=E.int64)), RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: E.linalg.inv(E.ones(2, 2, dtype=E.float16)), RuntimeError,
     "linalg.inv: Low precision dtypes not supported. Got Half"),
    (lambda: E.linalg.cholesky(E.tensor(SINGULAR)), E.linalg.LinAlgError,
     r"linalg.cholesky: The factorization could not be completed because the input is not positive-definite "
     r"\(the leading minor of order 2 is not positive-definite\)."),
    (lambda: E.linalg.cholesky(-E.eye(2)), E.linalg.LinAlgError, r"the leading minor of order 1 is not"),
    (lambda: E.linalg.solve(E.tensor(SINGULAR), E.ones(2)), E.linalg.LinAlgError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (lambda: E.linalg.solve(E.eye(2), E.ones(3)), RuntimeError,
     r"linalg.solve: Incompatible shapes of A and B for the equation AX = B \(2x2 and 3x1\)"),
    (lambda: E.linalg.det(E.ones(2, 3)), RuntimeError,
     "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: E.linalg.det(E.ones(3)), RuntimeError, "linalg.det: The input tensor A must have at least 2 dimensions."),
    (lambda: E.linalg.eigh(E.ones(2, 3)), RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: E.linalg.matrix_power(E.ones(2, 3), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: E.linalg.matrix_power(E.tensor(SINGULAR), -1), E.linalg.LinAlgError, "The diagonal element 2 is zero"),
    (lambda: E.linalg.cross(E.ones(2), E.ones(2)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda: E.linalg.vector_norm(E.ones(2, dtype=E.int64)), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: E.linalg.matrix_norm(E.ones(2)), RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    (lambda: E.linalg.matrix_norm(E.ones(2, 2), ord=3), RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
    (lambda: E.einsum("ij,jk", E.ones(2, 3), E.ones(2, 3)), RuntimeError,
     "einsum\\(\\): subscript j has size 2 for operand 1 which does not broadcast with previously seen size 3"),
    (lambda: E.einsum("ij,jk->ik", E.ones(2, 3)), RuntimeError,
     r"einsum\(\): fewer operands were provided than specified in the equation"),
    (lambda: E.einsum("ij", E.ones(2, 3, 4)), RuntimeError,
     r"einsum\(\): the number of subscripts in the equation \(2\) does not match the number of dimensions \(3\) "
     r"for operand 0 and no ellipsis was given"),
    (lambda: E.tensordot(E.ones(2, 3), E.ones(3, 2), dims=([1], [1])), RuntimeError,
     "contracted dimensions need to match, but first has size 3 in dim 1 and second has size 2 in dim 1"),
    (lambda: E.vdot(E.ones(2), E.ones(3)), RuntimeError,
     r"inconsistent tensor size, expected tensor \[2\] and src \[3\] to have the same number of elements, "
     r"but got 2 and 3 elements respectively"),
    (lambda: E.inner(E.ones(2), E.ones(3)), RuntimeError,
     r"inner\(\) the last dimension must match on both input tensors but got shapes \[2\] and \[3\]"),
    (lambda: E.matmul(E.ones(2, 3), E.ones(2, 3)), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"),
    (lambda: E.matmul(E.ones(2, 5, 2, 3), E.ones(3, 3, 4)), RuntimeError,
     r"The size of tensor a \(5\) must match the size of tensor b \(3\) at non-singleton dimension 1"),
]


@pytest.mark.parametrize("call,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_pytorch(call, exc, message):
    with pytest.raises(exc, match=message):
        call()


SINGULAR_BATCH = np.array([[[2., 0.], [0., 1.]], [[1., 2.], [2., 4.]]])
NOT_PD = np.array([[[2., 0.], [0., 1.]], [[1., 0.], [0., 1.]], [[1., 2.], [2., 1.]]])
# (call, float64 operands): the factorisations' errors (a flag read back on CUDA) and the checks before them.
DEVICE_ERRORS = {
    "inv singular": (E.linalg.inv, [SINGULAR_BATCH]),
    "inv singular one matrix": (E.linalg.inv, [SINGULAR_BATCH[1]]),
    "inv zero first pivot": (E.linalg.inv, [np.zeros((3, 3))]),
    "solve singular": (E.linalg.solve, [SINGULAR_BATCH, np.ones((2, 2))]),
    "cholesky not pd": (E.linalg.cholesky, [NOT_PD]),
    "cholesky upper not pd": (lambda a: E.linalg.cholesky(a, upper=True), [-np.eye(3)]),
    "cholesky_inverse singular": (E.cholesky_inverse, [np.zeros((2, 2))]),
    "not square": (E.linalg.inv, [np.ones((2, 3))]),
    "det 1-d": (E.linalg.det, [np.ones(3)]),
    "int dtype": (lambda a: E.linalg.det(a.long()), [np.ones((2, 2))]),
    "half dtype": (lambda a: E.linalg.cholesky(a.half()), [np.eye(2)]),
    "solve dtypes": (lambda a, b: E.linalg.solve(a, b.float()), [np.eye(2), np.ones(2)]),
    "solve shapes": (E.linalg.solve, [np.eye(3), np.ones((2, 2))]),
    "solve batches": (E.linalg.solve, [np.ones((2, 2, 2)), np.ones((3, 2, 1))]),
    "solve vector right": (lambda a, b: E.linalg.solve(a, b, left=False), [np.eye(2), np.ones(2)]),
    "triangular A not square": (lambda a, b: E.linalg.solve_triangular(a, b, upper=True), [np.ones((3, 2))] * 2),
    "triangular 1-d B": (lambda a, b: E.linalg.solve_triangular(a, b, upper=True), [np.eye(2), np.ones(2)]),
    "triangular shapes": (lambda a, b: E.linalg.solve_triangular(a, b, upper=True, left=True),
                          [np.eye(2), np.ones((3, 1))]),
    "triangular right shapes": (lambda a, b: E.linalg.solve_triangular(a, b, upper=False, left=False),
                                [np.eye(2), np.ones((1, 3))]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", list(DEVICE_ERRORS))
def test_errors_are_the_same_on_every_device(name, device):
    """Each call raises a RuntimeError (LinAlgError for a failed factorisation); on CUDA the
    CPU's, word for word, having read back at most the failing batch element's flag."""
    call, operands = DEVICE_ERRORS[name]
    tensors = [E.tensor(a) for a in operands]
    if device != "cpu":
        matches_the_cpu(call, tensors, name, reads_a_flag=True)
    with pytest.raises(RuntimeError):
        call(*tensors)


@pytest.mark.parametrize("device", DEVICES)
def test_out_argument_takes_the_result(device):
    """linalg.inv(a, out=out) writes into `out` on `device` and returns it."""
    a = SPD.copy()
    out = E.empty((2, 3, 3), dtype=E.float64, device=device)
    result = cpu_result(device, lambda x, o: E.linalg.inv(x, out=o), E.tensor(a), out.cpu())
    assert E.linalg.inv(E.tensor(a).to(device), out=out) is out
    assert_close(result, np.linalg.inv(a))
    assert_close(out.cpu(), np.linalg.inv(a))


@pytest.mark.parametrize("device", DEVICES)
def test_the_ex_variants_return_the_result_and_a_zero_info(device):
    """inv_ex, cholesky_ex and solve_ex give the plain op's result and an int info of zeros per batch element."""
    spd32 = E.tensor(SPD, dtype=E.float32)
    rhs = E.tensor(B[..., 0], dtype=E.float32)
    inverse, info_inv = cpu_result(device, E.linalg.inv_ex, spd32)
    factor, info_chol = cpu_result(device, E.linalg.cholesky_ex, spd32)
    solved, info_solve = cpu_result(device, E.linalg.solve_ex, spd32, rhs)
    np.testing.assert_allclose(inverse.numpy(), np.linalg.inv(SPD), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(factor.numpy(), np.linalg.cholesky(SPD), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(solved.numpy(), np.linalg.solve(SPD, B[..., :1])[..., 0], rtol=1e-4, atol=1e-5)
    for info in (info_inv, info_chol, info_solve):
        assert info.tolist() == [0, 0]


def test_linalg_error_is_a_runtime_error():
    assert issubclass(E.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("call,exc,message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_match_pytorch_oracle(call, exc, message):
    """The very same calls raise the same message in PyTorch (when it is installed)."""
    torch = pytest.importorskip("torch")
    fn = type(call)(call.__code__, {**call.__globals__, "E": torch})
    with pytest.raises(Exception) as theirs:
        fn()
    with pytest.raises(RuntimeError) as ours:
        call()
    assert str(theirs.value).splitlines()[0] == str(ours.value).splitlines()[0]


CUDA_CASES = [
    ("flip", lambda x: x.flip(0, 1)),
    ("roll", lambda x: x.roll(1, 1)),
    ("repeat", lambda x: x.repeat(2, 1)),
    ("tril", lambda x: x.tril(-1)),
    ("rot90", lambda x: x.rot90()),
    ("repeat_interleave", lambda x: x.repeat_interleave(E.tensor([1, 0, 2], device=x.device), dim=0)),
    ("matmul", lambda x: x @ x.mT),
    ("inv", lambda x: E.linalg.inv(x[:, :3] + 5 * E.eye(3, dtype=E.float64, device=x.device))),
    ("svdvals", lambda x: E.linalg.svdvals(x)),
    ("einsum", lambda x: E.einsum("ij,kj->ik", x, x)),
    ("matrix_norm", lambda x: E.linalg.matrix_norm(x, 1)),
    ("kron", lambda x: E.kron(x[:2, :2], x[:2, :2])),
    ("cross", lambda x: E.linalg.cross(x[:, :3], x[:, 1:])),
]


@pytest.mark.parametrize("name,fn", CUDA_CASES, ids=[c[0] for c in CUDA_CASES])
def test_cuda_matches_cpu(name, fn):
    """The same ops on CUDA tensors (Numba's simulator unless a GPU is asked for) stay on
    the device and give the CPU's values."""
    pytest.importorskip("numba.cuda")
    host = E.tensor(RNG.standard_normal((3, 4)))
    result = fn(host.to("cuda"))
    assert result.device.type == "cuda"
    np.testing.assert_allclose(result.cpu().numpy(), fn(host).numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_matrix_exp_matches_pytorch(scale):
    torch = pytest.importorskip("torch")
    a = RNG.standard_normal((2, 4, 4)) * scale
    expected = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
    np.testing.assert_allclose(E.linalg.matrix_exp(E.tensor(a)).numpy(), expected, rtol=1e-11, atol=1e-12)


def test_vdot_conjugates_its_first_complex_argument():
    a, b = np.array([1 + 2j, 3 - 1j, -2j]), np.array([2 - 1j, 1 + 1j, 0.5 + 0j])
    for dtype in (E.complex64, E.complex128):
        got = E.vdot(E.tensor(a, dtype=dtype), E.tensor(b, dtype=dtype))
        assert got.dtype is dtype
        np.testing.assert_allclose(got.item(), np.vdot(a, b), rtol=1e-6)
        assert got.item() != np.dot(a, b)
