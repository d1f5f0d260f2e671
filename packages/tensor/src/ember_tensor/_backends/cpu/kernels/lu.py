"""The Numba kernel of LU with partial pivoting for real float matrices (`linalg/lu.py`).

Why a kernel and not NumPy's batched rank-1 updates: LAPACK's elimination, the one
PyTorch calls (MKL's getrf), updates each trailing element as ``a - l * u`` rounded once
— a fused multiply-add on every CPU since 2013 — and so does NVVM for ember's CUDA LU;
NumPy rounds the product and then the difference. The results differ in the last bit,
and at a singular matrix that bit is the difference between an exact zero pivot and a
tiny one: ``[[1, 2, 0], [2, 4, 1], [3, 6, 5]]``'s second pivot is 4 - fl(2/3) * 6, which
is 0 rounded twice and 2**-52 rounded once, and PyTorch's logdet gradient there is
~4e16, not inf. Here each update is one `fma`.

Pivots: the first entry of largest magnitude on or below the diagonal (i?amax's choice),
a NaN taken as soon as it is met (NumPy's argmax of the magnitudes, as before). A zero
pivot skips the column's scaling (LAPACK's getf2) and records `info`.
"""
from numba import njit, types
from numba.extending import overload

from . import exp32 as _exp32_module
from .cache_keys import key_by_sources
from .exp32 import _fma as _fma64
from .exp32 import _fma32

__all__ = ["lu_in_place"]


def _fused_multiply_add(a, b, c):
    """a * b + c rounded once (the Python body is never called: see the overload)."""
    return a * b + c


@overload(_fused_multiply_add)
def _fused_multiply_add_overload(a, b, c):
    if a == types.float32:
        return lambda a, b, c: _fma32(a, b, c)
    return lambda a, b, c: _fma64(a, b, c)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=False)
def lu_in_place(lu, pivots, info):
    """Factor each matrix of the C-contiguous (count, m, n) float array `lu` in place
    (unit-lower L below the diagonal, U on and above it), writing 1-based int32 `pivots`
    (count, min(m, n)) and `info` (count,): the 1-based index of the first exactly-zero
    pivot, or 0."""
    count, m, n = lu.shape
    k = min(m, n)
    for b in range(count):
        a = lu[b]
        info[b] = 0
        for j in range(k):
            p = j
            best = abs(a[j, j])
            if best == best:
                for i in range(j + 1, m):
                    size = abs(a[i, j])
                    if size != size:
                        p = i
                        break
                    if size > best:
                        best = size
                        p = i
            pivots[b, j] = p + 1
            if p != j:
                for c in range(n):
                    held = a[j, c]
                    a[j, c] = a[p, c]
                    a[p, c] = held
            d = a[j, j]
            if d == 0:
                if info[b] == 0:
                    info[b] = j + 1
            else:
                for i in range(j + 1, m):
                    a[i, j] = a[i, j] / d
            for i in range(j + 1, m):
                minus_l = -a[i, j]
                for c in range(j + 1, n):
                    a[i, c] = _fused_multiply_add(minus_l, a[j, c], a[i, c])


# Last, once the kernel is defined: it inlines exp32.py's FMA intrinsics.
key_by_sources(globals().values(), [_exp32_module.__file__])
