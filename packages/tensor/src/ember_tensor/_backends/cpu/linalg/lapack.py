"""The factorizations NumPy's batched LAPACK (`np.linalg`) computes directly: inv, det,
slogdet, solve, solve_triangular, cholesky, qr, svd, eigh, pinv, matrix_rank, lstsq.

Failures come back as values, never as PyTorch's errors: the first failing matrix of a
batch and what LAPACK's `info` says about it, which the op turns into PyTorch's
LinAlgError wording.
"""
import numpy as np

from .lu import lu_factor

__all__ = ["inv", "det", "slogdet", "solve", "solve_triangular", "cholesky", "qr", "svd", "eigh", "pinv",
           "matrix_rank", "lstsq"]


def _first_zero_pivot(matrix):
    """1-based index of the first exactly-zero pivot of LU with partial pivoting, or 0.

    Runs only on the error path, to name the pivot the way LAPACK's getrf `info` does.
    """
    a = np.array(matrix, dtype=matrix.dtype)
    n = a.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return 0


def inv(a):
    """(inverse of each matrix of `a`, None), or (None, (batch index, zero pivot)) for the
    first singular matrix; the pivot is 0 when LAPACK refused a matrix without an exact
    zero pivot (then no matrix is named)."""
    try:
        return np.linalg.inv(a), None
    except np.linalg.LinAlgError:
        pass
    for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
        pivot = _first_zero_pivot(matrix)
        if pivot:
            return None, (index, pivot)
    return None, (0, 0)


def det(a):
    """The determinant of each matrix of `a`: an array of its batch shape. A singular real
    matrix's is +-0 as PyTorch's CPU gives it: the sign of its LU's product of pivots and
    permutation, from the factors of a^T for a C-contiguous `a` (PyTorch factors the
    transpose then) and of `a` otherwise; det's backward reads that sign."""
    result = np.asarray(np.linalg.det(a))
    zero = result == 0
    if a.dtype.kind == "c" or not zero.any():
        return result
    factors = np.swapaxes(a, -1, -2) if a.flags.c_contiguous else a
    lu, pivots, _ = lu_factor(factors)
    swaps = (pivots != np.arange(1, pivots.shape[-1] + 1)).sum(-1)
    product = np.diagonal(lu, 0, -2, -1).prod(-1) * np.where(swaps % 2, -1, 1)
    return np.where(zero, np.copysign(np.zeros_like(result), product), result)


def slogdet(a):
    """(sign, log|det|) of each matrix of `a`, arrays of its batch shape."""
    sign, logabsdet = np.linalg.slogdet(a)
    return np.asarray(sign), np.asarray(logabsdet)


def solve(a, b, batch, left, vector):
    """X with A @ X = B (X @ A = B when not `left`; B a batch of vectors when `vector`),
    both broadcast to `batch`; None when a matrix is singular."""
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    rhs = b[..., None] if vector else b
    try:
        x = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(rhs, batch + rhs.shape[-2:]))
    except np.linalg.LinAlgError:
        return None
    x = x[..., 0] if vector else x
    return x if left else np.swapaxes(x, -1, -2)


def solve_triangular(a, b, upper, left, unitriangular, batch):
    """X with T @ X = B (X @ T = B when not `left`), T the upper or lower triangle of `a`
    (unit diagonal when `unitriangular`), both broadcast to `batch`, in their common
    dtype. A zero on the diagonal gives inf/nan, as in PyTorch."""
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        a = a.copy()
        idx = np.arange(a.shape[-1])
        a[..., idx, idx] = 1
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    # Substitution, as trsm, where LAPACK's general solve would differ: a triangle that is
    # singular (a zero on its diagonal; a solve pivots a lower one and rounds the zero
    # away), or a right side with inf or nan (which the solve's own L spreads as 0 * inf).
    singular = (np.diagonal(a, 0, -2, -1) == 0).any(-1) | ~np.isfinite(b).all((-2, -1))
    if not singular.any():
        x = np.linalg.solve(a, b)
    else:
        x = np.empty(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + b.shape[-1:], np.result_type(a, b))
        x[~singular] = np.linalg.solve(a[~singular], b[~singular])
        with np.errstate(divide="ignore", invalid="ignore"):
            x[singular] = _substitute(a[singular], b[singular], lower=(upper != left))
    return x if left else np.swapaxes(x, -1, -2)


def _substitute(a, b, lower):
    """Forward/back substitution for singular triangles: every product is taken, so a zero
    on the diagonal spreads inf and nan as LAPACK's trsm does."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + b.shape[-1:], np.result_type(a, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    for i in rows:
        partial = np.einsum("...j,...jk->...k", a[..., i, :], x)
        x[..., i, :] = (b[..., i, :] - partial) / a[..., i, i:i + 1]
    return x


def _first_non_pd_minor(matrix):
    for k in range(1, matrix.shape[0] + 1):
        try:
            np.linalg.cholesky(matrix[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return matrix.shape[0]


def cholesky(a, upper):
    """(Cholesky factor of each matrix of `a`, None): lower (upper, its transpose, when
    `upper`); or (None, (batch index, order of the failing leading minor)) for the first
    matrix that is not positive-definite."""
    try:
        factor = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
            try:
                np.linalg.cholesky(matrix)
            except np.linalg.LinAlgError:
                return None, (index, _first_non_pd_minor(matrix))
        raise
    # LAPACK leaves the other triangle alone; NumPy zeroes it, as PyTorch does.
    return (np.swapaxes(factor, -1, -2) if upper else factor), None


def qr(a, mode):
    """(Q, R) of each matrix of `a` (`mode` 'reduced', 'complete', or 'r': Q empty)."""
    if mode == "r":
        return np.empty((0,), a.dtype), np.linalg.qr(a, mode="r")
    return np.linalg.qr(a, mode=mode)


def svd(a, full_matrices):
    """(U, S, Vh) of each matrix of `a`, singular values descending."""
    return np.linalg.svd(a, full_matrices=full_matrices)


def eigh(a, UPLO):
    """(eigenvalues ascending, eigenvectors) of each symmetric matrix of `a` (reads triangle `UPLO`)."""
    return np.linalg.eigh(a, UPLO=UPLO)


def _tolerances(s, shape, atol, rtol, dtype):
    """PyTorch's cut-off max(atol, rtol * largest singular value) for pinv and matrix_rank
    (atol, rtol: None, numbers or arrays of the batch shape)."""
    atol = 0.0 if atol is None else atol
    if rtol is None:
        given_atol = not (np.isscalar(atol) and atol == 0.0)
        rtol = 0.0 if given_atol else np.finfo(dtype).eps * max(shape[-2:])
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    return np.maximum(np.asarray(atol)[..., None] if np.ndim(atol) else atol,
                      (np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol) * smax)


def _adjoint(x):
    """The conjugate transpose of each matrix of `x`."""
    return np.conj(np.swapaxes(x, -1, -2))


def pinv(a, atol, rtol, hermitian):
    """The Moore-Penrose pseudo-inverse of each matrix of `a`, dropping singular values
    at or below max(atol, rtol * s_max)."""
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
        cut = _tolerances(-np.sort(-s, axis=-1), a.shape, atol, rtol, a.dtype)
        inv_w = np.where(s > cut, 1 / np.where(w == 0, 1, w), 0)
        return (v * inv_w[..., None, :]) @ _adjoint(v)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cut = _tolerances(s, a.shape, atol, rtol, a.dtype)
    inv_s = np.where(s > cut, 1 / np.where(s == 0, 1, s), 0)
    return _adjoint(vh) @ (inv_s[..., None] * _adjoint(u))


def matrix_rank(a, atol, rtol, hermitian):
    """How many singular values of each matrix of `a` lie above max(atol, rtol * s_max)."""
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    s = -np.sort(-s, axis=-1)
    return np.asarray((s > _tolerances(s, a.shape, atol, rtol, a.dtype)).sum(-1))


def lstsq(a, b, rcond, driver, vector):
    """(solution, residuals, rank, singular_values) of ``A @ X = B`` per broadcast batch
    element, with PyTorch's CPU result fields for `driver` (shapes checked by the op).

    residuals (squared, per column) come back when A is tall and full rank and the driver
    is not 'gelsy'; singular_values only for 'gelsd' / 'gelss'.
    """
    rhs = b[..., None] if vector else b
    m, n = a.shape[-2:]
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:]).reshape((-1, m, n))
    rhs = np.broadcast_to(rhs, batch + rhs.shape[-2:]).reshape((-1,) + rhs.shape[-2:])
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    solutions, residuals, ranks, svals = [], [], [], []
    for a_i, b_i in zip(a, rhs):
        x, res, rank, s = np.linalg.lstsq(a_i, b_i, rcond=rcond)
        solutions.append(x)
        residuals.append(res)
        ranks.append(rank)
        svals.append(s)
    k = rhs.shape[-1]
    x = np.stack(solutions).reshape(batch + (n, k)) if solutions else np.zeros(batch + (n, k), a.dtype)
    x = x[..., 0] if vector else x
    full_rank = all(r == n for r in ranks)
    if driver != "gelsy" and m > n and full_rank and solutions:
        res = np.stack(residuals).reshape(batch + (k,))
    else:
        res = np.empty((0,), a.real.dtype)
    rank = np.array(ranks, np.int64).reshape(batch) if driver != "gels" else np.empty((0,), np.int64)
    s = (np.stack(svals).reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") and svals
         else np.empty((0,), a.real.dtype))
    return x, res, rank, s
