"""Derivatives of the general eigen-decomposition and of LU (linalg.eig, lu_factor_ex),
PyTorch's formulas (FunctionsManual.cpp's linalg_eig_backward and
linalg_lu_backward), written with differentiable ember ops and conjugate transposes, so
they hold for real and complex inputs alike. What is built on them (eigvals, lu,
lu_factor, lu_unpack, lu_solve, householder_product, ormqr) is composite; geqrf and the
LDL factorization have no derivative, as in PyTorch.
"""
import ember_tensor as E

from ._registry import RESULT, composite, derivative


def _not_implemented(ctx, grad, op_name):
    raise RuntimeError(f"the derivative for '{op_name}' is not implemented.")


@derivative("linalg_eig", inputs=("A",), save=lambda A, **_: (RESULT[0], RESULT[1], A.is_complex()))
def eig(ctx, grad, L, V, complex_input):
    grad_values, grad_vectors = grad
    Vh = V.mH
    if grad_vectors is None:
        # A = V diag(L) V^-1: only the eigenvalues' part, V^-H diag(gL) V^H.
        grad_a = E.linalg.solve(Vh, grad_values.unsqueeze(-1) * Vh)
        return grad_a if complex_input else grad_a.real
    VhgV = Vh @ grad_vectors
    diag_VhgV = VhgV.diagonal(0, -2, -1)
    # Each eigenvector is defined up to a phase e^{i phi}: a loss that depends on the
    # phase has no gradient (PyTorch's check, with its tolerances).
    if V.is_complex() and not E.allclose(diag_VhgV.imag, E.zeros_like(diag_VhgV.imag), rtol=1e-2, atol=1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                           "so it is ill-defined.")
    # Project onto the directions that keep the columns of V at unit norm.
    VhgV = VhgV - Vh @ (V * diag_VhgV.real.unsqueeze(-2))
    # Econj[i, j] = conj(L_j - L_i), with ones on the diagonal (where the result is gL).
    Lc = L.conj()
    gaps = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
    eye = E.eye(L.shape[-1], dtype=E.bool, device=L.device)
    gaps = E.where(eye, gaps.new_ones(()), gaps)
    inner = E.where(eye, gaps.new_zeros(()), VhgV / gaps)
    if grad_values is not None:
        inner = inner + grad_values.diag_embed()
    grad_a = E.linalg.solve(Vh, inner @ Vh)
    return grad_a if complex_input else grad_a.real


def _lu_save(A, *, pivot=True, check_errors=False, out=None):
    return (RESULT[0], RESULT[1])


@derivative("linalg_lu_factor_ex", inputs=("A",), save=_lu_save)
def lu_factor_ex(ctx, grad, LU, pivots):
    grad_lu = grad[0]
    if grad_lu is None:
        return None
    m, n = LU.shape[-2:]
    k = min(m, n)
    P, L, U = E.lu_unpack(LU, pivots)
    # The compact LU holds L's strict lower triangle and U's upper one.
    gL, gU = grad_lu[..., :, :k].tril(-1), grad_lu[..., :k, :].triu()
    L1, U1 = L[..., :k, :], U[..., :, :k]
    gL1, gU1 = gL[..., :k, :], gU[..., :, :k]
    # A = P L U, square part: gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H. A wide
    # A's extra columns U2 = L^-1 P^T A2 and a tall A's extra rows L2 = P2^T A2 U^-1 feed
    # back into L's and U's gradients.
    lower = L1.mH @ gL1
    upper = gU1 @ U1.mH
    if m < n:
        lower = lower - gU[..., :, k:] @ U[..., :, k:].mH
    if m > n:
        upper = upper - L[..., k:, :].mH @ gL[..., k:, :]
    phi = lower.tril(-1) + upper.triu()
    top = E.linalg.solve_triangular(L1.mH, phi, upper=True, unitriangular=True)
    top = E.linalg.solve_triangular(U1.mH, top, upper=False, left=False)
    if m < n:
        right = E.linalg.solve_triangular(L1.mH, gU[..., :, k:], upper=True, unitriangular=True)
        top = E.cat([top, right], -1)
    if m > n:
        bottom = E.linalg.solve_triangular(U1.mH, gL[..., k:, :], upper=False, left=False)
        top = E.cat([top, bottom], -2)
    return P @ top


composite("linalg_eigvals", "linalg_lu_factor", "linalg_ldl_factor", "linalg_lu", "lu_unpack", "linalg_lu_solve",
          "linalg_householder_product", "ormqr")
derivative("geqrf", name="GeqrfBackward0", save=lambda input, **_: ("geqrf",))(_not_implemented)
derivative("linalg_ldl_factor_ex", inputs=("A",), name="LinalgLdlFactorExBackward0",
           save=lambda A, **_: ("linalg_ldl_factor_ex",))(_not_implemented)
derivative("linalg_ldl_solve", inputs=("LD", "B"), name="LinalgLdlSolveBackward0",
           save=lambda LD, pivots, B, **_: ("linalg_ldl_solve",))(_not_implemented)
