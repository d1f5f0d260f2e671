"""The dense solvers on CUDA tensors: LU (det, slogdet, inv, solve), triangular solves
and Cholesky, computed on the device by the kernels of `_backends.cuda.kernels.linalg`.

The CUDA halves of `_ops.linalg_decomp`: those ops check their arguments (shared with
the CPU), then call here for CUDA inputs with float32/float64 tensors. Every operand is
copied once on the device into a fresh C-contiguous batch of matrices (the kernels
factor and solve in place): right-hand sides expanded to the broadcast batch, A kept at
its own batch (solve factors each of its matrices once, and the kernels map every
right-hand side to its matrix through a small uploaded index array). Results are
C-contiguous tensors like the CPU's. Nothing goes through the host except, for inv, solve
and cholesky, one int64 (the first failing batch element, and then its LAPACK `info`)
read back to raise PyTorch's LinAlgError as the CPU does (PyTorch's CUDA ops synchronise
for that check too).

One thread block per matrix suits batches of small matrices; a single large matrix
(hundreds of rows) keeps one multiprocessor busy: a blocked multi-block factorization
(or cuSOLVER's getrf/potrf) is future work. qr, svd, eigh, pinv, matrix_rank and lstsq
still take the host's LAPACK: there is no cuSOLVER binding yet, and device Jacobi SVD /
eigh kernels are future work.
"""
import numpy as np

from . import arrays, launch, storage
from . import runtime
from .kernels import linalg as K
from .kernels.loops import SIMULATOR
from ..._tensor import Tensor

__all__ = ["lu", "det", "slogdet", "inv", "solve", "solve_triangular", "cholesky"]


# --- operands, results and launches --------------------------------------------------------

def _matrices(t, batch, np_dtype):
    """A fresh C-contiguous device copy of `t` expanded to batch + its last two dims."""
    view = t.expand(tuple(batch) + tuple(t.shape[-2:])) if tuple(t.shape[:-2]) != tuple(batch) else t
    return storage.astype(view._data, np.dtype(np_dtype))


def _wrap(arr, dtype, device):
    """A tensor of `dtype` holding device array `arr` (cast on the device if needed)."""
    if arr.dtype != dtype.np:
        arr = storage.astype(arr, dtype.np)
    return Tensor._wrap(arr, dtype, device)


def _count(shape):
    total = 1
    for size in shape:
        total *= size
    return total


def _launch_matrices(kernel, batch, n, *args):
    """One block per matrix (blocks stride over the batch), threads over the step's work:
    a warp for tiny matrices, up to 256 threads (a power of two); under the simulator a
    block of 4. Dynamic shared memory: the pivot search's 2 * block + 1 float64s."""
    if SIMULATOR:
        launch.sim_launch_synced(kernel, 1, 4, *args, shared=(2 * 4 + 1) * 8)
        return
    block = 32
    while block < min(n * n, 256):
        block *= 2
    launch.launch_grid(kernel, max(1, min(batch, 65535)), block, *args, shared=(2 * block + 1) * 8)


def _launch_flat(kernel, count, *args):
    if count:
        launch.grid_stride(kernel, count, *args)


def _on_device(fn):
    """Run `fn` with its first tensor argument's GPU current (allocations land there)."""
    def on_device(t, *args, **kwargs):
        with runtime.device_context(t._device.index or 0):
            return fn(t, *args, **kwargs)
    on_device.__name__ = fn.__name__
    on_device.__doc__ = fn.__doc__
    return on_device


def _first_failure(first_bad, info, batch):
    """(batch index, LAPACK info) of the first failing matrix, or None: reads one int64,
    and one more on failure."""
    index = int(storage.to_numpy(first_bad)[0])
    if index >= batch:
        return None
    return index, int(storage.to_numpy(info[index:index + 1])[0])


# --- LU and what is built on it ------------------------------------------------------------

def lu(a, n, batch):
    """Factor the flat batch `a` (batch x n x n, in place): (pivots, info, first_bad)."""
    pivots = storage.empty((max(batch * n, 1),), np.int64)
    info = storage.empty((max(batch, 1),), np.int64)
    storage.fill_(info, 0)
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, batch)
    if batch and n:
        _launch_matrices(K.lu_factor, batch, n, arrays.flat(a), pivots, info, first_bad, n, batch)
    return pivots, info, first_bad


def _factor(A):
    """(LU copy, pivots, info, first_bad, n, batch count) of square-matrix tensor A."""
    batch_shape = tuple(A.shape[:-2])
    n = A.shape[-1]
    a = _matrices(A, batch_shape, A._dtype.np)
    batch = _count(batch_shape)
    return (a,) + lu(a, n, batch) + (n, batch)


@_on_device
def det(A):
    """det of each matrix of float32/float64 tensor A: a tensor of its batch shape."""
    a, pivots, _, _, n, batch = _factor(A)
    out = storage.empty(tuple(A.shape[:-2]), A._dtype.np)
    _launch_flat(K.det_from_lu, batch, arrays.flat(a), pivots, n, batch, arrays.flat(out))
    return Tensor._wrap(out, A._dtype, A._device)


@_on_device
def slogdet(A):
    """(sign, log|det|) of each matrix of A, tensors of its batch shape."""
    a, pivots, _, _, n, batch = _factor(A)
    shape = tuple(A.shape[:-2])
    sign, logabs = storage.empty(shape, A._dtype.np), storage.empty(shape, A._dtype.np)
    _launch_flat(K.slogdet_from_lu, batch, arrays.flat(a), pivots, n, batch, arrays.flat(sign),
                 arrays.flat(logabs))
    return Tensor._wrap(sign, A._dtype, A._device), Tensor._wrap(logabs, A._dtype, A._device)


def _matrix_of(a_batch, batch_shape):
    """(a_of, mapped): for each matrix of the broadcast `batch_shape`, the index of its
    matrix in A's own batch `a_batch` (a small int64 upload), or a placeholder and False
    when A is not broadcast."""
    if tuple(a_batch) == tuple(batch_shape):
        return storage.empty((1,), np.int64), False
    own = np.arange(_count(a_batch), dtype=np.int64).reshape(tuple(a_batch))
    return storage.from_numpy(np.broadcast_to(own, tuple(batch_shape)).ravel()), True


def _lu_solve(a, pivots, b, n, k, batch, a_of=None, mapped=False):
    """Overwrite flat rhs batch b (batch x n x k) with the solution of LU-factored a
    (matrix a_of[m] for right-hand side m when `mapped`)."""
    if not (batch and n and k):
        return
    if a_of is None:
        a_of = storage.empty((1,), np.int64)
    flat_a, flat_b = arrays.flat(a), arrays.flat(b)
    _launch_flat(K.apply_pivots, batch * k, pivots, a_of, mapped, flat_b, n, k, batch)
    _launch_matrices(K.triangular_solve, batch, n, flat_a, a_of, mapped, flat_b, n, k, batch, True, True)
    _launch_matrices(K.triangular_solve, batch, n, flat_a, a_of, mapped, flat_b, n, k, batch, False, False)


@_on_device
def inv(A):
    """(inverse of each matrix of A, None), or (None, (batch index, zero pivot)) for the
    first singular matrix."""
    a, pivots, info, first_bad, n, batch = _factor(A)
    failure = _first_failure(first_bad, info, batch)
    if failure:
        return None, failure
    b = _identities(batch, n, A._dtype.np)
    _lu_solve(a, pivots, b, n, n, batch)
    return Tensor._wrap(arrays.restride(b, tuple(A.shape), _c_strides(A.shape, b.dtype.itemsize)),
                        A._dtype, A._device), None


def _identities(batch, n, np_dtype):
    """A flat device batch of n x n identity matrices, made on the device."""
    b = storage.empty((batch * n * n,), np_dtype)
    if b.size:
        storage.fill_(b, 0)
        itemsize = b.dtype.itemsize
        diagonal = arrays.restride(b, (batch, n), (n * n * itemsize, (n + 1) * itemsize))
        storage.fill_(diagonal, 1)
    return b


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


@_on_device
def solve(A, B, batch_shape):
    """X with A @ X = B for matrices A (n x n) and right-hand sides B (n x k), both
    broadcast to `batch_shape`; None when a matrix is singular. A is factored once per
    matrix of its own batch, however many right-hand sides share it."""
    n, k = A.shape[-1], B.shape[-1]
    batch = _count(batch_shape)
    b = _matrices(B, batch_shape, A._dtype.np)
    if not batch:  # nothing is solved, so nothing can be singular (as on the CPU)
        return Tensor._wrap(b, A._dtype, A._device)
    a_batch = tuple(A.shape[:-2])
    a = _matrices(A, a_batch, A._dtype.np)
    pivots, info, first_bad = lu(a, n, _count(a_batch))
    if _first_failure(first_bad, info, _count(a_batch)):
        return None
    a_of, mapped = _matrix_of(a_batch, batch_shape)
    _lu_solve(a, pivots, b, n, k, batch, a_of, mapped)
    return Tensor._wrap(b, A._dtype, A._device)


@_on_device
def solve_triangular(A, B, upper, unitriangular, dtype, batch_shape):
    """X with T @ X = B, T the upper/lower triangle of A, computed in `dtype` (A's and B's
    common type) and returned as A's dtype; both broadcast to `batch_shape`."""
    n, k = A.shape[-1], B.shape[-1]
    a_batch = tuple(A.shape[:-2])
    a = _matrices(A, a_batch, dtype.np)  # a broadcast A is read in place, not copied per B
    b = _matrices(B, batch_shape, dtype.np)
    batch = _count(batch_shape)
    if batch and n and k:
        a_of, mapped = _matrix_of(a_batch, batch_shape)
        _launch_matrices(K.triangular_solve, batch, n, arrays.flat(a), a_of, mapped, arrays.flat(b), n, k,
                         batch, not upper, unitriangular)
    return _wrap(b, A._dtype, A._device)


@_on_device
def cholesky(A):
    """(lower Cholesky factor of each matrix of A, None), or (None, (batch index, order of
    the failing leading minor)) for the first matrix that is not positive-definite."""
    batch_shape = tuple(A.shape[:-2])
    n, batch = A.shape[-1], _count(batch_shape)
    a = _matrices(A, batch_shape, A._dtype.np)
    info = storage.empty((max(batch, 1),), np.int64)
    storage.fill_(info, 0)
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, batch)
    if batch and n:
        _launch_matrices(K.cholesky_factor, batch, n, arrays.flat(a), info, first_bad, n, batch)
    failure = _first_failure(first_bad, info, batch)
    if failure:
        return None, failure
    return Tensor._wrap(a, A._dtype, A._device), None

