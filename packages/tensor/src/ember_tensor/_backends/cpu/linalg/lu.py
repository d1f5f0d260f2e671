"""LU with partial pivoting, ``A = P L U``, in LAPACK's getrf conventions (PyTorch's):
one m x n array holding unit-lower L below the diagonal and U on and above it, 1-based
int32 pivots (row i was swapped with row pivots[i] - 1, in order), and an int32 `info`
per matrix (the 1-based index of the first exactly-zero pivot, or 0).

NumPy exposes no getrf, so the elimination runs here: real float32/float64 matrices in a
Numba kernel (`kernels/lu.py`) whose trailing updates round once, as LAPACK's on a CPU
with fused multiply-adds (PyTorch's MKL) — the last bit that decides whether a singular
matrix's pivot is zero — and complex ones one column at a time over the whole batch at
once (O(min(m, n)) NumPy steps of batched rank-1 updates). Right for the small and
medium matrices these ops see, not a blocked LAPACK for large ones.
"""
import numpy as np

from ...lazy import lazy

K = lazy("cpu.kernels.lu")  # Numba loads on first use

__all__ = ["lu_factor", "lu_pivots_to_permutation"]


def _pivot_size(column):
    # LAPACK's i?amax: |x| for reals, |re| + |im| (cabs1) for complex numbers.
    if np.iscomplexobj(column):
        return np.abs(column.real) + np.abs(column.imag)
    return np.abs(column)


def lu_factor(a):
    """(LU, pivots, info) of each m x n matrix of `a` (batch shape kept)."""
    batch_shape, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    count = int(np.prod(batch_shape))  # (not -1: ambiguous for an empty matrix)
    lu = np.array(a, dtype=a.dtype).reshape((count, m, n))
    pivots = np.zeros((count, k), np.int32)
    info = np.zeros(count, np.int32)
    if lu.dtype in (np.float32, np.float64):
        K.lu_in_place(lu, pivots, info)
        return lu.reshape(batch_shape + (m, n)), pivots.reshape(batch_shape + (k,)), info.reshape(batch_shape)
    rows = np.arange(count)
    for j in range(k):
        # The first largest entry on or below the diagonal, as i?amax picks it.
        p = j + np.argmax(_pivot_size(lu[:, j:, j]), axis=1)
        pivots[:, j] = p + 1
        swapped = p != j
        if swapped.any():
            b, pb = rows[swapped], p[swapped]
            top = lu[b, j, :].copy()
            lu[b, j, :] = lu[b, pb, :]
            lu[b, pb, :] = top
        diagonal = lu[:, j, j]
        zero = diagonal == 0
        info[(info == 0) & zero] = j + 1
        # A zero pivot leaves its column as it is (LAPACK skips the scaling, and with
        # partial pivoting the column is all zeros then).
        lu[:, j + 1:, j] /= np.where(zero, 1, diagonal)[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j, None] * lu[:, j, None, j + 1:]
    return (lu.reshape(batch_shape + (m, n)), pivots.reshape(batch_shape + (k,)),
            info.reshape(batch_shape))


def lu_pivots_to_permutation(pivots, m, dtype):
    """The m x m permutation matrices P (``A = P L U``) of getrf's 1-based `pivots`."""
    batch_shape, k = pivots.shape[:-1], pivots.shape[-1]
    count = int(np.prod(batch_shape))
    flat = pivots.reshape((count, k)).astype(np.int64) - 1
    if flat.size and (flat.min() < 0 or flat.max() >= m):
        return None
    perm = np.broadcast_to(np.arange(m), (count, m)).copy()
    rows = np.arange(count)
    for i in range(k):
        target = flat[:, i]
        held = perm[rows, i].copy()
        perm[rows, i] = perm[rows, target]
        perm[rows, target] = held
    # Row i of L U is row perm[i] of A: P has a one at (perm[i], i).
    P = np.zeros((count, m, m), dtype)
    P[rows[:, None], perm, np.arange(m)[None, :]] = 1
    return P.reshape(batch_shape + (m, m))
