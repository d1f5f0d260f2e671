"""CUDA linear algebra: LU (det, slogdet, inv, solve), triangular solves and Cholesky
over device arrays, computed on the device by the kernels of `kernels.linalg`.

The same functions as `_backends.cpu.linalg`, except qr, svd, eigh, pinv, matrix_rank
and lstsq (declared gaps, `_families.GAPS`: there is no cuSOLVER binding yet, and device
Jacobi SVD / eigh kernels are future work; their ops compute through the host). Every
operand is copied once on the device into a fresh C-contiguous batch of matrices (the
kernels factor and solve in place): right-hand sides expanded to the broadcast batch, A
kept at its own batch (solve factors each of its matrices once, and the kernels map every
right-hand side to its matrix through a small uploaded index array). Nothing goes
through the host except, for inv, solve and cholesky, one int64 (the first failing batch
element, and then its LAPACK `info`) read back so that the op raises PyTorch's
LinAlgError as on the CPU (PyTorch's CUDA ops synchronise for that check too).

One thread block per matrix suits batches of small matrices; a single large matrix
(hundreds of rows) keeps one multiprocessor busy: a blocked multi-block factorization
(or cuSOLVER's getrf/potrf) is future work.
"""
import functools

import numpy as np

from ..cpu.linalg import lapack as host_lapack  # complex matrices' route (`_complex_on_host`)
from . import arrays, launch, storage
from .kernels import linalg as K
from .kernels.loops import SIMULATOR

__all__ = ["det", "slogdet", "inv", "solve", "solve_triangular", "cholesky"]


def _complex_on_host(device_fn):
    """Run `device_fn`'s CPU twin on host copies when a matrix is complex: the device
    kernels below compute in float32/float64 only (a complex matrix would be read as
    reals), so complex inputs take the host's LAPACK and come back to the device."""
    name = device_fn.__name__

    @functools.wraps(device_fn)
    def routed(*args):
        if not any(getattr(arg, "dtype", None) is not None and np.dtype(arg.dtype).kind == "c" for arg in args):
            return device_fn(*args)
        host_args = [storage.to_numpy(arg) if hasattr(arg, "copy_to_host") else arg for arg in args]
        return _to_device(getattr(host_lapack, name)(*host_args))
    return routed


def _to_device(result):
    if isinstance(result, np.ndarray):
        return storage.adopt(np.ascontiguousarray(result))
    if isinstance(result, tuple):
        return tuple(_to_device(item) for item in result)
    return result


# --- operands, results and launches --------------------------------------------------------

def _matrices(arr, batch, np_dtype):
    """A fresh C-contiguous device copy of `arr` expanded to batch + its last two dims."""
    batch = tuple(batch)
    view = storage.broadcast_to(arr, batch + tuple(arr.shape[-2:])) if tuple(arr.shape[:-2]) != batch else arr
    return storage.astype(view, np.dtype(np_dtype))


def _transposed(arr):
    """The view of `arr` with its last two dims swapped (a batched transpose)."""
    shape, strides = list(arr.shape), list(arr.strides)
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return arrays.restride(arr, tuple(shape), tuple(strides))


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


def _first_failure(first_bad, info, batch):
    """(batch index, LAPACK info) of the first failing matrix, or None: reads one int64,
    and one more on failure."""
    index = int(storage.to_numpy(first_bad)[0])
    if index >= batch:
        return None
    return index, int(storage.to_numpy(info[index:index + 1])[0])


# --- LU and what is built on it ------------------------------------------------------------

def lu(a, n, batch):
    """Factor the flat batch `a` (batch x n x n, in place): (pivots, info, first_bad).

    The building block of det, slogdet, inv and solve (not a family function: the CPU
    backend factors inside LAPACK)."""
    pivots = storage.empty((max(batch * n, 1),), np.int64)
    info = storage.empty((max(batch, 1),), np.int64)
    storage.fill_(info, 0)
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, batch)
    if batch and n:
        _launch_matrices(K.lu_factor, batch, n, arrays.flat(a), pivots, info, first_bad, n, batch)
    return pivots, info, first_bad


def _factor(a):
    """(LU copy, pivots, info, first_bad, n, batch count) of the square matrices `a`."""
    batch_shape = tuple(a.shape[:-2])
    n = a.shape[-1]
    lu_copy = _matrices(a, batch_shape, a.dtype)
    batch = _count(batch_shape)
    return (lu_copy,) + lu(lu_copy, n, batch) + (n, batch)


@_complex_on_host
def det(a):
    """The determinant of each matrix of float32/float64 `a`: an array of its batch shape."""
    lu_copy, pivots, _, _, n, batch = _factor(a)
    out = storage.empty(tuple(a.shape[:-2]), a.dtype)
    _launch_flat(K.det_from_lu, batch, arrays.flat(lu_copy), pivots, n, batch, arrays.flat(out))
    return out


@_complex_on_host
def slogdet(a):
    """(sign, log|det|) of each matrix of `a`, arrays of its batch shape."""
    lu_copy, pivots, _, _, n, batch = _factor(a)
    shape = tuple(a.shape[:-2])
    sign, logabs = storage.empty(shape, a.dtype), storage.empty(shape, a.dtype)
    _launch_flat(K.slogdet_from_lu, batch, arrays.flat(lu_copy), pivots, n, batch, arrays.flat(sign),
                 arrays.flat(logabs))
    return sign, logabs


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


@_complex_on_host
def inv(a):
    """(inverse of each matrix of `a`, None), or (None, (batch index, zero pivot)) for the
    first singular matrix."""
    lu_copy, pivots, info, first_bad, n, batch = _factor(a)
    failure = _first_failure(first_bad, info, batch)
    if failure:
        return None, failure
    b = _identities(batch, n, a.dtype)
    _lu_solve(lu_copy, pivots, b, n, n, batch)
    return arrays.restride(b, tuple(a.shape), _c_strides(a.shape, b.dtype.itemsize)), None


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


def _with_unit_last(arr):
    """`arr` viewed with a trailing dim of size 1 (a batch of vectors as n x 1 matrices)."""
    return arrays.restride(arr, tuple(arr.shape) + (1,), tuple(arr.strides) + (arr.dtype.itemsize,))


@_complex_on_host
def solve(a, b, batch, left, vector):
    """X with A @ X = B (X @ A = B when not `left`; B a batch of vectors when `vector`),
    both broadcast to `batch`; None when a matrix is singular. A is factored once per
    matrix of its own batch, however many right-hand sides share it."""
    if not left:  # X @ A = B is solved as A.mT @ X.mT = B.mT
        a, b = _transposed(a), _transposed(b)
    rhs = _with_unit_last(b) if vector else b
    x = _lu_solve_broadcast(a, rhs, tuple(batch))
    if x is None:
        return None
    x = arrays.restride(x, tuple(x.shape[:-1]), tuple(x.strides[:-1])) if vector else x
    return x if left else _transposed(x)


def _lu_solve_broadcast(a, rhs, batch_shape):
    """solve's device work: rhs (n x k) expanded to `batch_shape` and overwritten with the
    solution; None when a matrix of `a` is singular."""
    n, k = a.shape[-1], rhs.shape[-1]
    batch = _count(batch_shape)
    b = _matrices(rhs, batch_shape, a.dtype)
    if not batch:  # nothing is solved, so nothing can be singular (as on the CPU)
        return b
    a_batch = tuple(a.shape[:-2])
    lu_copy = _matrices(a, a_batch, a.dtype)
    pivots, info, first_bad = lu(lu_copy, n, _count(a_batch))
    if _first_failure(first_bad, info, _count(a_batch)):
        return None
    a_of, mapped = _matrix_of(a_batch, batch_shape)
    _lu_solve(lu_copy, pivots, b, n, k, batch, a_of, mapped)
    return b


@_complex_on_host
def solve_triangular(a, b, upper, left, unitriangular, batch):
    """X with T @ X = B (X @ T = B when not `left`), T the upper or lower triangle of `a`
    (unit diagonal when `unitriangular`), both broadcast to `batch`, in their common
    dtype (NumPy's result type). A zero on the diagonal gives inf/nan, as in PyTorch."""
    if not left:  # X @ T = B is solved as T.mT @ X.mT = B.mT
        a, b, upper = _transposed(a), _transposed(b), not upper
    dtype = np.dtype(np.float64 if np.float64 in (a.dtype, b.dtype) else np.float32)
    n, k = a.shape[-1], b.shape[-1]
    batch_shape = tuple(batch)
    a_batch = tuple(a.shape[:-2])
    t = _matrices(a, a_batch, dtype)  # a broadcast A is read in place, not copied per B
    x = _matrices(b, batch_shape, dtype)
    count = _count(batch_shape)
    if count and n and k:
        a_of, mapped = _matrix_of(a_batch, batch_shape)
        _launch_matrices(K.triangular_solve, count, n, arrays.flat(t), a_of, mapped, arrays.flat(x), n, k,
                         count, not upper, unitriangular)
    return x if left else _transposed(x)


@_complex_on_host
def cholesky(a, upper):
    """(Cholesky factor of each matrix of `a`, None): lower (upper, its transpose, when
    `upper`); or (None, (batch index, order of the failing leading minor)) for the first
    matrix that is not positive-definite."""
    batch_shape = tuple(a.shape[:-2])
    n, batch = a.shape[-1], _count(batch_shape)
    factor = _matrices(a, batch_shape, a.dtype)
    info = storage.empty((max(batch, 1),), np.int64)
    storage.fill_(info, 0)
    first_bad = storage.empty((1,), np.int64)
    storage.fill_(first_bad, batch)
    if batch and n:
        _launch_matrices(K.cholesky_factor, batch, n, arrays.flat(factor), info, first_bad, n, batch)
    failure = _first_failure(first_bad, info, batch)
    if failure:
        return None, failure
    return (_transposed(factor) if upper else factor), None
