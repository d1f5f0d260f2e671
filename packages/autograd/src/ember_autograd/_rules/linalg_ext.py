"""Derivatives of the LAPACK-backed linear algebra (inv, det, slogdet, solve, cholesky,
eigh, svd, qr, pinv) and the composites built on them.

Formulas follow PyTorch's (tools/autograd/derivatives.yaml, FunctionsManual.cpp) and
are written with differentiable ember ops, so second derivatives work too. Real dtypes
only: every conjugate-transpose of the references is a plain ``.mT`` here, so a complex
input's gradient raises NotImplementedError (`_real_only`) rather than come out wrong.
"""
import functools

import ember_tensor as E

from .. import _grad_mode
from ._registry import RESULT, composite, derivative, not_differentiable


def _real_only(formula):
    """Refuse complex inputs: the formula below is written for real matrices."""
    @functools.wraps(formula)
    def checked(ctx, *args, **kwargs):
        if any(meta is not None and meta[1].is_complex for meta in ctx._input_meta):
            raise NotImplementedError(f"ember: the derivative of {ctx.name()} for complex inputs is not "
                                      "implemented (only real matrices)")
        return formula(ctx, *args, **kwargs)
    return checked


@derivative("linalg_inv", inputs=("A",), save=lambda A, **_: (RESULT,))
@_real_only
def inv(ctx, grad, inverse):
    # d(A^-1) = -A^-1 dA A^-1
    return -(inverse.mT @ grad @ inverse.mT)


def _solve_with_lu_of(A, D, perturb_zero_pivots=False):
    """A^-T D from A's LU factors, as PyTorch's det and slogdet backward solve: with the
    factors of A^T for a contiguous A (the factorisation PyTorch's forward keeps), else of A
    and the adjoint solve. A zero pivot is divided by, as LAPACK's getrs does (inf and nan
    at a singular A), or first replaced by the dtype's eps when `perturb_zero_pivots`."""
    transposed = A.is_contiguous()
    LU, pivots, _ = E.linalg.lu_factor_ex(A.mT if transposed else A)
    if perturb_zero_pivots:
        diagonal = LU.diagonal(0, -2, -1)
        LU = LU + E.where(diagonal == 0, E.finfo(A.dtype).eps, 0.0).diag_embed()
    return E.linalg.lu_solve(LU, pivots, D, adjoint=not transposed)


def _diagonal_of(values, n):
    """Matrices with `values` (one per matrix) on the diagonal: value * I."""
    return values.unsqueeze(-1).expand(tuple(values.shape) + (n,)).diag_embed()


@derivative("linalg_det", inputs=("A",), save=lambda A, **_: (A, RESULT))
@_real_only
def det(ctx, grad, A, determinant):
    # d det(A) = tr(adj(A) dA), and adj(A) = det(A) A^-1 when A is invertible.
    singular = (determinant == 0).unsqueeze(-1).unsqueeze(-1)
    if not bool(singular.any()):
        return (grad * determinant).unsqueeze(-1).unsqueeze(-1) * A.inverse().mT
    if _grad_mode.is_grad_enabled():
        # Differentiable backward (create_graph): PyTorch takes the adjugate through an SVD,
        # adj(A)^T = det(U) det(Vh) U diag(prod_{j != i} s_j) Vh, from A = U S Vh.
        U, S, Vh = E.linalg.svd(A)
        k = S.shape[-1]
        others = E.where(E.eye(k, dtype=E.bool, device=A.device), S.new_ones(()),
                         S.unsqueeze(-2).expand(tuple(S.shape) + (k,))).prod(-1)
        sign = (E.linalg.det(U) * E.linalg.det(Vh)).detach()
        adjugate_t = (U * others.unsqueeze(-2)) @ Vh
        return (grad * sign).unsqueeze(-1).unsqueeze(-1) * adjugate_t
    # Plain backward: PyTorch solves A^T X = det(A) grad I with A's LU, its zero pivots
    # replaced by eps, so a singular A's gradient is det(A) = +-0 times finite numbers:
    # zeros with the signs of those products.
    return _solve_with_lu_of(A, _diagonal_of(grad * determinant, A.shape[-1]), perturb_zero_pivots=True)


@derivative("linalg_slogdet", inputs=("A",), save=lambda A: (A, RESULT[0]))
@_real_only
def slogdet(ctx, grad, A, sign):
    _, grad_logabsdet = grad
    if grad_logabsdet is None:
        return None  # sign is piecewise constant
    if _grad_mode.is_grad_enabled():
        # Differentiable backward (create_graph): a solve with A^T, which refuses a singular
        # A with linalg.solve's error, as PyTorch's.
        return E.linalg.solve(A.mT, _diagonal_of(grad_logabsdet, A.shape[-1]))
    if not bool((sign == 0).any()):
        return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * A.inverse().mT
    # A singular A: PyTorch solves A^T X = grad I with A's LU factors and no check of their
    # pivots, so the zero pivots give getrs's inf and nan.
    return _solve_with_lu_of(A, _diagonal_of(grad_logabsdet, A.shape[-1]))


def _solve_save(A, B, *, left=True, out=None):
    return (A, RESULT, left, B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1])))


@derivative("linalg_solve", inputs=("A", "B"), save=_solve_save)
@_real_only
def solve(ctx, grad, A, X, left, vector):
    needs = ctx.needs_input_grad
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        grad_b = E.linalg.solve(A, grad.mT).mT
        grad_a = -(X.mT @ grad_b) if needs[0] else None
        return grad_a, grad_b if needs[1] else None
    grad_b = E.linalg.solve(A.mT, grad)
    grad_a = None
    if needs[0]:
        grad_a = -(grad_b.unsqueeze(-1) * X.unsqueeze(-2)) if vector else -(grad_b @ X.mT)
    return grad_a, grad_b if needs[1] else None


def _triangle(X, upper, unitriangular):
    X = X.triu() if upper else X.tril()
    return X - X.diagonal(0, -2, -1).diag_embed() if unitriangular else X


@derivative("linalg_solve_triangular", inputs=("A", "B"),
            save=lambda A, B, *, upper, left=True, unitriangular=False, out=None: (A, RESULT, upper, left,
                                                                                    unitriangular))
@_real_only
def solve_triangular(ctx, grad, A, X, upper, left, unitriangular):
    grad_b = E.linalg.solve_triangular(A.mT, grad, upper=not upper, left=left, unitriangular=unitriangular)
    grad_a = None
    if ctx.needs_input_grad[0]:
        grad_a = _triangle(-(grad_b @ X.mT) if left else -(X.mT @ grad_b), upper, unitriangular)
    return grad_a, grad_b if ctx.needs_input_grad[1] else None


def _phi(X):
    # The lower triangle with the diagonal halved: the part of a symmetric dA that a
    # triangular factor "sees".
    return X.tril() - 0.5 * X.diagonal(0, -2, -1).diag_embed()


@derivative("linalg_cholesky", inputs=("A",), save=lambda A, *, upper=False, out=None: (RESULT, upper))
@_real_only
def cholesky(ctx, grad, L, upper):
    if upper:
        L, grad = L.mT, grad.mT
    L_inv = L.inverse()
    grad_a = L_inv.mT @ _phi(L.mT @ grad) @ L_inv
    return 0.5 * (grad_a + grad_a.mT)


@derivative("linalg_eigh", inputs=("A",), save=lambda A, UPLO="L": (RESULT[0], RESULT[1]))
@_real_only
def eigh(ctx, grad, values, vectors):
    grad_values, grad_vectors = grad
    V = vectors
    inner = values.new_zeros(tuple(V.shape))
    if grad_vectors is not None:
        VtgV = V.mT @ grad_vectors
        skew = 0.5 * (VtgV - VtgV.mT)
        # E[i, j] = lambda_j - lambda_i, with 1 on the diagonal (where skew is 0).
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
        gaps = gaps + values.new_ones(gaps.shape[-1]).diag_embed()
        inner = skew / gaps
    if grad_values is not None:
        inner = inner + grad_values.diag_embed()
    return V @ inner @ V.mT


def _svd_save(A, full_matrices=True, *, driver=None):
    return (RESULT[0], RESULT[1], RESULT[2], full_matrices, tuple(A.shape))


@derivative("linalg_svd", inputs=("A",), save=_svd_save)
@_real_only
def svd(ctx, grad, U, S, Vh, full_matrices, shape):
    grad_u, grad_s, grad_vh = grad
    m, n = shape[-2:]
    k = min(m, n)
    if full_matrices and m != n and (grad_u is not None or grad_vh is not None):
        raise RuntimeError("linalg_svd_backward: Setting full_matrices=True in backward is not supported. "
                           "Use full_matrices=False")
    U, Vh = U[..., :k], Vh[..., :k, :]
    if grad_u is None and grad_vh is None:
        return (U * grad_s.unsqueeze(-2)) @ Vh
    V = Vh.mT
    S2 = S * S
    gaps = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    gaps = gaps + S.new_ones(k).diag_embed()
    inner = S.new_zeros(tuple(S.shape) + (k,))
    if grad_u is not None:
        UtgU = U.mT @ grad_u
        inner = inner + (UtgU - UtgU.mT) * S.unsqueeze(-2) / gaps
    if grad_vh is not None:
        grad_v = grad_vh.mT
        VtgV = V.mT @ grad_v
        inner = inner + S.unsqueeze(-1) * (VtgV - VtgV.mT) / gaps
    if grad_s is not None:
        inner = inner + grad_s.diag_embed()
    grad_a = U @ inner @ Vh
    if m > n and grad_u is not None:
        grad_a = grad_a + ((grad_u - U @ (U.mT @ grad_u)) / S.unsqueeze(-2)) @ Vh
    if m < n and grad_vh is not None:
        grad_a = grad_a + U @ ((grad_v - V @ (V.mT @ grad_v)) / S.unsqueeze(-2)).mT
    return grad_a


@derivative("linalg_qr", inputs=("A",), save=lambda A, mode="reduced": (RESULT[0], RESULT[1], mode, tuple(A.shape)))
@_real_only
def qr(ctx, grad, Q, R, mode, shape):
    grad_q, grad_r = grad
    m, n = shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if m < n or (mode == "complete" and m > n):
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols, "
                           "or when ncols > nrows (not implemented in ember).")
    # A = QR: M = R gR^T - gQ^T Q, gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) + tril(M, -1)^T.
    M = Q.new_zeros(tuple(R.shape))
    if grad_r is not None:
        M = M + R @ grad_r.mT
    if grad_q is not None:
        M = M - grad_q.mT @ Q
    lower = M.tril(-1)
    b = Q @ (lower + lower.mT + M.diagonal(0, -2, -1).diag_embed())
    if grad_q is not None:
        b = b + grad_q
    return b @ R.inverse().mT


@derivative("linalg_pinv", inputs=("A",), save=lambda A, **_: (A, RESULT))
@_real_only
def pinv(ctx, grad, A, P):
    return _pinv_backward(grad, P, A)


def _pinv_backward(grad, P, A):
    """Gradient through A -> pinv(A) = P for inputs of constant rank (PyTorch's formula),
    arranged so that the largest product is min(m, n) wide."""
    m, n = A.shape[-2:]
    Pt, gt = P.mT, grad.mT
    if m <= n:
        K = gt @ P
        KPt = K @ Pt
        return -(P @ K).mT + KPt - (A @ P) @ KPt + (Pt @ P) @ (gt - K @ A)
    K = P @ gt
    PtK = Pt @ K
    return -(K @ P).mT + (gt - A @ K) @ P @ Pt + PtK - PtK @ P @ A


composite("logdet", "cholesky_solve", "cholesky_inverse", "linalg_svdvals", "linalg_eigvalsh", "linalg_vector_norm",
          "linalg_matrix_norm", "linalg_norm", "vdot", "addbmm", "kron", "cross", "matrix_power",
          "einsum", "tensordot", "inner", "addr", "linalg_matrix_exp")
not_differentiable("linalg_matrix_rank")


# vector_norm(ord=0) counts non-zeros: PyTorch's result requires grad and its backward
# gives the input no gradient at all (an undefined tensor, so .grad stays None).
@derivative("linalg_vector_norm_count", inputs=("x",), name="LinalgVectorNormBackward0")
def linalg_vector_norm_count(ctx, grad):
    return None


@derivative("linalg_lstsq", inputs=("A", "B"), save=lambda A, B, rcond=None, *, driver=None: (A, B))
@_real_only
def lstsq(ctx, grad, A, B):
    # The solution is pinv(A) @ B; differentiate that expression.
    grad_x = grad[0]
    if grad_x is None:
        return None, None
    vector = B.dim() == A.dim() - 1
    P = E.linalg.pinv(A)
    rhs = B.unsqueeze(-1) if vector else B
    gx = grad_x.unsqueeze(-1) if vector else grad_x
    grad_a = _pinv_backward(gx @ rhs.mT, P, A)
    grad_b = P.mT @ gx
    return grad_a, grad_b.squeeze(-1) if vector else grad_b
