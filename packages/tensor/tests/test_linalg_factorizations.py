"""linalg.eig/eigvals, the LU family (lu_factor, lu_factor_ex, lu, lu_unpack, lu_solve,
torch.lu, torch.lu_solve), geqrf/householder_product/orgqr/ormqr and the LDL family
against NumPy identities and PyTorch's outputs (pivots, compact factors, errors), real
and complex, batched; one pass of each on the CUDA simulator (computed through the host)."""
import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES

RNG = np.random.default_rng(3)


def _sample(shape, dtype):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _t(x, device="cpu"):
    return E.tensor(x, device=device)


def _np(t):
    return t.cpu().numpy()


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


# --- eig ----------------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eig_satisfies_its_definition_with_complex_results(dtype, device):
    a = _sample((2, 4, 4), dtype)
    L, V = E.linalg.eig(_t(a, device))
    assert L.dtype == V.dtype == (E.complex64 if np.dtype(dtype) in (np.float32, np.complex64) else E.complex128)
    assert L.device.type == device and tuple(L.shape) == (2, 4) and tuple(V.shape) == (2, 4, 4)
    L, V = _np(L), _np(V)
    np.testing.assert_allclose(a @ V, V * L[..., None, :], atol=50 * _tol(dtype))
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1, atol=10 * _tol(dtype))
    np.testing.assert_allclose(_np(E.linalg.eigvals(_t(a, device))), L, atol=10 * _tol(dtype))


def test_eig_of_a_rotation_is_complex():
    L = E.linalg.eig(E.tensor([[0., -1.], [1., 0.]])).eigenvalues
    assert L.tolist() == [1j, -1j]


@pytest.mark.parametrize("call, error, message", [
    (lambda: E.linalg.eig(E.ones(3)), RuntimeError, "linalg.eig: The input tensor A must have at least 2 dimensions."),
    (lambda: E.linalg.eig(E.ones(2, 3)), RuntimeError,
     "linalg.eig: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: E.linalg.eigvals(E.ones(3, 3, dtype=E.int64)), RuntimeError, "Unknown Complex ScalarType for Long"),
    (lambda: E.linalg.eig(E.ones(3, 3, dtype=E.float16)), NotImplementedError,
     "\"linalg_eig_out_cpu\" not implemented for 'Half'"),
    (lambda: E.linalg.eig(E.tensor([[float("nan"), 1.], [1., 1.]])), RuntimeError,
     "torch.linalg.eig: input tensor should not contain infs or NaNs."),
])
def test_eig_errors_are_pytorchs(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_eig_against_pytorch():
    torch = pytest.importorskip("torch")
    a = _sample((3, 5, 5), np.float64)
    ours, theirs = E.linalg.eig(_t(a)), torch.linalg.eig(torch.from_numpy(a))
    assert type(ours).__name__ == type(theirs).__name__ == "linalg_eig"
    # The same LAPACK routine (geev) gives the same order and normalization; LAPACK
    # builds (OpenBLAS, MKL) may differ in each eigenvector's sign or phase.
    np.testing.assert_allclose(_np(ours.eigenvalues), theirs.eigenvalues.numpy(), atol=1e-12)
    np.testing.assert_allclose(_phase_fixed(_np(ours.eigenvectors)), _phase_fixed(theirs.eigenvectors.numpy()),
                               atol=1e-12)


def _phase_fixed(V):
    """V with each column turned so that its largest entry is real and positive."""
    largest = np.take_along_axis(V, np.abs(V).argmax(-2)[..., None, :], -2)
    return V * (np.abs(largest) / largest)


# --- LU -----------------------------------------------------------------------------------

SHAPES = [(4, 4), (2, 5, 3), (2, 3, 5)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_reconstructs_its_input(shape, dtype, device):
    a = _sample(shape, dtype)
    P, L, U = E.linalg.lu(_t(a, device))
    k = min(shape[-2:])
    assert tuple(P.shape[-2:]) == (shape[-2],) * 2 and tuple(L.shape[-1:]) == (k,) and tuple(U.shape[-2:-1]) == (k,)
    np.testing.assert_allclose(_np(P) @ _np(L) @ _np(U), a, atol=10 * _tol(dtype))
    LU, pivots, info = E.linalg.lu_factor_ex(_t(a, device))
    assert pivots.dtype == info.dtype == E.int32 and not info.any()
    P2, L2, U2 = E.lu_unpack(LU, pivots)
    assert E.equal(P2, P) and E.equal(L2, L) and E.equal(U2, U)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_matches_pytorch(shape, dtype):
    torch = pytest.importorskip("torch")
    a = _sample(shape, dtype)
    ours, theirs = E.linalg.lu_factor(_t(a)), torch.linalg.lu_factor(torch.from_numpy(a))
    assert type(ours).__name__ == "linalg_lu_factor"
    np.testing.assert_array_equal(_np(ours.pivots), theirs.pivots.numpy())
    np.testing.assert_allclose(_np(ours.LU), theirs.LU.numpy(), atol=1e-12)
    np.testing.assert_array_equal(_np(E.linalg.lu(_t(a)).P), torch.linalg.lu(torch.from_numpy(a)).P.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_every_form(left, adjoint, dtype, device):
    a, b = _sample((2, 4, 4), dtype), _sample((2, 4, 3) if left else (2, 3, 4), dtype)
    X = _np(E.linalg.lu_solve(*E.linalg.lu_factor(_t(a, device)), _t(b, device), left=left, adjoint=adjoint))
    op = np.conj(np.swapaxes(a, -1, -2)) if adjoint else a
    np.testing.assert_allclose(op @ X if left else X @ op, b, atol=1e-10)


def test_legacy_lu_and_lu_solve():
    a, b = _sample((3, 3), np.float64), _sample((3, 2), np.float64)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        LU, pivots, info = E.lu(_t(a), get_infos=True)
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        X = _t(b).lu_solve(LU, pivots)
    np.testing.assert_allclose(a @ _np(X), b, atol=1e-12)
    with pytest.warns(UserWarning):
        assert isinstance(_t(a).lu(), tuple)


def test_singular_lu_raises_only_where_pytorch_does():
    zeros = E.zeros(2, 3, 3)
    with pytest.raises(E.linalg.LinAlgError, match=r"^torch.linalg.lu_factor: \(Batch element 0\): U\[1,1\] is zero"):
        E.linalg.lu_factor(zeros)
    assert E.linalg.lu_factor_ex(zeros).info.tolist() == [1, 1]
    P, L, U = E.linalg.lu(zeros)
    assert not U.any()


@pytest.mark.parametrize("call, error, message", [
    (lambda: E.linalg.lu_factor(E.ones(3)), RuntimeError,
     "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    (lambda: E.linalg.lu(E.ones(3, 3, dtype=E.int64)), NotImplementedError, "\"lu_cpu\" not implemented for 'Long'"),
    (lambda: E.linalg.lu_factor(E.ones(3, 3), pivot=False), RuntimeError,
     "linalg.lu_factor: LU without pivoting is not implemented on the CPU"),
    (lambda: E.linalg.lu_solve(*E.linalg.lu_factor(E.eye(3, dtype=E.float64)), E.ones(3, 1)), RuntimeError,
     "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type Double and B of type Float "
     "instead"),
])
def test_lu_errors_are_pytorchs(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# --- Householder --------------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_geqrf_and_householder_product_rebuild_qr(dtype, device):
    a = _sample((2, 5, 3), dtype)
    h, tau = E.geqrf(_t(a, device))
    Q = E.linalg.householder_product(h, tau)
    R = h.triu()[..., :3, :]
    np.testing.assert_allclose(_np(Q) @ _np(R), a, atol=10 * _tol(dtype))
    np.testing.assert_allclose(np.conj(np.swapaxes(_np(Q), -1, -2)) @ _np(Q), np.broadcast_to(np.eye(3), (2, 3, 3)),
                               atol=10 * _tol(dtype))
    assert E.equal(E.orgqr(h, tau), Q)
    c = _sample((2, 5, 2), dtype)
    full_q = _np(E.ormqr(h, tau, _t(np.broadcast_to(np.eye(5, dtype=dtype), (2, 5, 5)).copy(), device)))
    np.testing.assert_allclose(_np(h.ormqr(tau, _t(c, device), transpose=True)),
                               np.conj(np.swapaxes(full_q, -1, -2)) @ c, atol=10 * _tol(dtype))
    np.testing.assert_allclose(_np(E.ormqr(h, tau, _t(np.swapaxes(c, -1, -2).copy(), device), left=False)),
                               np.swapaxes(c, -1, -2) @ full_q, atol=10 * _tol(dtype))


def test_householder_against_pytorch():
    torch = pytest.importorskip("torch")
    a = _sample((2, 5, 3), np.complex128)
    ours, theirs = E.geqrf(_t(a)), torch.geqrf(torch.from_numpy(a))
    assert type(ours).__name__ == "geqrf"
    np.testing.assert_allclose(_np(ours.a), theirs.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(ours.tau), theirs.tau.numpy(), atol=1e-12)
    tau = _sample((2, 2), np.complex128)
    np.testing.assert_allclose(_np(E.linalg.householder_product(_t(a), _t(tau))),
                               torch.linalg.householder_product(torch.from_numpy(a), torch.from_numpy(tau)).numpy(),
                               atol=1e-12)
    with pytest.raises(RuntimeError, match=r"^torch.linalg.householder_product: input.shape\[-2\] must be greater"):
        E.linalg.householder_product(_t(a).mT, _t(tau))


# --- LDL ----------------------------------------------------------------------------------

def _symmetric(n, dtype, hermitian, batch=(3,)):
    s = _sample(batch + (n, n), dtype)
    s = s + (np.conj(np.swapaxes(s, -1, -2)) if hermitian else np.swapaxes(s, -1, -2))
    idx = np.arange(n)
    s[..., idx, idx] = 1e-3  # a small diagonal forces 2 x 2 pivots
    return s


@pytest.mark.parametrize("dtype, hermitian", [(np.float64, False), (np.float64, True), (np.complex128, False),
                                              (np.complex128, True), (np.float32, False)])
def test_ldl_matches_pytorch_and_solves(dtype, hermitian):
    torch = pytest.importorskip("torch")
    s, b = _symmetric(6, dtype, hermitian), _sample((3, 6, 2), dtype)
    LD, pivots = E.linalg.ldl_factor(_t(s), hermitian=hermitian)
    theirs = torch.linalg.ldl_factor(torch.from_numpy(s), hermitian=hermitian)
    np.testing.assert_array_equal(_np(pivots), theirs.pivots.numpy())
    np.testing.assert_allclose(_np(LD), theirs.LD.numpy(), atol=100 * _tol(dtype))
    X = _np(E.linalg.ldl_solve(LD, pivots, _t(b), hermitian=hermitian))
    np.testing.assert_allclose(X, np.linalg.solve(s, b), atol=100 * _tol(dtype))
    assert (_np(pivots) < 0).any()


@pytest.mark.parametrize("device", DEVICES)
def test_ldl_factor_ex_reports_a_singular_d(device):
    LD, pivots, info = E.linalg.ldl_factor_ex(E.zeros(2, 3, 3, device=device))
    assert info.tolist() == [1, 1] and pivots.dtype == E.int32 and LD.device.type == device
    with pytest.raises(E.linalg.LinAlgError, match="D is singular"):
        E.linalg.ldl_factor(E.zeros(3, 3))
    with pytest.raises(RuntimeError, match="^torch.linalg.ldl_factor_ex: Expected a floating point or complex"):
        E.linalg.ldl_factor(E.ones(3, 3, dtype=E.int64))


# --- complex inputs to the other decompositions ---------------------------------------------

_Z = _sample((2, 3, 3), np.complex128)
_ZB = _sample((2, 3, 2), np.complex128)
_ZH = _Z @ np.conj(np.swapaxes(_Z, -1, -2)) + 3 * np.eye(3)
COMPLEX_CASES = {
    "solve": lambda m, A, B, H: m.linalg.solve(A, B),
    "inv": lambda m, A, B, H: m.linalg.inv(A),
    "det": lambda m, A, B, H: m.linalg.det(A),
    "slogdet": lambda m, A, B, H: m.linalg.slogdet(A).logabsdet,
    "qr": lambda m, A, B, H: m.linalg.qr(A).R.abs(),
    "svdvals": lambda m, A, B, H: m.linalg.svdvals(A),
    "eigvalsh": lambda m, A, B, H: m.linalg.eigvalsh(H),
    "cholesky": lambda m, A, B, H: m.linalg.cholesky(H),
    "cholesky_solve": lambda m, A, B, H: m.cholesky_solve(B, m.linalg.cholesky(H)),
    "matrix_norm_2": lambda m, A, B, H: m.linalg.matrix_norm(A, 2),
    "matrix_norm_nuc": lambda m, A, B, H: m.linalg.matrix_norm(A, "nuc"),
    "vector_norm": lambda m, A, B, H: m.linalg.vector_norm(A, 3),
    "pinv": lambda m, A, B, H: m.linalg.pinv(A),
    "solve_triangular": lambda m, A, B, H: m.linalg.solve_triangular(A, B, upper=True),
    "lstsq": lambda m, A, B, H: m.linalg.lstsq(A, B).solution,
}


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex128_decompositions_match_pytorch(name):
    torch = pytest.importorskip("torch")
    fn = COMPLEX_CASES[name]
    ours = fn(E, _t(_Z), _t(_ZB), _t(_ZH))
    theirs = fn(torch, torch.from_numpy(_Z), torch.from_numpy(_ZB), torch.from_numpy(_ZH))
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(_np(ours), theirs.numpy(), atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_complex128_fills(device):
    """fill_ of 16-byte elements (complex128) on every device: eye, ones, full, fill_ of a
    non-contiguous view, zeros (the CUDA backend fills byte patterns of at most 8 bytes)."""
    assert E.eye(3, dtype=E.complex128, device=device).cpu().tolist() == np.eye(3, dtype=np.complex128).tolist()
    assert E.ones(2, 3, dtype=E.complex128, device=device).cpu().tolist() == [[1 + 0j] * 3] * 2
    assert E.full((2,), 1.5 - 2j, dtype=E.complex128, device=device).cpu().tolist() == [1.5 - 2j] * 2
    x = E.zeros(3, 4, dtype=E.complex128, device=device)
    x.t()[1].fill_(2 + 3j)  # column 1: a strided view
    expected = np.zeros((3, 4), np.complex128)
    expected[:, 1] = 2 + 3j
    assert x.cpu().tolist() == expected.tolist()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_matrices_on_every_device_match_numpy(device, dtype):
    # The CUDA device kernels compute in float32/float64: complex matrices go through the
    # host's LAPACK (a complex matrix read as reals once gave NaN).
    a, b = _sample((2, 3, 3), dtype), _sample((2, 3, 2), dtype)
    tol = 1e-4 if dtype is np.complex64 else 1e-10
    np.testing.assert_allclose(_np(E.linalg.inv(_t(a, device))), np.linalg.inv(a), atol=tol)
    np.testing.assert_allclose(_np(E.linalg.det(_t(a, device))), np.linalg.det(a), atol=tol)
    np.testing.assert_allclose(_np(E.linalg.solve(_t(a, device), _t(b, device))), np.linalg.solve(a, b), atol=tol)
    upper = np.triu(a) + 3 * np.eye(3)
    np.testing.assert_allclose(_np(E.linalg.solve_triangular(_t(upper, device), _t(b, device), upper=True)),
                               np.linalg.solve(upper, b), atol=tol)
    spd = a @ np.conj(np.swapaxes(a, -1, -2)) + 3 * np.eye(3)
    np.testing.assert_allclose(_np(E.linalg.cholesky(_t(spd, device))), np.linalg.cholesky(spd), atol=tol)


# --- singular factors ----------------------------------------------------------------------

SINGULAR = [[[0., 1.], [0., 0.]], [[0., 0.], [0., 1.]], [[1., 2.], [2., 4.]],
            [[0., 0., 1.], [0., 0., 2.], [3., 1., 1.]], [[1., 2., 3.], [2., 4., 6.], [0., 1., 5.]]]


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
@pytest.mark.parametrize("a", SINGULAR, ids=str)
def test_lu_solve_divides_by_zero_pivots_as_pytorch(a, left, adjoint):
    # getrs checks no pivot: a zero on U's diagonal gives inf and nan, and the row swaps
    # move them (a product with P would turn them into nan).
    torch = pytest.importorskip("torch")
    LU, pivots, _ = torch.linalg.lu_factor_ex(torch.tensor(a, dtype=torch.float64))
    B = 2 * torch.eye(len(a), dtype=torch.float64) + 1
    want = torch.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint).numpy()
    ours, our_pivots, info = E.linalg.lu_factor_ex(_t(np.array(a)))
    assert info.item() > 0
    np.testing.assert_array_equal(_np(our_pivots), pivots.numpy())
    got = _np(E.linalg.lu_solve(ours, our_pivots, _t(B.numpy()), left=left, adjoint=adjoint))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("transposed", [False, True])
def test_det_of_singular_matrices_is_pytorchs_signed_zero(transposed, device, request):
    # PyTorch multiplies its LU's pivots (of A^T for a contiguous A): a singular matrix's
    # determinant is 0 or -0, as the other pivots' and the permutation's signs say.
    torch = pytest.importorskip("torch")
    if device == "cpu" and not transposed:
        # Known difference: [[1, 2, 3], [2, 4, 6], [0, 1, 5]]'s det is 3.3e-16 from MKL's
        # LU (its multiply-adds rounded once), 0 from NumPy's LAPACK, which ember's CPU det
        # calls (ember's own LU rounds as MKL's: `kernels/lu.py`; det does not use it yet).
        request.applymarker(pytest.mark.xfail(strict=True, reason="MKL's rounding residue against NumPy's zero"))
    batch = np.array([m for m in SINGULAR if len(m) == 3] + [[[-2., -2., -2.], [-2., -2., -2.], [1., 0., 1.]]])
    theirs, ours = torch.tensor(batch), _t(batch, device)
    if transposed:
        theirs, ours = theirs.mT.contiguous().mT, ours.mT.contiguous().mT
    want, got = torch.linalg.det(theirs).numpy(), _np(E.linalg.det(ours))
    if device == "cuda":
        # A GPU contracts the elimination's multiply-adds into FMAs (as PyTorch's CUDA builds
        # do): where the CPU leaves a rounding residue (3.3e-16, seen on an H200) it may
        # reach an exact zero, and back. Exact zeros keep PyTorch's sign either way.
        exact = want == 0
        np.testing.assert_allclose(got[~exact], want[~exact], rtol=0, atol=1e-15)
        got, want = got[exact], want[exact]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
