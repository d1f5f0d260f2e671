"""Gradients of the linear algebra on complex matrices against PyTorch's (its conjugate
Wirtinger convention) and by gradcheck in complex128: the formulas take conjugate
transposes, slogdet's sign cotangent, the phases of eigh's and svd's vectors (a loss
that depends on them is refused, as PyTorch refuses it) and qr's real diagonal of R (a
wide matrix's QR as a square one and the columns that move with Q)."""
import numpy as np
import pytest

import ember_autograd
import ember_tensor as et

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(27)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A = _complex(2, 4, 4) + 3 * np.eye(4)   # batched, well conditioned
B = _complex(2, 4, 3)
T = _complex(3, 5)                      # wide (T.mT tall)


def _hermitian(lib, h):
    return (h @ h.mH) / 4 + lib.eye(4, dtype=h.dtype)


# (lib, a, b, t) -> a tensor or a tuple of them; a, b, t require grad.
PROGRAMS = {
    "inv": lambda lib, a, b, t: lib.linalg.inv(a),
    "det": lambda lib, a, b, t: lib.linalg.det(a),
    "slogdet": lambda lib, a, b, t: lib.linalg.slogdet(a),
    "logdet": lambda lib, a, b, t: lib.logdet(a),
    "solve": lambda lib, a, b, t: lib.linalg.solve(a, b),
    "solve, vector": lambda lib, a, b, t: lib.linalg.solve(a, b[..., 0]),
    "solve, left=False": lambda lib, a, b, t: lib.linalg.solve(a, b.mT, left=False),
    "solve_triangular": lambda lib, a, b, t: lib.linalg.solve_triangular(a, b, upper=True),
    "solve_triangular, lower, right, unit": lambda lib, a, b, t: lib.linalg.solve_triangular(
        a, b.mT, upper=False, left=False, unitriangular=True),
    "cholesky": lambda lib, a, b, t: lib.linalg.cholesky(_hermitian(lib, a)),
    "cholesky, upper": lambda lib, a, b, t: lib.linalg.cholesky(_hermitian(lib, a), upper=True),
    "cholesky_solve": lambda lib, a, b, t: lib.cholesky_solve(b, lib.linalg.cholesky(_hermitian(lib, a))),
    "cholesky_inverse": lambda lib, a, b, t: lib.cholesky_inverse(lib.linalg.cholesky(_hermitian(lib, a))),
    "eigh": lambda lib, a, b, t: (lambda w, v: (w, v.abs() ** 2))(*lib.linalg.eigh(_hermitian(lib, a))),
    "eigvalsh": lambda lib, a, b, t: lib.linalg.eigvalsh(_hermitian(lib, a)),
    "svd": lambda lib, a, b, t: (lambda u, s, vh: (u.abs() ** 2, s, vh.abs() ** 2, u[:, :1] * vh[:1]))(
        *lib.linalg.svd(t, full_matrices=False)),
    "svd, tall": lambda lib, a, b, t: (lambda u, s, vh: (u.abs() ** 2, s, u @ vh))(
        *lib.linalg.svd(t.mT, full_matrices=False)),
    "svdvals": lambda lib, a, b, t: lib.linalg.svdvals(t),
    "pinv": lambda lib, a, b, t: lib.linalg.pinv(t),
    "pinv, tall": lambda lib, a, b, t: lib.linalg.pinv(t.mT),
    "lstsq": lambda lib, a, b, t: lib.linalg.lstsq(a, b).solution,
    "qr": lambda lib, a, b, t: lib.linalg.qr(t.mT),
    "qr, square": lambda lib, a, b, t: lib.linalg.qr(a),
    "qr, wide": lambda lib, a, b, t: lib.linalg.qr(t),
    "lu_factor": lambda lib, a, b, t: lib.linalg.lu_factor(a)[0],
    "lu": lambda lib, a, b, t: lib.linalg.lu(t)[1:],
    "lu, tall": lambda lib, a, b, t: lib.linalg.lu(t.mT)[1:],
    "lu_solve": lambda lib, a, b, t: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
    "lu_solve, adjoint": lambda lib, a, b, t: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
    "lu_solve, left=False": lambda lib, a, b, t: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b.mT, left=False),
    "eigvals": lambda lib, a, b, t: lib.linalg.eigvals(a),
    "matrix_exp": lambda lib, a, b, t: lib.linalg.matrix_exp(a / 4),
    "matrix_norm nuc": lambda lib, a, b, t: lib.linalg.matrix_norm(t, "nuc"),
    "matrix_norm 2": lambda lib, a, b, t: lib.linalg.matrix_norm(t, 2),
    "cond": lambda lib, a, b, t: lib.linalg.cond(a),
    "householder_product": lambda lib, a, b, t: lib.linalg.householder_product(t.mT, t[0, :2]),
    "vecdot": lambda lib, a, b, t: lib.linalg.vecdot(t, t * 2j),
    "vander": lambda lib, a, b, t: lib.linalg.vander(t[0]),
    "cumprod": lambda lib, a, b, t: lib.cumprod(t, 1),
}


def _run(lib, name):
    leaves = [lib.tensor(v).requires_grad_() for v in (A, B, T)]
    outs = PROGRAMS[name](lib, *leaves)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0
    for i, o in enumerate(outs):
        w = np.random.default_rng(i).standard_normal(tuple(o.shape)) * (1 + 0.5j if o.is_complex() else 1)
        loss = loss + (o * lib.tensor(w)).real.sum()
    loss.backward()
    return outs, [x.grad for x in leaves]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_complex_linalg_gradients_match_pytorch(name):
    ours, our_grads = _run(et, name)
    theirs, their_grads = _run(torch, name)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype), name
        np.testing.assert_allclose(o.detach().numpy(), t.detach().resolve_conj().numpy(), rtol=1e-9, atol=1e-9)
    for o, t in zip(our_grads, their_grads):
        assert (o is None) == (t is None), name
        if t is not None:
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["eigh", "svd"])
def test_a_loss_of_the_vectors_phase_is_refused(name):
    """eigh's and svd's vectors are unique up to a phase: PyTorch refuses a loss that
    depends on it, and so does ember."""
    h = et.tensor(A[0], requires_grad=True)
    vectors = et.linalg.eigh(_hermitian(et, h))[1] if name == "eigh" else et.linalg.svd(h)[0]
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^{i phi}"):
        (vectors * (1 + 1j)).real.sum().backward()


@pytest.mark.parametrize("fn", [
    et.linalg.inv,
    et.linalg.det,
    lambda a: et.linalg.slogdet(a)[1],
    lambda a: et.linalg.solve(a, a[..., 0]),
    lambda a: et.linalg.cholesky(a @ a.mH + et.eye(3, dtype=a.dtype)),
    lambda a: et.linalg.qr(a)[0].abs(),
    lambda a: et.linalg.lu_solve(*et.linalg.lu_factor(a), a),
    lambda a: et.linalg.pinv(a[:2]),
    lambda a: et.linalg.svd(a)[1],
], ids=["inv", "det", "slogdet", "solve", "cholesky", "qr", "lu_solve", "pinv", "svd"])
def test_gradcheck_complex128(fn):
    a = et.tensor(A[0, :3, :3], requires_grad=True)
    assert ember_autograd.gradcheck(fn, (a,))
