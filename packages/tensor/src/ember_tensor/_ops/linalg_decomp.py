"""Factorizations and solvers of `ember_tensor.linalg`: inv, det, slogdet, solve,
cholesky, qr, svd, eigh, lstsq, pinv, matrix_rank (and the PyTorch ops built on them).

Each op runs NumPy's batched LAPACK routine (see `_lapack`) and raises PyTorch's error
for singular / non-positive-definite / non-square inputs. On CUDA tensors inv, det,
slogdet, solve, solve_triangular and cholesky (and so logdet, cholesky_solve and
cholesky_inverse) run device kernels (`_backends.cuda.linalg`); qr, svd, eigh, pinv, matrix_rank
and lstsq still make a host round trip (no cuSOLVER binding yet). Their derivatives live in
ember_autograd's `_rules/linalg_ext.py`.
"""
import numpy as np

from .. import _dtype as D
from .._dispatch import op
from . import _lapack as L
from ._lapack import LinAlgError, check_float, check_matrix, check_square, host, wrap

__all__ = ["inv", "det", "slogdet", "logdet", "solve", "solve_triangular", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "svdvals", "eigh", "eigvalsh", "lstsq", "pinv", "matrix_rank",
           "LinAlgError"]

SlogdetResult = L.return_type("linalg_slogdet", ("sign", "logabsdet"))
QRResult = L.return_type("linalg_qr", ("Q", "R"))
SVDResult = L.return_type("linalg_svd", ("U", "S", "Vh"))
EighResult = L.return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
LstsqResult = L.return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _on_cuda(t):
    return t._device.type == "cuda"


def _cuda_linalg():
    from .._backends.cuda import linalg as _cuda_linalg  # imports numba.cuda: only on a CUDA code path
    return _cuda_linalg


_INV_SINGULAR = ("The diagonal element {pivot} is zero, the inversion could not be completed because the "
                 "input matrix is singular.")


def _raise_singular(a, name, template):
    """Find the failing matrix of a batch and raise PyTorch's LinAlgError for it."""
    batch_shape = a.shape[:-2]
    for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
        pivot = L.first_zero_pivot(matrix)
        if pivot:
            raise LinAlgError(f"{name}: {L.batch_prefix(index, batch_shape)}" + template.format(pivot=pivot))
    raise LinAlgError(f"{name}: The input matrix is singular; it could not be inverted.")


@op("linalg_inv")
def inv(A, *, out=None):
    """The inverse of each square matrix of `A` (raises LinAlgError when one is singular).

    >>> import ember_tensor as torch
    >>> torch.linalg.inv(torch.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    check_square(A, "linalg.inv")
    if _on_cuda(A):
        result, failure = _cuda_linalg().inv(A)
        if failure:
            index, pivot = failure
            raise LinAlgError(f"linalg.inv: {L.batch_prefix(index, A.shape[:-2])}"
                              + _INV_SINGULAR.format(pivot=pivot))
        return _out(result, out)
    a = host(A)
    try:
        result = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        _raise_singular(a, "linalg.inv", _INV_SINGULAR)
    return _out(wrap(result, A), out)


def _out(result, out):
    if out is None:
        return result
    from .elementwise import copy_to_out
    return copy_to_out(result, out)


@op("linalg_det")
def det(A, *, out=None):
    """The determinant of each square matrix of `A`."""
    check_square(A, "linalg.det")
    if _on_cuda(A):
        return _out(_cuda_linalg().det(A), out)
    return _out(wrap(np.linalg.det(host(A)), A), out)


@op("linalg_slogdet")
def slogdet(A):
    """(sign, log|det|) of each square matrix: a stable way to the determinant's size."""
    check_square(A, "linalg.slogdet")
    if _on_cuda(A):
        return SlogdetResult(*_cuda_linalg().slogdet(A))
    sign, logabsdet = np.linalg.slogdet(host(A))
    return SlogdetResult(wrap(sign, A), wrap(logabsdet, A))


@op()
def logdet(input):
    """log(det(input)): nan where the determinant is negative, -inf where it is zero."""
    check_square(input, "linalg.slogdet")
    sign, logabsdet = slogdet(input)
    from .elementwise import where
    nan = input.new_full((), float("nan"))
    return where(sign < 0, nan, logabsdet)


def _is_vector_rhs(A, B):
    # PyTorch treats B as a (batch of) vector(s) when it has one dim less than A.
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@op("linalg_solve")
def solve(A, B, *, left=True, out=None):
    """The solution X of ``A @ X = B`` (``X @ A = B`` when `left` is False)."""
    check_square(A, "linalg.solve")
    check_float(B, "linalg.solve")
    if A._dtype is not B._dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {L.type_name(A._dtype)} and B of type {L.type_name(B._dtype)} instead")
    vector = _is_vector_rhs(A, B)
    batch = _check_solve_shapes(A, B, left, vector)
    if _on_cuda(A):
        return _out(_solve_on_device(A, B, left, vector, batch), out)
    a, b = host(A), host(B)
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    rhs = b[..., None] if vector else b
    try:
        x = np.linalg.solve(np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(rhs, batch + rhs.shape[-2:]))
    except np.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
    x = x[..., 0] if vector else x
    return _out(wrap(x if left else np.swapaxes(x, -1, -2), A), out)


def _check_solve_shapes(A, B, left, vector):
    """solve's shape checks with PyTorch's errors; returns the broadcast batch shape."""
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported "
                           "for left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
    a_shape, rhs_shape = tuple(A.shape), tuple(B.shape)
    if vector:
        rhs_shape += (1,)
    rows, cols = (rhs_shape[-2], rhs_shape[-1]) if left else (rhs_shape[-1], rhs_shape[-2])
    n = a_shape[-1]
    if rows != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    try:
        return _broadcast_batch(a_shape[:-2], rhs_shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve: Incompatible batch shapes of A and B: {list(a_shape[:-2])} "
                           f"and {list(rhs_shape[:-2])}") from None


def _broadcast_batch(a_batch, b_batch):
    # np.broadcast_shapes costs microseconds: equal batches, the common case, skip it.
    return a_batch if a_batch == b_batch else np.broadcast_shapes(a_batch, b_batch)


def _solve_on_device(A, B, left, vector, batch):
    """solve's CUDA path (shapes checked): X @ A = B is solved as A.mT @ X.mT = B.mT."""
    if not left:
        A, B = A.mT, B.mT
    rhs = B.unsqueeze(-1) if vector else B
    x = _cuda_linalg().solve(A, rhs, batch)
    if x is None:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    x = x.squeeze(-1) if vector else x
    return x if left else x.mT.contiguous()


@op("linalg_solve_triangular")
def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Solve ``A @ X = B`` (``X @ A = B`` if not `left`) reading only A's upper or lower triangle.

    As in PyTorch, a zero on the diagonal gives inf/nan rather than an error.
    """
    check_square(A, "linalg.solve_triangular")  # the device kernels (and PyTorch) need square A
    check_float(B, "linalg.solve_triangular")
    if B.dim() < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    batch = _check_triangular_shapes(A, B, left)
    if _on_cuda(A):
        return _out(_solve_triangular_on_device(A, B, upper, left, unitriangular, batch), out)
    a, b = host(A), host(B)
    a = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        a = a.copy()
        idx = np.arange(a.shape[-1])
        a[..., idx, idx] = 1
    if not left:
        a, b = np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            x = _substitute(a, b, lower=(upper != left))
    return _out(wrap(x if left else np.swapaxes(x, -1, -2), A), out)


def _check_triangular_shapes(A, B, left):
    """solve_triangular's shape check with PyTorch's error; returns the broadcast batch shape."""
    a_shape, b_shape = tuple(A.shape), tuple(B.shape)
    n = a_shape[-1]
    rows, cols = (b_shape[-2], b_shape[-1]) if left else (b_shape[-1], b_shape[-2])
    if rows != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    return _broadcast_batch(a_shape[:-2], b_shape[:-2])


def _solve_triangular_on_device(A, B, upper, left, unitriangular, batch):
    """solve_triangular's CUDA path (shapes checked): X @ A = B is solved as A.mT @ X.mT = B.mT."""
    if not left:
        A, B, upper = A.mT, B.mT, not upper
    dtype = D.float64 if D.float64 in (A._dtype, B._dtype) else D.float32  # NumPy's result_type
    x = _cuda_linalg().solve_triangular(A, B, upper, unitriangular, dtype, batch)
    return x if left else x.mT.contiguous()


def _substitute(a, b, lower):
    """Forward/back substitution (only for singular triangles, where LAPACK's solve refuses)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + b.shape[-1:], np.result_type(a, b))
    rows = range(n) if lower else range(n - 1, -1, -1)
    for i in rows:
        partial = np.einsum("...j,...jk->...k", a[..., i, :], x)
        x[..., i, :] = (b[..., i, :] - partial) / a[..., i, i:i + 1]
    return x


def _not_positive_definite(index, order, batch_shape):
    return LinAlgError(f"linalg.cholesky: {L.batch_prefix(index, batch_shape)}The factorization could not be "
                       f"completed because the input is not positive-definite (the leading minor of order "
                       f"{order} is not positive-definite).")


def _first_non_pd_minor(matrix):
    for k in range(1, matrix.shape[0] + 1):
        try:
            np.linalg.cholesky(matrix[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return matrix.shape[0]


@op("linalg_cholesky")
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L (lower; ``L @ L.mT == A``) of each symmetric positive-definite matrix."""
    check_square(A, "linalg.cholesky")
    if _on_cuda(A):
        factor, failure = _cuda_linalg().cholesky(A)
        if failure:
            raise _not_positive_definite(*failure, A.shape[:-2])
        return _out(factor.mT.contiguous() if upper else factor, out)
    a = host(A)
    try:
        factor = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        for index, matrix in enumerate(a.reshape((-1,) + a.shape[-2:])):
            try:
                np.linalg.cholesky(matrix)
            except np.linalg.LinAlgError:
                raise _not_positive_definite(index, _first_non_pd_minor(matrix), a.shape[:-2]) from None
        raise
    # LAPACK leaves the other triangle alone; NumPy zeroes it, as PyTorch does.
    return _out(wrap(np.swapaxes(factor, -1, -2) if upper else factor, A), out)


@op()
def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve ``A @ X = input`` given A's Cholesky factor `input2` (lower, or upper if `upper`)."""
    factor = input2.mT if upper else input2
    return _out(solve(factor @ factor.mT, input), out)


@op()
def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of ``A = L @ L.mT`` given its Cholesky factor `input` (upper: ``U.mT @ U``)."""
    factor = input.mT if upper else input
    return _out(inv(factor @ factor.mT), out)


@op("linalg_qr")
def qr(A, mode="reduced"):
    """``A = Q @ R`` with orthonormal Q and upper-triangular R; `mode` 'reduced', 'complete' or 'r'."""
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    a = host(A)
    if mode == "r":
        return QRResult(wrap(np.empty((0,), a.dtype), A), wrap(np.linalg.qr(a, mode="r"), A))
    q, r = np.linalg.qr(a, mode=mode)
    return QRResult(wrap(q, A), wrap(r, A))


@op("linalg_svd")
def svd(A, full_matrices=True, *, driver=None):
    """``A = U @ diag(S) @ Vh``, singular values S in descending order."""
    check_matrix(A, "linalg.svd")
    u, s, vh = np.linalg.svd(host(A), full_matrices=full_matrices)
    return SVDResult(wrap(u, A), wrap(s, A), wrap(vh, A))


@op("linalg_svdvals")
def svdvals(A, *, driver=None):
    """The singular values of `A`, descending."""
    check_matrix(A, "linalg.svd")
    return svd(A, full_matrices=False).S


@op("linalg_eigh")
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices (reads one triangle)."""
    check_square(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    values, vectors = np.linalg.eigh(host(A), UPLO=UPLO)
    return EighResult(wrap(values, A), wrap(vectors, A))


@op("linalg_eigvalsh")
def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices."""
    return eigh(A, UPLO).eigenvalues


def _tolerances(s, shape, atol, rtol, dtype):
    """PyTorch's cut-off max(atol, rtol * largest singular value) for pinv and matrix_rank."""
    atol = 0.0 if atol is None else (host(atol) if hasattr(atol, "_data") else atol)
    if rtol is None:
        given_atol = not (np.isscalar(atol) and atol == 0.0)
        rtol = 0.0 if given_atol else np.finfo(dtype).eps * max(shape[-2:])
    elif hasattr(rtol, "_data"):
        rtol = host(rtol)
    smax = s[..., :1] if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    return np.maximum(np.asarray(atol)[..., None] if np.ndim(atol) else atol,
                      (np.asarray(rtol)[..., None] if np.ndim(rtol) else rtol) * smax)


@op("linalg_pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse, dropping singular values below max(atol, rtol * s_max)."""
    check_matrix(A, "linalg.pinv")
    a = host(A)
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
        cut = _tolerances(-np.sort(-s, axis=-1), a.shape, atol, rtol, a.dtype)
        inv_w = np.where(s > cut, 1 / np.where(w == 0, 1, w), 0)
        result = (v * inv_w[..., None, :]) @ np.swapaxes(v, -1, -2)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        cut = _tolerances(s, a.shape, atol, rtol, a.dtype)
        inv_s = np.where(s > cut, 1 / np.where(s == 0, 1, s), 0)
        result = np.swapaxes(vh, -1, -2) @ (inv_s[..., None] * np.swapaxes(u, -1, -2))
    return _out(wrap(result, A), out)


@op("linalg_matrix_rank")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * s_max), as int64."""
    check_matrix(A, "linalg.matrix_rank")
    a = host(A)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    s = -np.sort(-s, axis=-1)
    rank = (s > _tolerances(s, a.shape, atol, rtol, a.dtype)).sum(-1)
    return _out(wrap(rank, A, D.int64), out)


@op("linalg_lstsq")
def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A @ X = B`` with PyTorch's CPU result fields.

    residuals (squared, per column) come back when A is tall and full rank and the driver
    is not 'gelsy' (the default); singular_values only for 'gelsd' / 'gelss'.
    """
    check_matrix(A, "linalg.lstsq")
    check_float(B, "linalg.lstsq")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    a, b = host(A), host(B)
    vector = B.dim() == A.dim() - 1
    rhs = b[..., None] if vector else b
    m, n = a.shape[-2:]
    if rhs.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
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
        res = np.empty((0,), a.dtype)
    rank = np.array(ranks, np.int64).reshape(batch) if driver != "gels" else np.empty((0,), np.int64)
    s = (np.stack(svals).reshape(batch + (min(m, n),)) if driver in ("gelsd", "gelss") and svals
         else np.empty((0,), a.dtype))
    return LstsqResult(wrap(x, A), wrap(res, A), wrap(rank, A, D.int64), wrap(s, A))
