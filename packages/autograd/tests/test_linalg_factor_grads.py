"""Gradients of linalg.eig/eigvals and the LU family (lu_factor, lu, lu_solve, lu_unpack)
and of householder_product/ormqr: gradcheck in float64 and complex128, and PyTorch's
numbers where it is installed; geqrf and the LDL factorization refuse at backward."""
import numpy as np
import pytest

import ember_tensor as et
from ember_autograd import gradcheck

RNG = np.random.default_rng(11)


def _leaf(x):
    return et.tensor(x, requires_grad=True)


def _sample(shape, complex_=False):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


def _eig_loss(lib, A):
    L, V = lib.linalg.eig(A)
    # Phase-invariant in V (|V|), as any well-defined loss of eigenvectors must be.
    return (L.abs() ** 2).sum() + (V.abs() ** 3).sum() + L.real.sum()


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_gradcheck(complex_):
    A = _leaf(_sample((2, 3, 3), complex_))
    assert gradcheck(lambda a: _eig_loss(et, a), (A,))
    assert gradcheck(lambda a: et.linalg.eigvals(a).abs().sum(), (A,))


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_grads_match_pytorch(complex_):
    torch = pytest.importorskip("torch")
    x = _sample((2, 4, 4), complex_)
    ours, theirs = _leaf(x), torch.tensor(x, requires_grad=True)
    _eig_loss(et, ours).backward()
    _eig_loss(torch, theirs).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


def test_eig_refuses_a_phase_dependent_loss():
    A = _leaf(_sample((3, 3), True))
    # LAPACK makes each eigenvector's largest component real, so a loss of V[0, 0].real
    # alone is phase-invariant when that component is V[0, 0]: real plus imaginary part
    # depends on the phase whichever component is largest.
    v = et.linalg.eig(A).eigenvectors[0, 0]
    with pytest.raises(RuntimeError, match="specified up to multiplication by e\\^\\{i phi\\}"):
        (v.real + v.imag).backward()


SHAPES = [(3, 3), (2, 4, 3), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_factor_and_lu_gradcheck(shape):
    A = _leaf(_sample(shape))
    assert gradcheck(lambda a: et.linalg.lu_factor(a).LU, (A,))
    assert gradcheck(lambda a: tuple(et.linalg.lu(a)[1:]), (A,))


def test_lu_factor_gradcheck_complex():
    A = _leaf(_sample((2, 3, 3), True))
    assert gradcheck(lambda a: et.linalg.lu_factor(a).LU.abs().sum(), (A,))


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_grads_match_pytorch(shape):
    torch = pytest.importorskip("torch")
    x, w = _sample(shape), _sample(shape)
    ours, theirs = _leaf(x), torch.tensor(x, requires_grad=True)
    (et.linalg.lu_factor(ours).LU * et.tensor(w)).sum().backward()
    (torch.linalg.lu_factor(theirs).LU * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_gradcheck(left, adjoint):
    A = et.tensor(_sample((2, 3, 3)))
    LU, pivots = et.linalg.lu_factor(A)
    LU.requires_grad_()
    B = _leaf(_sample((2, 3, 2) if left else (2, 2, 3)))
    assert gradcheck(lambda lu, b: et.linalg.lu_solve(lu, pivots, b, left=left, adjoint=adjoint), (LU, B))


def test_householder_product_and_ormqr_gradcheck():
    A, tau, C = _leaf(_sample((4, 3))), _leaf(_sample((2,))), _leaf(_sample((4, 2)))
    assert gradcheck(et.linalg.householder_product, (A, tau))
    assert gradcheck(lambda a, t, c: et.ormqr(a, t, c, transpose=True), (A, tau, C))


def test_householder_product_grads_match_pytorch():
    torch = pytest.importorskip("torch")
    a, t = _sample((5, 3), True), _sample((3,), True)
    ours = (_leaf(a), _leaf(t))
    theirs = (torch.tensor(a, requires_grad=True), torch.tensor(t, requires_grad=True))
    et.linalg.householder_product(*ours).abs().sum().backward()
    torch.linalg.householder_product(*theirs).abs().sum().backward()
    for o, t_ in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t_.grad.numpy(), atol=1e-10)


def test_geqrf_and_ldl_have_no_derivative():
    A = _leaf(_sample((3, 3)))
    with pytest.raises(RuntimeError, match="the derivative for 'geqrf' is not implemented"):
        et.geqrf(A).a.sum().backward()
    S = _leaf(_sample((3, 3)) + 5 * np.eye(3))
    with pytest.raises(RuntimeError, match="the derivative for 'linalg_ldl_factor_ex' is not implemented"):
        et.linalg.ldl_factor(S + S.mT).LD.sum().backward()
