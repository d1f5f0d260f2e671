"""Gradients of the LAPACK-backed linear algebra (inv, det, slogdet, logdet, solve,
solve_triangular, cholesky, eigh, svd, qr, pinv, lstsq) for complex matrices, in
PyTorch's convention (conjugate transposes, the conjugate Wirtinger derivative):
gradcheck in complex128, and the gradients of real losses against PyTorch's where it is
installed. Losses of eigen and singular vectors use only phase-invariant quantities;
losses that depend on the phase raise PyTorch's errors."""
import re

import numpy as np
import pytest

import ember_autograd
import ember_tensor as et

RNG = np.random.default_rng(11)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A = _complex(4, 4)
B = _complex(4, 2)
T = _complex(5, 3)
W = _complex(4, 4)


def _hermitian(lib, x):
    # cholesky and eigh read one triangle of a Hermitian input: differentiate through a
    # Hermitian positive-definite function of a free matrix, as PyTorch's tests do.
    return x @ x.mH + 4 * lib.eye(x.shape[-1], dtype=x.dtype)


def _svd_uv(lib, a):
    U, S, Vh = lib.linalg.svd(a, full_matrices=False)
    return (U[..., :, :2] @ Vh[..., :2, :]).real.sum() + U.abs().sum() + Vh.abs().sum() + S.sum()


# name -> (loss(lib, *inputs) -> real scalar, inputs as NumPy arrays)
LOSSES = {
    "inv": (lambda lib, a: (lib.linalg.inv(a) * lib.tensor(W)).real.sum() + lib.linalg.inv(a).abs().sum(), [A]),
    "det": (lambda lib, a: (lib.linalg.det(a) * (1 + 2j)).real + lib.linalg.det(a).abs(), [A]),
    "slogdet": (lambda lib, a: (lib.linalg.slogdet(a)[0] * (0.3 - 1j)).real + 2 * lib.linalg.slogdet(a)[1], [A]),
    "slogdet_sign_only": (lambda lib, a: (lib.linalg.slogdet(a)[0] * (0.3 - 1j)).real, [A]),
    "logdet": (lambda lib, a: lib.logdet(a).real + 0.5 * lib.logdet(a).imag, [A]),
    "solve": (lambda lib, a, b: lib.linalg.solve(a, b).abs().sum() + lib.linalg.solve(a, b[:, 0]).imag.sum(), [A, B]),
    "solve_right": (lambda lib, a, b: (lib.linalg.solve(a, b, left=False) * (1 - 1j)).real.sum(), [A, B.T]),
    "solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a.triu() + 3 * lib.eye(4), b, upper=True)
                         .abs().sum(), [A, B]),
    "solve_triangular_right": (lambda lib, a, b: lib.linalg.solve_triangular(
        a.tril(), b, upper=False, left=False, unitriangular=True).imag.sum(), [A, B.T]),
    "cholesky": (lambda lib, x: (lib.linalg.cholesky(_hermitian(lib, x)) * lib.tensor(W)).real.sum()
                 + lib.linalg.cholesky(_hermitian(lib, x), upper=True).abs().sum(), [A]),
    "eigh": (lambda lib, x: (lambda w, v: (w * lib.arange(4.)).sum() + v.abs().sum()
                             + (v[:, :2] @ v[:, :2].mH).real.sum())(*lib.linalg.eigh(_hermitian(lib, x))), [A]),
    "svd": (lambda lib, a: _svd_uv(lib, a), [A]),
    "svd_tall": (lambda lib, t: _svd_uv(lib, t), [T]),
    "svd_wide": (lambda lib, t: _svd_uv(lib, t), [T.T]),
    "qr": (lambda lib, t: (lambda q, r: (q * lib.tensor(T)).real.sum() + r.abs().sum())(*lib.linalg.qr(t)), [T]),
    "pinv": (lambda lib, t: (lib.linalg.pinv(t) * lib.tensor(T.T)).imag.sum() + lib.linalg.pinv(t.mT).abs().sum(),
             [T]),
    "lstsq": (lambda lib, t, b: lib.linalg.lstsq(t, b).solution.abs().sum(), [T, B[:, :1].repeat(2, 0)[:5]]),
    "matrix_norms": (lambda lib, a: lib.linalg.matrix_norm(a, ord=2) + lib.linalg.matrix_norm(a, ord="nuc")
                     + lib.linalg.cond(a), [A]),
}


def _grads(lib, name):
    loss, arrays = LOSSES[name]
    leaves = [lib.tensor(x, dtype=lib.complex128, requires_grad=True) for x in arrays]
    loss(lib, *leaves).backward()
    return [leaf.grad.detach().numpy() for leaf in leaves]


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradcheck_complex128(name):
    loss, arrays = LOSSES[name]
    leaves = tuple(et.tensor(x, dtype=et.complex128, requires_grad=True) for x in arrays)
    assert ember_autograd.gradcheck(lambda *xs: loss(et, *xs), leaves, atol=1e-5)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_equal_pytorchs(name):
    torch = pytest.importorskip("torch")
    for got, expected in zip(_grads(et, name), _grads(torch, name)):
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)


def test_double_backward_of_complex_det_and_inv():
    torch = pytest.importorskip("torch")

    def second(lib, grad):
        a = lib.tensor(A, requires_grad=True)
        g, = grad(lib.linalg.det(a).abs() + lib.linalg.inv(a).abs().sum(), a, create_graph=True)
        g.abs().sum().backward()
        return a.grad.numpy()
    np.testing.assert_allclose(second(et, ember_autograd.grad), second(torch, torch.autograd.grad),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("call, message", [
    (lambda a: et.linalg.svd(a)[0].real.sum(), "svd_backward: The singular vectors in the complex case are "
                                                "specified up to multiplication by e^{i phi}"),
    (lambda a: et.linalg.eigh(a @ a.mH)[1].real.sum(), "linalg_eigh_backward: The eigenvectors in the complex "
                                                        "case are specified up to multiplication by e^{i phi}"),
])
def test_a_loss_that_sees_the_free_phase_raises(call, message):
    a = et.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        call(a).backward()
