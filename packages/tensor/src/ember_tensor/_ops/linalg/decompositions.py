"""Factorizations and solvers of `ember_tensor.linalg`: inv, det, slogdet, solve,
cholesky, qr, svd, eigh, lstsq, pinv, matrix_rank (and the PyTorch ops built on them).

Each op checks its arguments with PyTorch's errors, then calls its device's `linalg`
backend family (`_backends/cpu/linalg/`: NumPy's batched LAPACK; `_backends/cuda/linalg.py`:
device kernels) and raises PyTorch's LinAlgError from the failure the backend reports (the
first failing matrix of the batch and LAPACK's `info` for it). qr, svd, eigh, pinv,
matrix_rank and lstsq have no device kernels (a declared gap, `_backends._families.GAPS`:
no cuSOLVER binding yet): they compute on host copies with the CPU backend, whatever the
tensor's device, and their results move back to it (`lapack.host` / `wrap`). Their
derivatives live in ember_autograd's `_rules/linalg_ext.py`.
"""
import numpy as np

from ... import _backends
from ... import _dtype as D
from ... import return_types
from ..._device import CPU
from ..._dispatch import op
from . import lapack as L
from ..creation import zeros
from .lapack import LinAlgError, check_float, check_matrix, check_square, host, wrap, wrap_array

__all__ = ["inv", "det", "slogdet", "logdet", "solve", "solve_triangular", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "svdvals", "eigh", "eigvalsh", "lstsq", "pinv", "matrix_rank",
           "LinAlgError"]

SlogdetResult = return_types.structseq("linalg_slogdet", ("sign", "logabsdet"))
QRResult = return_types.structseq("linalg_qr", ("Q", "R"))
SVDResult = return_types.structseq("linalg_svd", ("U", "S", "Vh"))
EighResult = return_types.structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
LstsqResult = return_types.structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def _linalg(t):
    """The linalg family of `t`'s device's backend."""
    return _backends.get(t._device).linalg


def _host_linalg():
    """The CPU backend's linalg family: the functions no device kernel computes yet run
    there, on host copies (the gap declared in `_backends._families.GAPS`)."""
    return _backends.get(CPU).linalg


_INV_SINGULAR = ("The diagonal element {pivot} is zero, the inversion could not be completed because the "
                 "input matrix is singular.")


def _singular(A, name, failure, template):
    """PyTorch's LinAlgError for the (batch index, zero pivot) a backend reported (pivot 0:
    LAPACK refused a matrix without naming a zero pivot)."""
    index, pivot = failure
    if not pivot:
        return LinAlgError(f"{name}: The input matrix is singular; it could not be inverted.")
    return LinAlgError(f"{name}: {L.batch_prefix(index, tuple(A.shape[:-2]))}" + template.format(pivot=pivot))


@op("linalg_inv")
def inv(A, *, out=None):
    """The inverse of each square matrix of `A` (raises LinAlgError when one is singular).

    >>> import ember_tensor as torch
    >>> torch.linalg.inv(torch.tensor([[2., 0.], [0., 4.]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    check_square(A, "linalg.inv")
    result, failure = _linalg(A).inv(A._data)
    if failure:
        raise _singular(A, "linalg.inv", failure, _INV_SINGULAR)
    return _out(wrap_array(result, A), out)


def _out(result, out):
    if out is None:
        return result
    from ..elementwise import copy_to_out
    return copy_to_out(result, out)


@op("linalg_det")
def det(A, *, out=None):
    """The determinant of each square matrix of `A` (a singular real matrix's as PyTorch's
    signed zero on the CPU: see the CPU backend's `det`)."""
    check_square(A, "linalg.det")
    return _out(wrap_array(_linalg(A).det(A._data), A), out)


@op("linalg_slogdet")
def slogdet(A):
    """(sign, log|det|) of each square matrix: a stable way to the determinant's size."""
    check_square(A, "linalg.slogdet")
    sign, logabsdet = _linalg(A).slogdet(A._data)
    # sign has A's dtype (a unit complex number for complex A); log|det| is real.
    return SlogdetResult(wrap_array(sign, A), wrap_array(logabsdet, A, A._dtype.to_real()))


@op()
def logdet(input):
    """log(det(input)): nan where the determinant is negative, -inf where it is zero; for
    complex matrices the complex logarithm, logabsdet + log(sign) (PyTorch's sum: -inf + nan j
    at a singular matrix, the second operand of a complex add being multiplied by 1 + 0j)."""
    check_square(input, "linalg.slogdet")
    sign, logabsdet = slogdet(input)
    if input.is_complex():
        return logabsdet + sign.log()
    from ..elementwise import where
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
    x = _linalg(A).solve(A._data, B._data, batch, left, vector)
    if x is not None and x.size == 0 and A._data.size:
        # No right-hand side to solve for, but PyTorch factors A first and refuses a
        # singular A all the same: solve A's own batch against one zero column.
        column = zeros(tuple(A.shape[:-1]) + (1,), dtype=A._dtype, device=A._device)
        if _linalg(A).solve(A._data, column._data, tuple(A.shape[:-2]), True, False) is None:
            x = None
    if x is None:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    return _out(wrap_array(x, A), out)


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
    x = _linalg(A).solve_triangular(A._data, B._data, upper, left, unitriangular, batch)
    return _out(wrap_array(x, A), out)  # computed in A's and B's common type, returned as A's


def _check_triangular_shapes(A, B, left):
    """solve_triangular's shape check with PyTorch's error; returns the broadcast batch shape."""
    a_shape, b_shape = tuple(A.shape), tuple(B.shape)
    n = a_shape[-1]
    rows, cols = (b_shape[-2], b_shape[-1]) if left else (b_shape[-1], b_shape[-2])
    if rows != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    return _broadcast_batch(a_shape[:-2], b_shape[:-2])


def _not_positive_definite(index, order, batch_shape):
    return LinAlgError(f"linalg.cholesky: {L.batch_prefix(index, batch_shape)}The factorization could not be "
                       f"completed because the input is not positive-definite (the leading minor of order "
                       f"{order} is not positive-definite).")


@op("linalg_cholesky")
def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor L (lower; ``L @ L.mT == A``) of each symmetric positive-definite
    matrix, or U (``upper``: ``U.mT @ U == A``). As in PyTorch, only the triangle of A that
    the factor lies in is read: the lower one, or the upper one for ``upper=True``."""
    check_square(A, "linalg.cholesky")
    # The backends read the lower triangle: for U, that of A.mT (A's upper triangle).
    data = A.mT.contiguous()._data if upper else A._data
    factor, failure = _linalg(A).cholesky(data, upper)
    if failure:
        raise _not_positive_definite(*failure, tuple(A.shape[:-2]))
    return _out(wrap_array(factor, A), out)


@op()
def cholesky_solve(input, input2, upper=False, *, out=None):
    """Solve ``A @ X = input`` given A's Cholesky factor `input2` (lower, or upper if `upper`)."""
    factor = input2.mH if upper else input2
    return _out(solve(factor @ factor.mH, input), out)


@op()
def cholesky_inverse(input, upper=False, *, out=None):
    """The inverse of ``A = L @ L.mT`` given its Cholesky factor `input` (upper: ``U.mT @ U``)."""
    factor = input.mH if upper else input
    return _out(inv(factor @ factor.mH), out)


@op("linalg_qr")
def qr(A, mode="reduced"):
    """``A = Q @ R`` with orthonormal Q and upper-triangular R; `mode` 'reduced', 'complete' or 'r'."""
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    q, r = _host_linalg().qr(host(A), mode)
    return QRResult(wrap(q, A), wrap(r, A))


@op("linalg_svd")
def svd(A, full_matrices=True, *, driver=None):
    """``A = U @ diag(S) @ Vh``, singular values S in descending order."""
    check_matrix(A, "linalg.svd")
    u, s, vh = _host_linalg().svd(host(A), full_matrices)
    return SVDResult(wrap(u, A), wrap(s, A, A._dtype.to_real()), wrap(vh, A))


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
    values, vectors = _host_linalg().eigh(host(A), UPLO)
    return EighResult(wrap(values, A, A._dtype.to_real()), wrap(vectors, A))


@op("linalg_eigvalsh")
def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of symmetric matrices."""
    return eigh(A, UPLO).eigenvalues


def _host_value(x):
    """A tolerance as the host backend takes it: None, a number, or a tensor's host array."""
    return host(x) if hasattr(x, "_data") else x


@op("linalg_pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse, dropping singular values below max(atol, rtol * s_max)."""
    check_matrix(A, "linalg.pinv")
    result = _host_linalg().pinv(host(A), _host_value(atol), _host_value(rtol), hermitian)
    return _out(wrap(result, A), out)


@op("linalg_matrix_rank")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * s_max), as int64."""
    check_matrix(A, "linalg.matrix_rank")
    rank = _host_linalg().matrix_rank(host(A), _host_value(atol), _host_value(rtol), hermitian)
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
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    vector = B.dim() == A.dim() - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    x, res, rank, s = _host_linalg().lstsq(host(A), host(B), rcond, driver, vector)
    real = A._dtype.to_real()
    return LstsqResult(wrap(x, A), wrap(res, A, real), wrap(rank, A, D.int64), wrap(s, A, real))
