"""CUDA reductions: `reduce`, `arg_reduce`, `var_mean`, `median` over device arrays.

The same interface and results as `_backends.cpu.reduction` (read its docstring for the contract:
dims arrive wrapped and sorted, float16/bfloat16 already cast to float32, floats
accumulate in float64 and integers in int64, NaN propagates, first occurrence wins).

Every input is mapped onto the one `rows` layout of `_backends.cuda.kernels.reduction`: kept dims
and reduced dims are each merged where they are adjacent in memory; when either side
does not merge into a single (size, stride) pair the input is first copied (one strided
copy kernel) into (kept..., reduced...) order. A block of threads reduces one row.
"""
import numpy as np

from ..plan import merge_dims
from . import arrays, launch, storage
from .kernels import loops as cuda_loops
from .kernels.reduction import THREADS, kernels

__all__ = ["reduce", "arg_reduce", "var_mean", "median"]

_IDENTITY = {"sum": 0, "mean": 0, "sumsq": 0, "sumabs": 0, "count_nonzero": 0, "prod": 1}


def _plan(a, dims):
    """(1-d buffer, n_o, s_o, n_r, s_r) such that output o reduces buf[o*s_o + r*s_r]."""
    n_r = 1
    for d in dims:
        n_r *= a.shape[d]
    if a.size == 0:  # nothing to read: each output reduces no elements
        return storage.empty((1,), a.dtype), _kept_count(a, dims), 0, 0, 0
    itemsize = a.dtype.itemsize
    strides = [s // itemsize for s in a.strides]
    kept = merge_dims([(n, s) for d, (n, s) in enumerate(zip(a.shape, strides)) if d not in dims])
    red = merge_dims([(a.shape[d], strides[d]) for d in dims])
    if len(kept) <= 1 and len(red) <= 1 and all(s >= 0 for s in strides):
        n_o, s_o = kept[0] if kept else (1, 0)
        n_r, s_r = red[0] if red else (1, 0)
        span = 1 + (n_o - 1) * s_o + (n_r - 1) * s_r
        return arrays.restride(a, (span,), (itemsize,)), n_o, s_o, n_r, s_r
    # Copy into (kept, reduced) order so that every row is contiguous.
    order = [d for d in range(a.ndim) if d not in dims] + list(dims)
    view = arrays.restride(a, tuple(a.shape[d] for d in order), tuple(a.strides[d] for d in order))
    packed = storage.astype(view, a.dtype)
    return arrays.flat(packed), a.size // n_r, n_r, n_r, 1


def _kept_count(a, dims):
    count = 1
    for d, n in enumerate(a.shape):
        count *= 1 if d in dims else n
    return count


def _kept_shape(a, dims):
    return tuple(n for d, n in enumerate(a.shape) if d not in dims)


def _launch(kernel, n_o, *args):
    """One block per output row (blocks stride over the rows) on the current stream."""
    if cuda_loops.SIMULATOR:
        launch.sim_launch_synced(kernel, 1, THREADS, *args)
        return
    launch.launch_grid(kernel, min(n_o, launch.max_blocks()), THREADS, *args)


# A row is split across blocks only when it has at least 2 * SPLIT_MIN elements and there
# are fewer rows than blocks to keep the GPU busy (the simulator splits tiny rows, so that
# the two-pass path runs in the tests).
SPLIT_MIN = 8 if cuda_loops.SIMULATOR else 8192
_SIM_BUSY_BLOCKS = 4


def _chunks(n_o, n_r):
    """How many pieces each row of an accumulating reduction is cut into (1: no split)."""
    if cuda_loops.SIMULATOR:
        busy = _SIM_BUSY_BLOCKS
    else:
        from numba import cuda
        busy = 4 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    if n_o >= busy or n_r < 2 * SPLIT_MIN:
        return 1
    return max(1, min(-(-busy // n_o), n_r // SPLIT_MIN))


def _init(kind, dtype):
    """The accumulator's identity; its NumPy type is the accumulator's type."""
    if kind in _IDENTITY:
        return {"f": np.float64, "c": np.complex128}.get(dtype.kind, np.int64)(_IDENTITY[kind])
    if kind in ("all", "any"):
        return np.bool_(kind == "all")
    low = kind == "amax"
    if dtype.kind == "f":
        return dtype.type(-np.inf if low else np.inf)
    if dtype.kind == "b":
        return np.bool_(not low)
    info = np.iinfo(dtype)
    return dtype.type(info.min if low else info.max)


def _acc_name(init):
    return np.dtype(type(init)).name


def reduce(kind, a, dims, out_dtype):
    """Reduce `dims` of device array `a` with accumulating reduction `kind`."""
    shape = _kept_shape(a, dims)
    init = _init(kind, a.dtype)
    acc = _acc_name(init)
    if kind == "sumsq" and acc == "int64":
        acc = "float64"  # float(x) * float(x): integer squares accumulate as floats
        init = np.float64(0)
    # The kernel writes its accumulator's type; converted to out_dtype afterwards.
    out = storage.empty(shape, np.dtype(acc))
    if out.size:
        buf, n_o, s_o, n_r, s_r = _plan(a, dims)
        mod = kernels(kind, acc)
        nchunks = _chunks(n_o, n_r)
        if nchunks > 1:  # few long rows: spread each over several blocks, then merge
            size = -(-n_r // nchunks)
            partials = storage.empty((n_o * nchunks,), np.dtype(acc))
            _launch(mod.partial, n_o * nchunks, buf, n_o, s_o, n_r, s_r, init, nchunks, size,
                    partials)
            _launch(mod.merge, n_o, partials, n_o, nchunks, n_r, init, arrays.flat(out))
        else:
            _launch(mod.rows, n_o, buf, n_o, s_o, n_r, s_r, init, arrays.flat(out))
    if out.dtype != np.dtype(out_dtype):
        out = storage.astype(out, out_dtype)
    return out


def arg_reduce(kind, a, dim):
    """(values, int64 indices) of the max or min along `dim` (None: over all elements)."""
    dims = tuple(range(a.ndim)) if dim is None else (dim,)
    values = storage.empty(_kept_shape(a, dims), a.dtype)
    indices = storage.empty(values.shape, np.int64)
    if values.size:
        buf, n_o, s_o, n_r, s_r = _plan(a, dims)
        mod = kernels("arg" + kind, a.dtype.name)
        nchunks = _chunks(n_o, n_r)
        if nchunks > 1:
            size = -(-n_r // nchunks)
            pvals = storage.empty((n_o * nchunks,), a.dtype)
            pidx = storage.empty((n_o * nchunks,), np.int64)
            _launch(mod.partial, n_o * nchunks, buf, n_o, s_o, n_r, s_r, nchunks, size, pvals, pidx)
            _launch(mod.merge, 1, pvals, pidx, n_o, nchunks, arrays.flat(values),
                    arrays.flat(indices))
        else:
            _launch(mod.rows, n_o, buf, n_o, s_o, n_r, s_r, arrays.flat(values),
                    arrays.flat(indices))
    return values, indices


def var_mean(a, dims, correction):
    """(variance, mean) over `dims`, dividing by max(0, n - correction)."""
    var = storage.empty(_kept_shape(a, dims), a.dtype)
    mean = storage.empty(var.shape, a.dtype)
    if var.size:
        buf, n_o, s_o, n_r, s_r = _plan(a, dims)
        mod = kernels("var", a.dtype.name)
        nchunks = _chunks(n_o, n_r)
        if nchunks > 1:
            size = -(-n_r // nchunks)
            pmean = storage.empty((n_o * nchunks,), np.float64)
            pm2 = storage.empty((n_o * nchunks,), np.float64)
            _launch(mod.partial, n_o * nchunks, buf, n_o, s_o, n_r, s_r, nchunks, size, pmean, pm2)
            _launch(mod.merge, 1, pmean, pm2, n_o, nchunks, n_r, size, np.float64(correction),
                    arrays.flat(var), arrays.flat(mean))
        else:
            _launch(mod.rows, n_o, buf, n_o, s_o, n_r, s_r, np.float64(correction),
                    arrays.flat(var), arrays.flat(mean))
    return var, mean


# Rows longer than this are sorted on the device (`_backends.cuda.sorting`) instead: the rank-counting
# kernel does O(n^2) work per row, a bitonic sort O(n log^2 n).
MEDIAN_ON_DEVICE_MAX = 64 if cuda_loops.SIMULATOR else 256


def median(a, dim):
    """(values, indices) of the lower median along `dim`; (value, None) over all elements."""
    dims = tuple(range(a.ndim)) if dim is None else (dim,)
    n_r = 1
    for d in dims:
        n_r *= a.shape[d]
    if n_r > MEDIAN_ON_DEVICE_MAX:
        from . import sorting as _cuda_sort
        return _cuda_sort.median_lines(a, dim)
    values = storage.empty(_kept_shape(a, dims), a.dtype)
    indices = storage.empty(values.shape, np.int64)
    if values.size:
        buf, n_o, s_o, n_r, s_r = _plan(a, dims)
        mod = kernels("median", a.dtype.name)
        _launch(mod.rows, n_o, buf, n_o, s_o, n_r, s_r, arrays.flat(values), arrays.flat(indices))
    if dim is None:
        return values, None
    return values, indices
