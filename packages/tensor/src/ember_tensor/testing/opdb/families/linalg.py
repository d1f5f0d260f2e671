"""Linear algebra: matmul, mm, bmm, einsum, linalg.inv, det, slogdet, logdet, solve,
solve_triangular, cholesky, cholesky_solve, cholesky_inverse, vector_norm, matrix_norm,
matrix_exp, householder_product, the LU family (lu_factor, lu, lu_solve) and the
LAPACK-on-the-host decompositions (qr, svdvals, eigvalsh, eigvals, pinv), in
float32/float64 and complex64/complex128 (Hermitian where real entries are symmetric;
conjugate transposes in the references).

Square operands are well conditioned (`well_conditioned`), so float32 results stay
within a tolerance a few ulps times the condition number allows. The square samples take
each kernel's other paths too: empty batches and 0x0 matrices, a 12x12 matrix (more rows
than a CUDA block's threads), two batch dims, strided and transposed layouts."""
import numpy as np

import ember_tensor as et

from ..core import C64, C128, COMPLEX, F32, F64, NP
from .info import FamilyOpInfo, O, S, XFailOn, floats, well_conditioned

__all__ = ["LINALG_DB"]


def _ref_vector_norm(x, ord=2, dim=None, keepdim=False):
    a = np.abs(x)
    if ord == np.inf:
        return np.max(a, axis=dim, keepdims=keepdim)
    if ord == -np.inf:
        return np.min(a, axis=dim, keepdims=keepdim)
    if ord == 0:
        return np.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    return np.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1 / ord)


def _mh(a):
    """The conjugate transpose of (a batch of) matrices."""
    return np.conj(np.swapaxes(a, -1, -2))


def _ref_cholesky(a, upper=False):
    # NumPy reads the lower triangle; PyTorch's upper=True reads the upper one (the lower
    # one of a^H), which the samples' noise above the diagonal tells apart.
    if upper:
        return _mh(np.linalg.cholesky(_mh(a)))
    return np.linalg.cholesky(a)


def _ref_slogdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign, logabsdet


def _ref_logdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    if np.iscomplexobj(a):
        # PyTorch's complex logdet, logabsdet + log(sign), as its complex add computes it:
        # the second operand times 1 + 0j, so a singular matrix gives -inf + nan j.
        return logabsdet + np.log(sign) * (1 + 0j)
    return np.where(sign < 0, np.nan, logabsdet)  # a negative determinant has no real log


def _is_vector_rhs(a, b):
    """PyTorch's rule: B is a (batch of) vector(s) when 1-d or A's shape without its last dim."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def _ref_solve(a, b, left=True):
    if a.size:
        np.linalg.inv(a)  # PyTorch factors A before anything else: a singular A raises even with no B
    if not left:  # X A = B is A^T X^T = B^T
        return np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    if _is_vector_rhs(a, b):
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _substitute(t, b, lower):
    """Solve t x = b for triangular matrices t by substitution (batches broadcast), so a zero
    on the diagonal gives LAPACK's inf and nan instead of an error."""
    batch = np.broadcast_shapes(t.shape[:-2], b.shape[:-2])
    t = np.broadcast_to(t, batch + t.shape[-2:])
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), np.result_type(t, b, np.float64))
    n = t.shape[-1]
    for i in (range(n) if lower else reversed(range(n))):
        done = slice(0, i) if lower else slice(i + 1, n)
        x[..., i, :] = (x[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, done], x[..., done, :])) / t[..., i, i:i + 1]
    return x


def _ref_solve_triangular(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t - t * np.eye(a.shape[-1]) + np.eye(a.shape[-1])
    if left:
        return _substitute(t, b, lower=not upper)
    return np.swapaxes(_substitute(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), lower=upper), -1, -2)


def _spd_of_factor(factor, upper):
    low = _mh(factor) if upper else factor
    return low @ _mh(low)


def _ref_cholesky_solve(b, factor, upper=False):
    return np.linalg.solve(_spd_of_factor(factor, upper), b)


def _ref_cholesky_inverse(factor, upper=False):
    return np.linalg.inv(_spd_of_factor(factor, upper))


def _solve_triangular(a, b, upper, left=True, unitriangular=False):
    return et.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unitriangular)


def _vector_norm(x, ord=2, dim=None, keepdim=False):
    return et.linalg.vector_norm(x, ord, dim=dim, keepdim=keepdim)


def _matmul_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), (v(4, 2),), name="matrices")
    yield S(v(2, 3, 4, layout="transposed"), (v(4, 5),), name="batched by a matrix, transposed")
    yield S(v(2, 1, 3, 4), (v(3, 4, 2, layout="stepped"),), name="broadcast batches, stepped")
    yield S(v(4), (v(4, 3),), name="vector by matrix")
    yield S(v(3, 4), (v(4),), name="matrix by vector")
    yield S(v(4), (v(4),), name="vectors: 0-d result")
    yield S(v(3, 0), (v(0, 2),), name="empty inner dim")
    yield S(v(4), (v(2, 4, 3),), name="vector by batched matrices")
    yield S(v(33, 17), (v(17, 35, layout="transposed"),), name="past a 16/32 tile in every dim")
    yield S(v(2, 3, 4, layout="stepped"), (v(4),), name="batched matrices by a vector")


def _mm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), (v(4, 2),), name="matrices")
    yield S(v(4, 3, layout="transposed"), (v(3, 5, layout="stepped"),), name="transposed by stepped")
    yield S(v(3, 0), (v(0, 2),), name="empty inner dim")
    yield S(v(17, 33, layout="stepped"), (v(33, 18, layout="transposed"),), name="past a 16/32 tile")


def _einsum(*operands, equation):
    return et.einsum(equation, *operands)


def _ref_einsum(*operands, equation):
    return np.einsum(equation, *operands)


def _einsum_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), (v(4, 2),), {"equation": "ij,jk->ik"}, name="matrix product")
    yield S(v(2, 3, 4, layout="transposed"), (v(2, 4, 5, layout="stepped"),), {"equation": "bij,bjk->bik"},
            name="batched, transposed, stepped")
    yield S(v(4), (v(4),), {"equation": "i,i->"}, name="dot: 0-d")
    yield S(v(3, 3, layout="stepped"), kwargs={"equation": "ii->i"}, name="diagonal")
    yield S(v(2, 3), (v(3, 4), v(4)), {"equation": "ij,jk,k->i"}, name="three operands")
    yield S(v(0, 3), (v(3, 2),), {"equation": "ij,jk->ik"}, name="empty")


def _bmm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(2, 3, 4), (v(2, 4, 5),), name="batches")
    yield S(v(3, 2, 4, layout="transposed"), (v(3, 4, 2, layout="stepped"),), name="transposed, stepped")
    yield S(v(0, 3, 4), (v(0, 4, 2),), name="empty batch")


def _square_samples(spd=False, rhs=False):
    def samples(op, dtype, rng):
        def a(*shape, layout="contiguous"):
            values = well_conditioned(shape, dtype, rng, spd)
            if spd:  # cholesky reads the lower triangle only: what lies above must not count
                values = values + np.triu(floats(shape, dtype, rng), 1).astype(values.dtype)
            return O(values, layout)

        def b(*shape, layout="contiguous"):
            return (O(floats(shape, dtype, rng), layout),) if rhs else ()
        yield S(a(3, 3), b(3, 2), name="matrix")
        yield S(a(2, 4, 4), b(2, 4, 1), name="batched")
        yield S(a(3, 3, layout="transposed"), b(3), name="transposed" + (", vector rhs" if rhs else ""))
        yield S(a(1, 1), b(1, 1), name="1x1")
        yield S(a(0, 0), b(0, 2), name="empty")
        yield S(a(2, 2, 3, 3), b(3, 1), name="two batch dims" + (", broadcast rhs" if rhs else ""))
        yield S(a(2, 3, 3, layout="stepped"), b(2, 3, 2, layout="stepped"), name="stepped")
        yield S(a(0, 3, 3), b(0, 3, 2), name="empty batch")
        yield S(a(2, 0, 0), b(2, 0, 1), name="a batch of 0x0")
        yield S(a(3, 1, 2, 2), b(3, 1, 2, 2), name="batch (3, 1) of 2x2")
        yield S(a(12, 12, layout="transposed"), b(12, 2), name="12x12: more rows than a block's threads")
        if spd:
            yield S(a(2, 3, 3, layout="transposed"), kwargs={"upper": True}, name="upper")
            yield S(a(12, 12, layout="stepped"), kwargs={"upper": True}, name="12x12, stepped, upper")
    return samples


def _solve_samples(op, dtype, rng):
    yield from _square_samples(rhs=True)(op, dtype, rng)

    def a(*shape, layout="contiguous"):
        return O(well_conditioned(shape, dtype, rng), layout)

    def b(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(a(2, 4, 4), (b(2, 4),), name="a batch of vectors")
    yield S(a(2, 3, 3, layout="stepped"), (b(3, 5, layout="transposed"),), name="B broadcast over A's batch")
    yield S(a(1, 3, 3), (b(4, 3, 2),), name="A broadcast over B's batch")
    yield S(a(2, 1, 2, 2, layout="transposed"), (b(3, 2, 1),), name="batch dims broadcast both ways")
    yield S(a(3, 3), (b(2, 3),), {"left": False}, name="X A = B")
    yield S(a(2, 3, 3, layout="transposed"), (b(2, 4, 3, layout="stepped"),), {"left": False}, name="X A = B, batched")
    yield S(a(3, 3), (b(3, 0),), name="no right-hand sides")
    yield S(O(np.zeros((1, 2, 2), NP[dtype])), (b(0, 2, 3),), name="a singular A over an empty batch of B")


# (A shape, B shape, left): square, rectangular B, vectors, batches broadcast, empty.
_TRIANGULAR = [((1, 1), (1, 1), True), ((4, 4), (4, 3), True), ((4, 4), (2, 4), False), ((2, 3, 3), (3, 2), True),
               ((2, 3, 3), (3, 3), False), ((3, 3), (2, 3, 1), True), ((0, 2, 2), (0, 2, 2), True),
               ((0, 0), (0, 3), True), ((2, 1, 3, 3), (4, 3, 2), True)]
_LAYOUTS = ("contiguous", "transposed", "stepped")


def _solve_triangular_samples(op, dtype, rng):
    # Each case takes another (upper, unitriangular) pair and layout, so that all four pairs
    # and all three layouts meet every kernel path; A is full: the other triangle must not count.
    for k, (a_shape, b_shape, left) in enumerate(_TRIANGULAR):
        kwargs = {"upper": k % 2 == 0, "left": left, "unitriangular": k % 4 >= 2}
        yield S(O(well_conditioned(a_shape, dtype, rng), _LAYOUTS[k % 3]),
                (O(floats(b_shape, dtype, rng), _LAYOUTS[(k + 1) % 3]),), kwargs, name=f"{a_shape} by {b_shape}, {kwargs}")
    zero_diagonal = np.array([[2., 0., 0.], [1., 0., 0.], [1., 1., 3.]]).astype(NP[dtype])
    yield S(O(zero_diagonal), (O(np.array([[1., 0.], [2., 0.], [3., -1.]]).astype(NP[dtype])),), {"upper": False},
            name="a zero on the diagonal: inf and nan")
    if dtype is F32:  # B's float64 does not widen A's float32: the result is A's dtype
        yield S(O(well_conditioned((3, 3), dtype, rng)), (O(floats((3, 2), F64, rng)),), {"upper": True},
                name="float64 B")


def _factor_samples(rhs):
    """cholesky_solve's (B, factor) or cholesky_inverse's (factor,): the Cholesky factor of
    an spd matrix, lower or upper, over single, batched and empty shapes."""
    def samples(op, dtype, rng):
        # (batch, n, upper, layout): 12x12 and batches take other product paths with each
        # triangle and layout of the factor.
        cases = [((), 3, False, 0), ((2,), 4, True, 1), ((), 1, False, 2), ((0,), 3, True, 0), ((2,), 0, False, 1),
                 ((3, 1), 2, True, 2), ((), 12, False, 0), ((), 12, True, 1), ((), 12, True, 2), ((), 12, False, 2),
                 ((2,), 4, True, 0), ((2,), 4, False, 2)]
        for k, (batch, n, upper, layout) in enumerate(cases):
            low = np.linalg.cholesky(well_conditioned(batch + (n, n), C128 if dtype.is_complex else F64, rng, spd=True))
            factor = O((_mh(low) if upper else low).astype(NP[dtype]), _LAYOUTS[layout])
            name = f"{batch} of {n}x{n}, upper={upper}, {_LAYOUTS[layout]}"
            if rhs:
                yield S(O(floats(batch + (n, 2), dtype, rng), _LAYOUTS[(layout + k) % 3]), (factor,), {"upper": upper},
                        name=name)
            else:
                yield S(factor, kwargs={"upper": upper}, name=name)
    return samples


def _lu_samples(big):
    """The square samples, a dominant diagonal of mixed signs (a negative determinant) and,
    when `big`, a batch of 40x40 matrices (float64 only: slow on the simulator)."""
    def samples(op, dtype, rng):
        yield from _square_samples()(op, dtype, rng)
        signs = np.where(rng.random(4) < 0.5, -1, 1) * np.eye(4)
        yield S(O((rng.uniform(-1, 1, (2, 4, 4)) + 4 * signs).astype(NP[dtype]), "stepped"),
                name="a dominant diagonal of mixed signs")
        if big and dtype is F64:
            yield S(O(well_conditioned((2, 40, 40), dtype, rng)), name="40x40, batched")
    return samples


def _det_samples(big):
    def samples(op, dtype, rng):
        yield from _lu_samples(big)(op, dtype, rng)
        singular = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 5]], NP[dtype])
        yield S(O(singular), name="singular: 0")
        yield S(O(np.array([[0, 1], [1, 0]], singular.dtype)), name="a swap: -1")
        # Ties in |value| pick the first row (LAPACK's choice); zeros force swaps; singular
        # gives 0 (sign 0, log -inf); a negative determinant has no real log.
        pivots = [[[0, 1], [1, 0]], [[2, 1], [-2, 3]], [[1, 2], [2, 4]], [[0, 0], [0, 0]], [[-3, 0], [0, 1]]]
        yield S(O(np.array(pivots, singular.dtype)), name="pivots: ties, swaps, singular, negative")
    return samples


def _ref_lu_factor(a):
    """LAPACK's getrf: partial pivoting on the first largest |x| of each column (|re| + |im|
    for complex numbers, LAPACK's cabs1), a zero pivot left in place; int32 pivots, 1-based."""
    lu = np.array(a, copy=True)
    m, n = lu.shape[-2:]
    k = min(m, n)
    pivots = np.zeros(lu.shape[:-2] + (k,), np.int32)
    for batch in np.ndindex(lu.shape[:-2]):
        x = lu[batch]
        for j in range(k):
            column = x[j:, j]
            p = j + int(np.argmax(np.abs(column.real) + np.abs(column.imag)))
            pivots[batch + (j,)] = p + 1
            x[[j, p]] = x[[p, j]]
            if x[j, j] != 0:
                x[j + 1:, j] /= x[j, j]
            x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    return lu, pivots


def _ref_lu(a):
    """(P, L, U) with A = P L U, from getrf's factors."""
    lu, pivots = _ref_lu_factor(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    P = np.zeros(a.shape[:-2] + (m, m), a.dtype)
    for batch in np.ndindex(a.shape[:-2]):
        order = np.arange(m)
        for j, p in enumerate(pivots[batch] - 1):
            order[[j, p]] = order[[p, j]]
        P[batch + (order, np.arange(m))] = 1
    L = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=a.dtype)
    return P, L, np.triu(lu[..., :k, :])


def _lu_factor_solve(A, B, *, left=True, adjoint=False):
    return et.linalg.lu_solve(*et.linalg.lu_factor(A), B, left=left, adjoint=adjoint)


def _ref_lu_factor_solve(A, B, *, left=True, adjoint=False):
    return _ref_solve(_mh(A) if adjoint else A, B, left=left)


def _lu_family_samples(rectangular, rhs=False):
    """The square samples of inv (with a right-hand side for lu_solve, and its left and
    adjoint forms) and, for lu, wide, tall and batched rectangular matrices."""
    def samples(op, dtype, rng):
        if rhs:  # (B is a matrix or a batch of them: lu_solve takes no vectors)
            def a(*shape, layout="contiguous"):
                return O(well_conditioned(shape, dtype, rng), layout)

            def b(*shape, layout="contiguous"):
                return O(floats(shape, dtype, rng), layout)
            yield S(a(3, 3), (b(3, 2),), name="matrix")
            yield S(a(2, 4, 4, layout="transposed"), (b(2, 4, 1),), name="batched, transposed")
            yield S(a(3, 3), (b(2, 3, 2, layout="stepped"),), name="B's batch broadcast, stepped")
            yield S(a(0, 0), (b(0, 2),), name="empty")
            yield S(a(12, 12), (b(12, 3),), name="12x12")
            a = well_conditioned((2, 3, 3), dtype, rng)
            yield S(O(a, "transposed"), (O(floats((2, 3, 2), dtype, rng), "stepped"),), {"adjoint": True},
                    name="adjoint")
            yield S(O(a), (O(floats((2, 4, 3), dtype, rng)),), {"left": False}, name="X A = B")
            yield S(O(a, "stepped"), (O(floats((2, 4, 3), dtype, rng)),), {"left": False, "adjoint": True},
                    name="X A^H = B")
            return
        yield from _lu_samples(big=False)(op, dtype, rng)
        if rectangular:
            yield S(O(floats((3, 5), dtype, rng)), name="wide")
            yield S(O(floats((5, 3), dtype, rng), "transposed"), name="tall, transposed")
            yield S(O(floats((2, 4, 2), dtype, rng), "stepped"), name="batched tall, stepped")
            yield S(O(floats((0, 3), dtype, rng)), name="no rows")
    return samples


def _ref_matrix_norm(A, ord="fro", keepdim=False):
    return np.linalg.norm(A, ord, axis=(-2, -1), keepdims=keepdim)


def _matrix_norm(A, ord="fro", keepdim=False):
    return et.linalg.matrix_norm(A, ord, keepdim=keepdim)


_MATRIX_NORM_ORDS = ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


def _matrix_norm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    for k, ord in enumerate(_MATRIX_NORM_ORDS):
        yield S(v(3, 4, layout=_LAYOUTS[k % 3]), kwargs={"ord": ord}, name=f"{ord}")
        yield S(v(2, 4, 3, layout=_LAYOUTS[(k + 1) % 3]), kwargs={"ord": ord, "keepdim": True},
                name=f"{ord}, batched, keepdim")
    yield S(v(0, 2, 3), name="empty batch")


def _ref_matrix_exp(A):
    """exp(A) by scaling and squaring a 24-term Taylor series (float64 / complex128)."""
    norm = np.abs(A).sum(axis=-2).max(initial=0.0)
    squarings = max(0, int(np.ceil(np.log2(norm))) + 1) if norm > 0.5 else 0
    X = A / 2.0 ** squarings
    term = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape).copy()
    result = term.copy()
    for k in range(1, 24):
        term = term @ X / k
        result = result + term
    for _ in range(squarings):
        result = result @ result
    return result


def _matrix_exp_samples(op, dtype, rng):
    def v(*shape, layout="contiguous", scale=1.0):
        return O((floats(shape, dtype, rng) * scale).astype(NP[dtype]), layout)
    yield S(v(3, 3), name="matrix")
    yield S(v(2, 4, 4, layout="transposed", scale=0.2), name="batched, small, transposed")
    yield S(v(2, 3, 3, layout="stepped", scale=2.0), name="stepped, large: squarings")
    yield S(v(1, 1), name="1x1")
    yield S(v(0, 0), name="empty")


def _ref_householder_product(A, tau):
    """Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i column i of A below the diagonal
    with a 1 on it."""
    m, n = A.shape[-2:]
    Q = np.broadcast_to(np.eye(m, n, dtype=np.result_type(A, tau)), A.shape[:-2] + (m, n)).copy()
    for i in reversed(range(tau.shape[-1])):
        v = np.array(A[..., :, i])
        v[..., :i] = 0
        v[..., i] = 1
        Q = Q - tau[..., i, None, None] * v[..., :, None] * (np.conj(v)[..., None, :] @ Q)
    return Q


def _householder_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng, -1, 1), layout)
    yield S(v(4, 3), (v(3),), name="tall, every reflector")
    yield S(v(2, 5, 3, layout="transposed"), (v(2, 2, layout="stepped"),), name="batched, fewer reflectors")
    yield S(v(3, 3, layout="stepped"), (v(0),), name="no reflectors: the identity's columns")
    yield S(v(0, 4, 2), (v(0, 1),), name="empty batch")


def _ref_qr(A):
    return np.linalg.qr(A) if A.size else (np.zeros(A.shape[:-1] + (min(A.shape[-2:]),), A.dtype),
                                           np.zeros(A.shape[:-2] + (min(A.shape[-2:]), A.shape[-1]), A.dtype))


def _ref_svdvals(A):
    return np.linalg.svd(A, compute_uv=False)


def _rectangular_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(5, 3), name="tall")
    yield S(v(3, 5, layout="transposed"), name="wide, transposed")
    yield S(v(2, 4, 3, layout="stepped"), name="batched, stepped")
    yield S(v(0, 3, 2), name="empty batch")


def _eigvalsh_samples(op, dtype, rng):
    yield S(O(well_conditioned((4, 4), dtype, rng, spd=True)), name="matrix, lower")
    yield S(O(well_conditioned((2, 3, 3), dtype, rng, spd=True), "transposed"), kwargs={"UPLO": "U"},
            name="batched, transposed, upper")
    yield S(O(well_conditioned((0, 2, 2), dtype, rng, spd=True)), name="empty batch")


def _eigvals_samples(op, dtype, rng):
    # Random matrices with well separated eigenvalues: a dominant, distinct diagonal.
    def a(*shape, layout="contiguous"):
        spread = np.diag(np.arange(1, shape[-1] + 1) * 3.0)
        return O((floats(shape, dtype, rng, -1, 1) + spread).astype(NP[dtype]), layout)
    yield S(a(4, 4), name="matrix")
    yield S(a(2, 3, 3, layout="transposed"), name="batched, transposed")
    yield S(a(0, 2, 2), name="empty batch")


def _vector_norm_samples(op, dtype, rng):
    def v(*shape, layout="contiguous"):
        return O(floats(shape, dtype, rng), layout)
    yield S(v(3, 4), name="all, 2-norm")
    yield S(v(4, 3, layout="transposed"), kwargs={"ord": 1, "dim": 0}, name="transposed, 1-norm, dim 0")
    yield S(v(2, 3, 4, layout="stepped"), kwargs={"ord": np.inf, "dim": (0, 2), "keepdim": True},
            name="stepped, inf-norm, two dims, keepdim")
    yield S(v(3, 5), kwargs={"ord": 3, "dim": -1}, name="3-norm")
    yield S(O(np.array([[0, 1.5], [0, 0]]).astype(floats((), dtype, rng).dtype)), kwargs={"ord": 0},
            name="0-norm counts nonzeros")
    yield S(v(), name="0-d")
    yield S(v(0, 3), kwargs={"dim": 1}, name="empty")
    inf = np.array([[np.inf, 1.0, -2.0], [0.5, -np.inf, 0.0]]).astype(floats((), dtype, rng).dtype)
    for ord in (2, 1, np.inf, -np.inf, 0):
        yield S(O(inf), kwargs={"ord": ord, "dim": 1}, name=f"inf, {ord}-norm")


# Inverting, factoring and solving lose about cond(A) ulps: float32 needs more than a sum.
_SOLVER_TOL = {F32: (1e-4, 1e-5), C64: (1e-4, 1e-5)}
# Every entry samples complex64/complex128 too (PyTorch has them all for complex numbers).
_DTYPES = (F32, F64) + COMPLEX
# Known gaps of the CUDA backend, expected failures of the device comparison (the op
# computes right, but on host copies, which the comparison refuses):
_COMPLEX_ON_HOST = (XFailOn("cuda", "complex matrices go through the host's LAPACK on CUDA: the device kernels "
                                    "compute in float32/float64 only", COMPLEX),)
# SVD, eigh, QR, eig and pinv run NumPy's LAPACK on host copies on CUDA (README, "Where
# each op runs"); matrix norms through them too.
_SVD_NORMS = tuple(name for ord in ("nuc", 2, -2) for name in (f"{ord}", f"{ord}, batched, keepdim"))
_ON_HOST = (XFailOn("cuda", "qr, svd, eigh, eig and pinv compute on host copies on CUDA (NumPy's LAPACK)"),)
_LU_ON_HOST = (XFailOn("cuda", "the LU family (lu_factor, lu, lu_solve) factors on host copies on CUDA "
                               "(_backends._families.GAPS)"),)
# inv, solve and cholesky read back the factorisation's info flag on CUDA, to raise the
# CPU's error for a singular (or not positive-definite) matrix, as PyTorch's do.
_INFO = {"tol": _SOLVER_TOL, "reads_scalars": True}
LINALG_DB = [
    FamilyOpInfo("matmul", "linalg", et.matmul, np.matmul, _DTYPES, sample_inputs_func=_matmul_samples),
    FamilyOpInfo("mm", "linalg", et.mm, np.matmul, _DTYPES, sample_inputs_func=_mm_samples),
    FamilyOpInfo("bmm", "linalg", et.bmm, np.matmul, _DTYPES, sample_inputs_func=_bmm_samples),
    FamilyOpInfo("einsum", "linalg", _einsum, _ref_einsum, _DTYPES, sample_inputs_func=_einsum_samples),
    FamilyOpInfo("linalg.inv", "linalg", et.linalg.inv, np.linalg.inv, _DTYPES,
                 sample_inputs_func=_lu_samples(big=True), xfails=_COMPLEX_ON_HOST, **_INFO),
    FamilyOpInfo("linalg.det", "linalg", et.linalg.det, np.linalg.det, _DTYPES,
                 sample_inputs_func=_det_samples(big=True), tol=_SOLVER_TOL, xfails=_COMPLEX_ON_HOST),
    FamilyOpInfo("linalg.slogdet", "linalg", et.linalg.slogdet, _ref_slogdet, _DTYPES,
                 sample_inputs_func=_det_samples(big=False), tol=_SOLVER_TOL, xfails=_COMPLEX_ON_HOST),
    FamilyOpInfo("logdet", "linalg", et.logdet, _ref_logdet, _DTYPES, sample_inputs_func=_det_samples(big=False),
                 tol=_SOLVER_TOL, xfails=_COMPLEX_ON_HOST),
    FamilyOpInfo("linalg.solve", "linalg", et.linalg.solve, _ref_solve, _DTYPES, sample_inputs_func=_solve_samples,
                 xfails=_COMPLEX_ON_HOST, **_INFO),
    # Substitution needs no flag: a zero on the diagonal gives inf and nan, as LAPACK's does.
    FamilyOpInfo("linalg.solve_triangular", "linalg", _solve_triangular, _ref_solve_triangular, _DTYPES,
                 sample_inputs_func=_solve_triangular_samples, tol=_SOLVER_TOL, xfails=_COMPLEX_ON_HOST),
    FamilyOpInfo("linalg.cholesky", "linalg", et.linalg.cholesky, _ref_cholesky, _DTYPES,
                 sample_inputs_func=_square_samples(spd=True), xfails=_COMPLEX_ON_HOST, **_INFO),
    FamilyOpInfo("cholesky_solve", "linalg", et.cholesky_solve, _ref_cholesky_solve, _DTYPES,
                 sample_inputs_func=_factor_samples(rhs=True), xfails=_COMPLEX_ON_HOST, **_INFO),
    FamilyOpInfo("cholesky_inverse", "linalg", et.cholesky_inverse, _ref_cholesky_inverse, _DTYPES,
                 sample_inputs_func=_factor_samples(rhs=False), xfails=_COMPLEX_ON_HOST, **_INFO),
    FamilyOpInfo("linalg.vector_norm", "linalg", _vector_norm, _ref_vector_norm, _DTYPES,
                 sample_inputs_func=_vector_norm_samples),
    FamilyOpInfo("linalg.matrix_norm", "linalg", _matrix_norm, _ref_matrix_norm, _DTYPES,
                 sample_inputs_func=_matrix_norm_samples, tol=_SOLVER_TOL,
                 xfails=(XFailOn("cuda", "the nuclear and spectral norms take the SVD on host copies on CUDA",
                                 samples=_SVD_NORMS),)),
    # The norms that choose the number of squarings are read back (PyTorch's CUDA kernel
    # also reads them to pick its degree).
    FamilyOpInfo("linalg.matrix_exp", "linalg", et.linalg.matrix_exp, _ref_matrix_exp, _DTYPES,
                 sample_inputs_func=_matrix_exp_samples, tol=_SOLVER_TOL, reads_scalars=True, xfails=_COMPLEX_ON_HOST),
    FamilyOpInfo("linalg.householder_product", "linalg", et.linalg.householder_product, _ref_householder_product,
                 _DTYPES, sample_inputs_func=_householder_samples),
    FamilyOpInfo("linalg.qr", "linalg", et.linalg.qr, _ref_qr, _DTYPES, sample_inputs_func=_rectangular_samples,
                 tol=_SOLVER_TOL, xfails=_ON_HOST),
    FamilyOpInfo("linalg.svdvals", "linalg", et.linalg.svdvals, _ref_svdvals, _DTYPES,
                 sample_inputs_func=_rectangular_samples, tol=_SOLVER_TOL, xfails=_ON_HOST),
    FamilyOpInfo("linalg.pinv", "linalg", et.linalg.pinv, np.linalg.pinv, _DTYPES,
                 sample_inputs_func=_rectangular_samples, tol=_SOLVER_TOL, xfails=_ON_HOST),
    FamilyOpInfo("linalg.eigvalsh", "linalg", et.linalg.eigvalsh, lambda A, UPLO="L": np.linalg.eigvalsh(A, UPLO),
                 _DTYPES, sample_inputs_func=_eigvalsh_samples, tol=_SOLVER_TOL, xfails=_ON_HOST),
    FamilyOpInfo("linalg.eigvals", "linalg", et.linalg.eigvals, lambda A: np.linalg.eigvals(A).astype(complex), _DTYPES,
                 sample_inputs_func=_eigvals_samples, tol=_SOLVER_TOL, xfails=_ON_HOST),
    FamilyOpInfo("linalg.lu_factor", "linalg", et.linalg.lu_factor, _ref_lu_factor, _DTYPES,
                 sample_inputs_func=_lu_family_samples(rectangular=False), tol=_SOLVER_TOL, xfails=_LU_ON_HOST),
    FamilyOpInfo("linalg.lu", "linalg", et.linalg.lu, _ref_lu, _DTYPES,
                 sample_inputs_func=_lu_family_samples(rectangular=True), tol=_SOLVER_TOL, xfails=_LU_ON_HOST),
    # lu_factor then lu_solve (left, right and adjoint), against a solve with A.
    FamilyOpInfo("lu_factor+lu_solve", "linalg", _lu_factor_solve, _ref_lu_factor_solve, _DTYPES,
                 sample_inputs_func=_lu_family_samples(rectangular=False, rhs=True), tol=_SOLVER_TOL,
                 xfails=_LU_ON_HOST),
]
