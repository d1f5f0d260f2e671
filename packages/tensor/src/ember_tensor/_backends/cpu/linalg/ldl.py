"""LDL^T (LDL^H) factorization with Bunch-Kaufman pivoting, in LAPACK's sytrf / hetrf
conventions for the lower triangle (PyTorch's), and its solve (sytrs / hetrs).

NumPy has no sytrf, so this is the unblocked algorithm of LAPACK's ?sytf2: at column k
a 1 x 1 pivot when the diagonal is large enough (alpha = (1 + sqrt(17)) / 8 of the
column's largest entry), else a symmetric row-and-column interchange and a 1 x 1 or
2 x 2 pivot. The compact result holds L's multipliers below the diagonal and D's blocks
on it (a 2 x 2 block's off-diagonal entry at [k + 1, k]); pivots are 1-based int32,
both entries of a 2 x 2 block negative (-p: rows k + 1 and p - 1 were swapped). LAPACK's
blocked sytrf takes the same pivoting decisions, so the factors agree with PyTorch's up
to rounding (and ties between equally large entries). One matrix at a time: the
pivoting decisions differ from matrix to matrix.
"""
import math

import numpy as np

__all__ = ["ldl_factor", "ldl_solve"]

_ALPHA = (1 + math.sqrt(17)) / 8


def _size(x):
    # LAPACK's cabs1 for complex numbers, |x| for reals.
    if np.iscomplexobj(x):
        return np.abs(np.real(x)) + np.abs(np.imag(x))
    return np.abs(x)


def _factor_one(A, hermitian):
    """Factor the n x n array A in place (its lower triangle); (pivots, info)."""
    n = A.shape[0]
    conj = np.conj if hermitian and np.iscomplexobj(A) else (lambda x: x)
    diag_size = (lambda x: abs(x.real)) if hermitian and np.iscomplexobj(A) else _size
    pivots = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = diag_size(A[k, k])
        imax, colmax = k, 0.0
        if k < n - 1:
            imax = k + 1 + int(np.argmax(_size(A[k + 1:, k])))
            colmax = _size(A[imax, k])
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            info = info or k + 1  # a zero column: D[k, k] = 0, nothing to eliminate
            kp = k
            if hermitian:
                A[k, k] = A[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                # The largest off-diagonal entry of row/column imax.
                rowmax = _size(A[imax, k:imax]).max()
                if imax < n - 1:
                    rowmax = max(rowmax, _size(A[imax + 1:, imax]).max())
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_size(A[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _interchange(A, k, kk, kp, kstep, conj)
            if kstep == 1:
                _eliminate_1x1(A, k, hermitian, conj)
            else:
                _eliminate_2x2(A, k, hermitian, conj)
        if kstep == 1:
            pivots[k] = kp + 1
        else:
            pivots[k] = pivots[k + 1] = -(kp + 1)
        k += kstep
    return pivots, info


def _interchange(A, k, kk, kp, kstep, conj):
    """Swap rows and columns kk and kp of the trailing lower triangle A[k:, k:]."""
    A[kp + 1:, [kk, kp]] = A[kp + 1:, [kp, kk]]
    between = A[kk + 1:kp, kk].copy()
    A[kk + 1:kp, kk] = conj(A[kp, kk + 1:kp])
    A[kp, kk + 1:kp] = conj(between)
    A[kp, kk] = conj(A[kp, kk])
    A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
    if kstep == 2:
        A[k + 1, k], A[kp, k] = A[kp, k], A[k + 1, k]


def _eliminate_1x1(A, k, hermitian, conj):
    if k == A.shape[0] - 1:
        return
    d = A[k, k].real if hermitian else A[k, k]
    x = A[k + 1:, k].copy()
    A[k + 1:, k + 1:] -= np.outer(x / d, conj(x))
    A[k + 1:, k] = x / d


def _eliminate_2x2(A, k, hermitian, conj):
    """Eliminate below the 2 x 2 pivot E = A[k:k+2, k:k+2]: the multipliers are
    W = A[k+2:, k:k+2] E^-1, written with the scalings of LAPACK's sytf2 / hetf2."""
    n = A.shape[0]
    if k >= n - 2:
        return
    col_k, col_k1 = A[k + 2:, k].copy(), A[k + 2:, k + 1].copy()
    if hermitian and np.iscomplexobj(A):
        # hetf2 scales by |E[1, 0]| and keeps its phase apart.
        d = abs(A[k + 1, k])
        d11, d22 = A[k + 1, k + 1].real / d, A[k, k].real / d
        d21 = A[k + 1, k] / d
        scale = 1 / (d11 * d22 - 1) / d
        wk = scale * (d11 * col_k - d21 * col_k1)
        wkp1 = scale * (d22 * col_k1 - np.conj(d21) * col_k)
    else:
        d21 = A[k + 1, k]
        d11, d22 = A[k + 1, k + 1] / d21, A[k, k] / d21
        scale = 1 / (d11 * d22 - 1) / d21
        wk = scale * (d11 * col_k - col_k1)
        wkp1 = scale * (d22 * col_k1 - col_k)
    A[k + 2:, k + 2:] -= np.outer(col_k, conj(wk)) + np.outer(col_k1, conj(wkp1))
    A[k + 2:, k], A[k + 2:, k + 1] = wk, wkp1


def ldl_factor(a, hermitian):
    """(LD, pivots, info) of each symmetric (Hermitian when `hermitian`) matrix of `a`,
    reading its lower triangle; LD's strict upper triangle is zero; info is the 1-based
    index of the first zero diagonal block of D, or 0."""
    batch_shape, n = a.shape[:-2], a.shape[-1]
    matrices = np.array(a, dtype=a.dtype).reshape((-1, n, n))
    pivots = np.zeros((matrices.shape[0], n), np.int32)
    info = np.zeros(matrices.shape[0], np.int32)
    for index, matrix in enumerate(matrices):
        pivots[index], info[index] = _factor_one(matrix, hermitian)
    if hermitian and np.iscomplexobj(matrices):
        idx = np.arange(n)
        matrices[:, idx, idx] = matrices[:, idx, idx].real
    return (np.tril(matrices).reshape(batch_shape + (n, n)), pivots.reshape(batch_shape + (n,)),
            info.reshape(batch_shape))


def _solve_one(A, pivots, B, hermitian):
    """Overwrite B (n x k) with the solution of L D L^T X = B (L D L^H when `hermitian`)."""
    n = A.shape[0]
    conj = np.conj if hermitian and np.iscomplexobj(A) else (lambda x: x)
    k = 0
    while k < n:  # L D Y = B
        if pivots[k] > 0:
            kp = pivots[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            B[k + 1:] -= np.outer(A[k + 1:, k], B[k])
            B[k] /= A[k, k]
            k += 1
        else:
            kp = -pivots[k] - 1
            if kp != k + 1:
                B[[k + 1, kp]] = B[[kp, k + 1]]
            B[k + 2:] -= np.outer(A[k + 2:, k], B[k]) + np.outer(A[k + 2:, k + 1], B[k + 1])
            off = A[k + 1, k]
            akm1, ak = A[k, k] / conj(off), A[k + 1, k + 1] / off
            denom = akm1 * ak - 1
            bkm1, bk = B[k] / conj(off), B[k + 1] / off
            B[k], B[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H)
        if pivots[k] > 0:
            B[k] -= conj(A[k + 1:, k]) @ B[k + 1:]
            kp = pivots[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            k -= 1
        else:
            B[k] -= conj(A[k + 1:, k]) @ B[k + 1:]
            B[k - 1] -= conj(A[k + 1:, k - 1]) @ B[k + 1:]
            kp = -pivots[k] - 1
            if kp != k:
                B[[k, kp]] = B[[kp, k]]
            k -= 2


def ldl_solve(ld, pivots, b, hermitian):
    """X with A @ X = B for each compact LDL factorization (`ld`, `pivots`) of the
    broadcast batch; `b` holds n x k right-hand sides."""
    n = ld.shape[-1]
    batch = np.broadcast_shapes(ld.shape[:-2], pivots.shape[:-1], b.shape[:-2])
    ld = np.broadcast_to(ld, batch + (n, n)).reshape((-1, n, n))
    pivots = np.broadcast_to(pivots, batch + (n,)).reshape((-1, n))
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(ld, b)).reshape((-1,) + b.shape[-2:])
    for A, p, B in zip(ld, pivots, x):
        _solve_one(A, p, B, hermitian)
    return x.reshape(batch + b.shape[-2:])
