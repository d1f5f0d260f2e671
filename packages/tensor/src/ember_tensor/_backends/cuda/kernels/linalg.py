"""Numba CUDA kernels of the dense solvers: LU with partial pivoting, Cholesky,
triangular solves, row interchanges and determinants from an LU factor.

Launched by `ember_tensor._backends.cuda.linalg`, which hands every kernel C-contiguous flat
float32/float64 buffers holding a batch of n x n matrices (and n x k right-hand sides),
copies it owns: the factorizations and solves work in place. Two launch shapes:

  matrix kernels   one thread block per matrix (blocks stride over the batch); the
                   block's threads share each elimination step (rows, columns or the
                   trailing submatrix) and syncthreads() separates the steps. The
                   pivot search (a block-wide argmax) and Cholesky's stop flag go
                   through dynamic shared memory (`cuda.shared.array(0, ...)`: see
                   `_backends.cuda.kernels.rows` for why not a static one under the simulator), sized
                   by the launch: 2 * blockDim.x + 1 float64s. The block size is a
                   power of two (the argmax merges a halving tree).
  flat kernels     grid-stride loops, one matrix (or right-hand-side column) per step.

The factors work in global memory, in the storage dtype (as LAPACK's getrf/potrf do);
this suits the small batched matrices ember targets, and a blocked shared-memory
version for large n is future work. Errors cannot be raised in a kernel: `info[m]`
takes LAPACK's value for matrix m (the 1-based zero pivot / failing minor, else 0),
and `first_bad[0]` the smallest failing batch index (atomic min), the one int64 the
wrapper reads back to raise PyTorch's error.

Under the simulator device code runs as Python, where x / 0.0 and log(0.0) raise:
`divide` and the determinant kernel test for zeros so both give IEEE's inf / nan.
"""
import math

from numba import cuda, float64

__all__ = ["lu_factor", "cholesky_factor", "triangular_solve", "apply_pivots", "det_from_lu",
           "slogdet_from_lu"]

INF = math.inf
NAN = math.nan


@cuda.jit(device=True)
def divide(num, den):
    """num / den with IEEE results for a zero denominator (inf with the right sign, 0/0 nan)."""
    if den != 0:
        return num / den
    if num != num or num == 0:
        return NAN
    positive = (num > 0) == (math.copysign(1.0, den) > 0)
    return INF if positive else -INF


@cuda.jit(device=True)
def pivot_row(a, base, n, k, scratch):
    """(row, |value|) of LAPACK idamax's choice in column k, rows k..n-1, for every thread:
    the first row of the largest |value|; NaNs are passed over unless the diagonal one
    is NaN (idamax's `>` never beats a NaN maximum), which is then chosen."""
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    diagonal = a[base + k * n + k]
    best = -1.0
    row = n
    for i in range(k + tid, n, threads):  # rows ascend: a thread keeps its first maximum
        value = abs(a[base + i * n + k])
        if value > best:
            best = value
            row = i
    scratch[tid] = best
    scratch[threads + tid] = row
    cuda.syncthreads()
    width = threads // 2
    while width > 0:
        if tid < width:
            other = scratch[tid + width]
            other_row = scratch[threads + tid + width]
            if other > scratch[tid] or (other == scratch[tid] and other_row < scratch[threads + tid]):
                scratch[tid] = other
                scratch[threads + tid] = other_row
        cuda.syncthreads()
        width //= 2
    best = scratch[0]
    row = int(scratch[threads])
    if diagonal != diagonal:
        best = NAN
        row = k
    return row, best


@cuda.jit
def lu_factor(a, pivots, info, first_bad, n, batch):
    """In-place LU with partial pivoting of each n x n matrix (LAPACK getrf's result).

    pivots[m * n + k] is the row swapped with row k at step k (0-based). The pivot is
    the first largest |value| of the column, as LAPACK's idamax (and PyTorch) choose.
    """
    scratch = cuda.shared.array(0, float64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    for m in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        base = m * n * n
        for k in range(n):
            p, best = pivot_row(a, base, n, k, scratch)
            if tid == 0:
                pivots[m * n + k] = p
                if best == 0 and info[m] == 0:
                    info[m] = k + 1
            if p != k:  # swap whole rows, L part included, as getrf does
                for j in range(tid, n, threads):
                    held = a[base + k * n + j]
                    a[base + k * n + j] = a[base + p * n + j]
                    a[base + p * n + j] = held
            cuda.syncthreads()
            pivot = a[base + k * n + k]
            rows = n - k - 1
            if pivot != 0:  # a zero pivot means a zero column below it: nothing to eliminate
                for i in range(k + 1 + tid, n, threads):
                    a[base + i * n + k] /= pivot
                cuda.syncthreads()
                for idx in range(tid, rows * rows, threads):
                    i = k + 1 + idx // rows
                    j = k + 1 + idx % rows
                    a[base + i * n + j] -= a[base + i * n + k] * a[base + k * n + j]
            cuda.syncthreads()  # also: scratch is written again by the next step
        if tid == 0 and info[m] != 0:
            cuda.atomic.min(first_bad, 0, m)


@cuda.jit
def cholesky_factor(a, info, first_bad, n, batch):
    """In-place lower Cholesky factor of each matrix (reads the lower triangle, zeroes the
    upper one); info[m] = order of the first leading minor that is not positive-definite."""
    stop = cuda.shared.array(0, float64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    for m in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        base = m * n * n
        for k in range(n):
            if tid == 0:
                d = a[base + k * n + k]
                if d > 0:  # False for NaN too, which potrf also rejects
                    a[base + k * n + k] = math.sqrt(d)
                    stop[0] = 0
                else:
                    info[m] = k + 1
                    stop[0] = 1
            cuda.syncthreads()
            if stop[0] != 0:
                break
            d = a[base + k * n + k]
            for i in range(k + 1 + tid, n, threads):
                a[base + i * n + k] /= d
            cuda.syncthreads()
            rows = n - k - 1
            for idx in range(tid, rows * rows, threads):
                i = k + 1 + idx // rows
                j = k + 1 + idx % rows
                if j <= i:
                    a[base + i * n + j] -= a[base + i * n + k] * a[base + j * n + k]
            cuda.syncthreads()
        cuda.syncthreads()  # every thread has read stop[0] before the next matrix writes it
        for idx in range(tid, n * n, threads):
            if idx % n > idx // n:
                a[base + idx] = 0
        if tid == 0 and info[m] != 0:
            cuda.atomic.min(first_bad, 0, m)


@cuda.jit
def triangular_solve(a, a_of, mapped, b, n, k, batch, lower, unit):
    """Overwrite each n x k block m of b with the solution X of T @ X = b, T the lower (or
    upper) triangle of matrix a_of[m] of a (matrix m unless `mapped`: a broadcast A is
    not copied per right-hand side), with a unit diagonal if `unit`.

    Column-oriented substitution: row i of X is final once divided by T[i, i]; the
    block's threads then remove it from every later row at once.
    """
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    for m in range(cuda.blockIdx.x, batch, cuda.gridDim.x):
        abase = (a_of[m] if mapped else m) * n * n
        bbase = m * n * k
        for step in range(n):
            i = step if lower else n - 1 - step
            if not unit:
                diagonal = a[abase + i * n + i]
                for j in range(tid, k, threads):
                    b[bbase + i * k + j] = divide(b[bbase + i * k + j], diagonal)
                cuda.syncthreads()
            first = i + 1 if lower else 0
            rows = n - i - 1 if lower else i
            for idx in range(tid, rows * k, threads):
                r = first + idx // k
                j = idx % k
                b[bbase + r * k + j] -= a[abase + r * n + i] * b[bbase + i * k + j]
            cuda.syncthreads()


@cuda.jit
def apply_pivots(pivots, a_of, mapped, b, n, k, batch):
    """Apply getrf's row interchanges (of matrix a_of[m], or m unless `mapped`) to each
    n x k right-hand side m (one column per step)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for column in range(start, batch * k, stride):
        m = column // k
        j = column % k
        bbase = m * n * k
        pbase = (a_of[m] if mapped else m) * n
        for i in range(n):
            p = pivots[pbase + i]
            if p != i:
                held = b[bbase + i * k + j]
                b[bbase + i * k + j] = b[bbase + p * k + j]
                b[bbase + p * k + j] = held


@cuda.jit
def det_from_lu(lu, pivots, n, batch, out):
    """out[m] = det of matrix m: the product of U's diagonal (in float64), negated per swap."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for m in range(start, batch, stride):
        product = float64(1.0)
        for i in range(n):
            product *= lu[m * n * n + i * n + i]
            if pivots[m * n + i] != i:
                product = -product
        out[m] = product


@cuda.jit
def slogdet_from_lu(lu, pivots, n, batch, sign, logabs):
    """(sign, log|det|) of matrix m from its LU factor: (0, -inf) when singular."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for m in range(start, batch, stride):
        negative = False
        singular = False
        total = float64(0.0)
        for i in range(n):
            u = float64(lu[m * n * n + i * n + i])
            if pivots[m * n + i] != i:
                negative = not negative
            if u < 0:
                negative = not negative
            if u == 0:
                singular = True
            else:
                total += math.log(abs(u))
        if singular:
            sign[m] = 0
            logabs[m] = -INF
        else:
            sign[m] = -1 if negative else 1
            logabs[m] = total
