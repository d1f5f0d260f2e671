"""Derivatives of the LAPACK-backed linear algebra (inv, det, slogdet, solve, cholesky,
eigh, svd, qr, pinv) and the composites built on them.

Formulas follow PyTorch's (tools/autograd/derivatives.yaml, FunctionsManual.cpp) and
are written with differentiable ember ops, so second derivatives work too. They hold for
complex inputs in PyTorch's convention (the conjugate Wirtinger derivative): conjugate
transposes (``.mH``, a plain transpose for real matrices) where the references have
them, slogdet's sign cotangent, eigh's and svd's gauge checks and svd's phase term,
qr's real diagonal of R, det's adjugate with the conjugate phase.
"""
import ember_tensor as E

from .. import _grad_mode
from ._registry import RESULT, composite, derivative, not_differentiable


@derivative("linalg_inv", inputs=("A",), save=lambda A, **_: (RESULT,))
def inv(ctx, grad, inverse):
    # d(A^-1) = -A^-1 dA A^-1
    return -(inverse.mH @ grad @ inverse.mH)


def _solve_with_lu_of(A, D, perturb_zero_pivots=False):
    """A^-H D from A's LU factors, as PyTorch's det and slogdet backward solve: with the
    factors of A^H for a contiguous A (the factorisation PyTorch's forward keeps), else of A
    and the adjoint solve. A zero pivot is divided by, as LAPACK's getrs does (inf and nan
    at a singular A), or first replaced by the dtype's eps when `perturb_zero_pivots`."""
    transposed = A.is_contiguous()
    LU, pivots, _ = E.linalg.lu_factor_ex(A.mH if transposed else A)
    if perturb_zero_pivots:
        diagonal = LU.diagonal(0, -2, -1)
        LU = LU + E.where(diagonal == 0, E.finfo(A.dtype).eps, 0.0).diag_embed()
    return E.linalg.lu_solve(LU, pivots, D, adjoint=not transposed)


def _diagonal_of(values, n):
    """Matrices with `values` (one per matrix) on the diagonal: value * I."""
    return values.unsqueeze(-1).expand(tuple(values.shape) + (n,)).diag_embed()


@derivative("linalg_det", inputs=("A",), save=lambda A, **_: (A, RESULT))
def det(ctx, grad, A, determinant):
    # d det(A) = tr(adj(A) dA), and adj(A) = det(A) A^-1 when A is invertible.
    singular = (determinant == 0).unsqueeze(-1).unsqueeze(-1)
    if not bool(singular.any()):
        return (grad * determinant.conj()).unsqueeze(-1).unsqueeze(-1) * A.inverse().mH
    if _grad_mode.is_grad_enabled():
        # Differentiable backward (create_graph): PyTorch takes the adjugate through an SVD,
        # adj(A)^H = conj(det(U) det(Vh)) U diag(prod_{j != i} s_j) Vh, from A = U S Vh.
        U, S, Vh = E.linalg.svd(A)
        k = S.shape[-1]
        others = E.where(E.eye(k, dtype=E.bool, device=A.device), S.new_ones(()),
                         S.unsqueeze(-2).expand(tuple(S.shape) + (k,))).prod(-1)
        phase = (E.linalg.det(U) * E.linalg.det(Vh)).conj().detach()
        adjugate_h = (U * others.unsqueeze(-2)) @ Vh
        return (grad * phase).unsqueeze(-1).unsqueeze(-1) * adjugate_h
    # Plain backward: PyTorch solves A^T X = det(A) grad I with A's LU, its zero pivots
    # replaced by eps, so a singular A's gradient is det(A) = +-0 times finite numbers:
    # zeros with the signs of those products.
    return _solve_with_lu_of(A, _diagonal_of(grad * determinant.conj(), A.shape[-1]), perturb_zero_pivots=True)


@derivative("linalg_slogdet", inputs=("A",), save=lambda A: (A, RESULT[0]))
def slogdet(ctx, grad, A, sign):
    grad_sign, grad_logabsdet = grad
    if sign.is_complex():
        # log det = logabsdet + i angle: both parts of tr(A^-1 dA). A real loss changes with
        # the sign's angle through Im(conj(sign) grad_sign), so gA = g A^-H with
        # g = grad_logabsdet + i Im(conj(sign) grad_sign).
        if grad_sign is None and grad_logabsdet is None:
            return None
        g = sign.new_zeros(tuple(sign.shape)) if grad_logabsdet is None else grad_logabsdet.to(sign.dtype)
        if grad_sign is not None:
            g = g + 1j * (sign.conj() * grad_sign).imag
        grad_logabsdet = g
    elif grad_logabsdet is None:
        return None  # a real sign is piecewise constant
    if _grad_mode.is_grad_enabled():
        # Differentiable backward (create_graph): a solve with A^H, which refuses a singular
        # A with linalg.solve's error, as PyTorch's.
        return E.linalg.solve(A.mH, _diagonal_of(grad_logabsdet, A.shape[-1]))
    if not bool((sign == 0).any()):
        return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * A.inverse().mH
    # A singular A: PyTorch solves A^T X = grad I with A's LU factors and no check of their
    # pivots, so the zero pivots give getrs's inf and nan.
    return _solve_with_lu_of(A, _diagonal_of(grad_logabsdet, A.shape[-1]))


def _solve_save(A, B, *, left=True, out=None):
    return (A, RESULT, left, B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1])))


@derivative("linalg_solve", inputs=("A", "B"), save=_solve_save)
def solve(ctx, grad, A, X, left, vector):
    needs = ctx.needs_input_grad
    if not left:
        # X A = B  <=>  A^H X^H = B^H
        grad_b = E.linalg.solve(A, grad.mH).mH
        grad_a = -(X.mH @ grad_b) if needs[0] else None
        return grad_a, grad_b if needs[1] else None
    grad_b = E.linalg.solve(A.mH, grad)
    grad_a = None
    if needs[0]:
        grad_a = -(grad_b.unsqueeze(-1) * X.conj().unsqueeze(-2)) if vector else -(grad_b @ X.mH)
    return grad_a, grad_b if needs[1] else None


def _triangle(X, upper, unitriangular):
    X = X.triu() if upper else X.tril()
    return X - X.diagonal(0, -2, -1).diag_embed() if unitriangular else X


@derivative("linalg_solve_triangular", inputs=("A", "B"),
            save=lambda A, B, *, upper, left=True, unitriangular=False, out=None: (A, RESULT, upper, left,
                                                                                    unitriangular))
def solve_triangular(ctx, grad, A, X, upper, left, unitriangular):
    grad_b = E.linalg.solve_triangular(A.mH, grad, upper=not upper, left=left, unitriangular=unitriangular)
    grad_a = None
    if ctx.needs_input_grad[0]:
        grad_a = _triangle(-(grad_b @ X.mH) if left else -(X.mH @ grad_b), upper, unitriangular)
    return grad_a, grad_b if ctx.needs_input_grad[1] else None


@derivative("linalg_cholesky", inputs=("A",), save=lambda A, *, upper=False, out=None: (RESULT, upper))
def cholesky(ctx, grad, L, upper):
    # PyTorch's formula (Murray 2016): with M = tril(L^H gL), gA = L^-H X L^-1 where
    # X = (M + tril(M, -1)^H) / 2 (for complex inputs its diagonal keeps M's imaginary part).
    if upper:
        L, grad = L.mH, grad.mH
    M = (L.mH @ grad).tril()
    L_inv = L.inverse()
    return L_inv.mH @ (0.5 * (M + M.tril(-1).mH)) @ L_inv


@derivative("linalg_eigh", inputs=("A",), save=lambda A, UPLO="L": (RESULT[0], RESULT[1]))
def eigh(ctx, grad, values, vectors):
    grad_values, grad_vectors = grad
    V = vectors
    inner = V.new_zeros(tuple(V.shape))
    if grad_vectors is not None:
        VhgV = V.mH @ grad_vectors
        if V.is_complex() and not bool(E.allclose(VhgV.diagonal(0, -2, -1).imag, values.new_zeros(()),
                                                  rtol=1e-2, atol=1e-2)):
            raise RuntimeError("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this quantity, "
                               "so it is ill-defined.")
        skew = 0.5 * (VhgV - VhgV.mH)
        # E[i, j] = lambda_j - lambda_i, with 1 on the diagonal; the diagonal of the
        # quotient (0, or an imaginary part the gauge check above allows) is dropped.
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1)
        gaps = gaps + values.new_ones(gaps.shape[-1]).diag_embed()
        inner = skew / gaps
        if V.is_complex():
            inner = inner - inner.diagonal(0, -2, -1).diag_embed()
    if grad_values is not None:
        inner = inner + grad_values.diag_embed()
    return V @ inner @ V.mH


def _svd_save(A, full_matrices=True, *, driver=None):
    return (RESULT[0], RESULT[1], RESULT[2], full_matrices, tuple(A.shape))


@derivative("linalg_svd", inputs=("A",), save=_svd_save)
def svd(ctx, grad, U, S, Vh, full_matrices, shape):
    grad_u, grad_s, grad_vh = grad
    m, n = shape[-2:]
    k = min(m, n)
    if full_matrices and m != n and (grad_u is not None or grad_vh is not None):
        raise RuntimeError("linalg_svd_backward: Setting full_matrices=True in backward is not supported. "
                           "Use full_matrices=False")
    U, Vh = U[..., :k], Vh[..., :k, :]
    if grad_u is None and grad_vh is None:
        return (U * grad_s.unsqueeze(-2).to(U.dtype)) @ Vh
    V = Vh.mH
    S2 = S * S
    gaps = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    gaps = gaps + S.new_ones(k).diag_embed()
    inner = U.new_zeros(tuple(S.shape) + (k,))
    UhgU = U.mH @ grad_u if grad_u is not None else None
    VhgV = V.mH @ grad_vh.mH if grad_vh is not None else None
    if U.is_complex():
        # Singular vectors are unique up to a common phase e^{i phi} of a pair (u_j, v_j):
        # a loss that depends on it is ill-defined.
        phases = sum(X.diagonal(0, -2, -1).imag for X in (UhgU, VhgV) if X is not None)
        if not bool(E.allclose(phases, S.new_zeros(()), rtol=1e-2, atol=1e-2)):
            raise RuntimeError("svd_backward: The singular vectors in the complex case are specified up to "
                               "multiplication by e^{i phi}. The specified loss function depends on this phase "
                               "term, making it ill-defined.")
    if UhgU is not None:
        inner = inner + (UhgU - UhgU.mH) * S.unsqueeze(-2) / gaps
    if VhgV is not None:
        inner = inner + S.unsqueeze(-1) * (VhgV - VhgV.mH) / gaps
    if U.is_complex():
        # Only the phase difference of u_j and v_j is fixed by A: Im diag(U^H dA V) =
        # (Im diag(U^H dU) - Im diag(V^H dV)) S. Its term, i (Im diag(U^H gU) -
        # Im diag(V^H gV)) / (2 S), replaces the diagonal of the skew parts above.
        phase = sum(sign * X.diagonal(0, -2, -1).imag for sign, X in ((1, UhgU), (-1, VhgV)) if X is not None)
        inner = inner - inner.diagonal(0, -2, -1).diag_embed() + (phase / (2 * S) * 1j).diag_embed()
    if grad_s is not None:
        inner = inner + grad_s.diag_embed().to(inner.dtype)
    grad_a = U @ inner @ Vh
    if m > n and grad_u is not None:
        grad_a = grad_a + ((grad_u - U @ UhgU) / S.unsqueeze(-2)) @ Vh
    if m < n and grad_vh is not None:
        grad_v = grad_vh.mH
        grad_a = grad_a + U @ ((grad_v - V @ VhgV) / S.unsqueeze(-2)).mH
    return grad_a


@derivative("linalg_qr", inputs=("A",), save=lambda A, mode="reduced": (RESULT[0], RESULT[1], mode, tuple(A.shape)))
def qr(ctx, grad, Q, R, mode, shape):
    grad_q, grad_r = grad
    m, n = shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_backward_tall(grad_q, grad_r, Q, R)
    # A wide A = [X | Y] = Q [U | V]: X = Q U is a square QR, and Y = Q V moves with Q.
    U, V = R[..., :, :m], R[..., :, m:]
    grad_u = grad_r[..., :, :m] if grad_r is not None else None
    grad_v = grad_r[..., :, m:] if grad_r is not None else None
    if grad_v is not None:
        Y = Q @ V
        grad_q = Y @ grad_v.mH if grad_q is None else grad_q + Y @ grad_v.mH
    grad_x = _qr_backward_tall(grad_q, grad_u, Q, U)
    grad_y = Q @ grad_v if grad_v is not None else E.zeros_like(V)
    return E.cat([grad_x, grad_y], -1)


def _qr_backward_tall(grad_q, grad_r, Q, R):
    """gA of A = QR with m >= n (Q^H Q = I, R's diagonal real): C = Q^H dA R^-1 is a
    skew-Hermitian Q^H dQ plus dR R^-1 (upper, real diagonal), so with M = R gR^H - gQ^H Q,
    gA = (gQ + Q (tril(M, -1) + tril(M, -1)^H + Re diag(M))) R^-H."""
    M = Q.new_zeros(tuple(R.shape[:-2]) + (R.shape[-1], R.shape[-1]))
    if grad_r is not None:
        M = M + R @ grad_r.mH
    if grad_q is not None:
        M = M - grad_q.mH @ Q
    lower = M.tril(-1)
    diagonal = M.diagonal(0, -2, -1)
    b = Q @ (lower + lower.mH + (diagonal.real if diagonal.is_complex() else diagonal).diag_embed().to(M.dtype))
    if grad_q is not None:
        b = b + grad_q
    return b @ R.inverse().mH


@derivative("linalg_pinv", inputs=("A",), save=lambda A, **_: (A, RESULT))
def pinv(ctx, grad, A, P):
    return _pinv_backward(grad, P, A)


def _pinv_backward(grad, P, A):
    """Gradient through A -> pinv(A) = P for inputs of constant rank (PyTorch's formula),
    arranged so that the largest product is min(m, n) wide."""
    m, n = A.shape[-2:]
    Pt, gt = P.mH, grad.mH
    if m <= n:
        K = gt @ P
        KPt = K @ Pt
        return -(P @ K).mH + KPt - (A @ P) @ KPt + (Pt @ P) @ (gt - K @ A)
    K = P @ gt
    PtK = Pt @ K
    return -(K @ P).mH + (gt - A @ K) @ P @ Pt + PtK - PtK @ P @ A


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
def lstsq(ctx, grad, A, B):
    # The solution is pinv(A) @ B; differentiate that expression.
    grad_x = grad[0]
    if grad_x is None:
        return None, None
    vector = B.dim() == A.dim() - 1
    P = E.linalg.pinv(A)
    rhs = B.unsqueeze(-1) if vector else B
    gx = grad_x.unsqueeze(-1) if vector else grad_x
    grad_a = _pinv_backward(gx @ rhs.mH, P, A)
    grad_b = P.mH @ gx
    return grad_a, grad_b.squeeze(-1) if vector else grad_b
