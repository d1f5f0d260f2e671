"""CPU reductions: the device half of ember's reductions (the op half is `_ops/reduction`).

Backend interface. A backend offers these four functions over its own arrays; the op
layer has already checked arguments, wrapped and sorted `dims` (distinct, ascending;
empty means "reduce nothing": each output element reduces one input element), cast
float16/bfloat16 inputs to float32, and rejected empty reductions that have no identity.
Results are new contiguous arrays shaped like `a` without `dims` (keepdim is the op
layer's business).

    reduce(kind, a, dims, out_dtype) -> array of NumPy dtype `out_dtype`
        kind: "sum", "mean", "prod", "sumsq" (sum of squares), "sumabs" (sum of |x|),
        "count_nonzero", "all", "any" (x != 0, so NaN counts as true), "amax", "amin"
        (NaN propagates). Floats accumulate in float64 and integers/bool in int64,
        whatever `out_dtype` is; an empty reduction gives the identity (mean: NaN).
    arg_reduce(kind, a, dim) -> (values, indices)
        kind: "max" or "min"; dim: an int, or None for the flattened array (flat index).
        Indices are int64; the first occurrence wins ties; the first NaN is the extreme.
    var_mean(a, dims, correction) -> (var, mean)
        float64 accumulation, two passes; var = sum((x - mean)^2) / max(0, n - correction)
        (n - correction <= 0 gives inf or NaN, like PyTorch). Results in a's dtype.
    median(a, dim) -> (values, indices)
        The lower median along int `dim` (stable: PyTorch's index among equal values), or
        of all elements when dim is None (then indices is None). NaN is the median of a
        row that has one (the first NaN's index).

How the CPU maps an input onto a kernel: reduced dims go last, dims that are adjacent in
memory merge (size-1 dims drop), and the result is a `rows` layout (each output reduces
one run of elements) or a `cols` layout (reduced dims lie outside a contiguous kept
inner dim, accumulated along it). Anything else is first copied into (kept, reduced)
order. From PARALLEL_THRESHOLD elements threads split the rows or tasks, and a few long rows (a full reduction) are cut into chunks that are merged; each
thread runs the serial kernel (`threads.split`), so no reduction compiles a prange twin.
"""
import numpy as np

from .kernels.reduction import kernels
from ..plan import merge_dims
from . import threads

__all__ = ["reduce", "arg_reduce", "var_mean", "median"]

# From this many elements a reduction is split over the thread budget (`threads.split`):
# handing ranges to pool threads costs ~20-40 us, a serial sum of 2**17 floats ~20 us.
PARALLEL_THRESHOLD = 1 << 17
# A parallel full reduction cuts each row into pieces of at least this many elements.
_MIN_CHUNK = 1 << 14


def _flat_buffer(a):
    """(1-d view of the memory `a` spans starting at its first element, element strides)."""
    itemsize = a.itemsize
    strides = [s // itemsize for s in a.strides]
    if a.flags.c_contiguous:
        return a.reshape(-1), strides
    span = 1 + sum((n - 1) * s for n, s in zip(a.shape, strides))
    return np.lib.stride_tricks.as_strided(a, (span,), (itemsize,)), strides


def _contiguous_plan(a, dims, allow_cols):
    """`_plan`'s result for a C-contiguous `a` whose reduced dims are its last ones (a row
    sum: rows layout) or its first ones (a bias gradient's sum(0): cols layout), found
    from the shape alone; None otherwise. Most reductions a model runs are one of the two,
    and merging dims one by one costs several times a small reduction's kernel."""
    ndim, k = a.ndim, len(dims)
    n_r = 1
    for d in dims:
        n_r *= a.shape[d]
    rest = a.size // n_r
    if dims[0] == ndim - k:  # sorted and distinct: the last k dims
        return "rows", a.reshape(-1), (rest, n_r, n_r, 1)
    if allow_cols and dims[-1] == k - 1 and rest > 1:  # the first k dims, a kept inner run
        return "cols", a.reshape(-1), (1, 0, n_r, rest, rest, 1)
    return None


def _plan(a, dims, allow_cols=True):
    """The kernel layout for reducing `dims` of `a`: ("rows"|"cols", buf, geometry)."""
    if a.size and dims and a.flags.c_contiguous:
        plan = _contiguous_plan(a, dims, allow_cols)
        if plan is not None:
            return plan
    if a.size == 0:  # nothing to read: each output reduces no elements
        kept = 1
        for d, n in enumerate(a.shape):
            kept *= 1 if d in dims else n
        return "rows", np.empty(1, a.dtype), (kept, 0, 0, 0)
    if any(s < 0 for s in a.strides):
        a = np.ascontiguousarray(a)
    buf, strides = _flat_buffer(a)
    kept = merge_dims([(n, s) for d, (n, s) in enumerate(zip(a.shape, strides)) if d not in dims])
    red = merge_dims([(a.shape[d], strides[d]) for d in dims])
    if len(red) <= 1:
        n_r, s_r = red[0] if red else (1, 0)
        if not kept:
            return "rows", buf, (1, 0, n_r, s_r)
        if len(kept) == 1:
            n_o, s_o = kept[0]
            if allow_cols and 0 < s_o < s_r:
                return "cols", buf, (1, 0, n_r, s_r, n_o, s_o)
            return "rows", buf, (n_o, s_o, n_r, s_r)
        if len(kept) == 2 and allow_cols and 0 < kept[1][1] < s_r:
            (n_o, s_o), (n_i, s_i) = kept
            return "cols", buf, (n_o, s_o, n_r, s_r, n_i, s_i)
    # No single-loop layout: copy into (kept, reduced) order, then reduce contiguous rows.
    order = [d for d in range(a.ndim) if d not in dims] + list(dims)
    packed = np.ascontiguousarray(a.transpose(order))
    n_r = 1
    for d in dims:
        n_r *= a.shape[d]
    return "rows", packed.reshape(-1), (packed.size // n_r, n_r, n_r, 1)


def _launch(mod, plan, args):
    """Run the plan's serial kernel, or for big inputs the same kernels on several threads
    at once: over ranges of rows or tasks, or over pieces of a few long rows."""
    layout, buf, geom = plan
    if layout == "rows":
        n_o, s_o, n_r, s_r = geom
        work = n_o * n_r
    else:
        n_o, s_o, n_r, s_r, n_i, s_i = geom
        work = n_o * n_r * n_i
    if not threads.parallel(work, PARALLEL_THRESHOLD):
        getattr(mod, layout)(buf, 0, *geom, *args)
        return
    count = threads.part_count()
    if layout == "cols":
        n_tiles = -(-n_i // mod.TILE)
        threads.split(lambda lo, hi: mod.cols_tasks(buf, 0, lo, hi, n_tiles, s_o, n_r, s_r, n_i, s_i, *args),
                      n_o * n_tiles, count, align=1)
        return
    # Enough rows to share out, or else cut each row into pieces merged afterwards.
    nchunks = 1 if n_o >= 2 * count else max(1, min(-(-4 * count // n_o), n_r // _MIN_CHUNK))
    if nchunks > 1:
        mod.rows_chunked(lambda task, n: threads.split(task, n, count, align=1), buf, 0, *geom, *args, nchunks)
    else:
        _split_rows(mod, buf, geom, args, count)


def _split_rows(mod, buf, geom, args, count):
    """`mod.rows` over ranges of the output rows, one range a thread (the outputs among
    `args`, the arrays, sliced to each range)."""
    n_o, s_o, n_r, s_r = geom

    def part(lo, hi):
        mod.rows(buf, lo * s_o, hi - lo, s_o, n_r, s_r,
                 *[x[lo:hi] if x.__class__ is np.ndarray else x for x in args])
    threads.split(part, n_o, count, align=1)


def _kept_shape(a, dims):
    return tuple(n for d, n in enumerate(a.shape) if d not in dims)


# Floats accumulate in float64, complex in complex128, integers and bool in int64: the
# starting value is a Python number of that type (Numba types a Python float faster than
# a NumPy float64, to the same float64).
_ACCUMULATOR = {"f": float, "c": complex}
_IDENTITY = {"sum": 0, "mean": 0, "sumsq": 0, "sumabs": 0, "count_nonzero": 0, "prod": 1}


def _init(kind, dtype):
    """The accumulator's starting value; its type is the accumulator's type."""
    if kind in _IDENTITY:
        return _ACCUMULATOR.get(dtype.kind, int)(_IDENTITY[kind])
    if kind in ("all", "any"):
        return np.bool_(kind == "all")
    # amax/amin start from the dtype's lowest/highest value.
    low = kind == "amax"
    if dtype.kind == "f":
        return dtype.type(-np.inf if low else np.inf)
    if dtype.kind == "b":
        return np.bool_(not low)
    info = np.iinfo(dtype)
    return dtype.type(info.min if low else info.max)


# NumPy's float max/min reductions: SIMD loops that propagate NaN, as amax/amin do. A
# scalar loop cannot vectorise the NaN test (`x > acc or x != x`), and LLVM vectorises no
# floating max/min reduction without fast-math's no-NaN promise: 8-10x slower (1e7 float32:
# 24 ms against 2.5 ms). The values are exact either way; among equal values of opposite
# signs (-0.0 and 0.0) which one is returned is the loop's choice, as in PyTorch.
_NUMPY_EXTREMES = {"amax": np.max, "amin": np.min}


def reduce(kind, a, dims, out_dtype):
    """Reduce `dims` of array `a` with accumulating reduction `kind` (see module docstring)."""
    if kind in _NUMPY_EXTREMES and a.dtype.kind == "f" and a.size:
        return _NUMPY_EXTREMES[kind](a, axis=dims).astype(out_dtype, copy=False)
    if len(dims) == a.ndim and 0 < a.size < PARALLEL_THRESHOLD and a.flags.c_contiguous:
        # A small full reduction of contiguous memory is one row: no plan to make (the
        # plan costs several times the kernel for a few elements).
        out = np.empty((), out_dtype)
        kernels(kind).rows(a.reshape(-1), 0, 1, 0, a.size, 1, _init(kind, a.dtype), out.reshape(-1))
        return out
    out = np.empty(_kept_shape(a, dims), out_dtype)
    if out.size:
        _launch(kernels(kind), _plan(a, dims), (_init(kind, a.dtype), out.reshape(-1)))
    return out


def arg_reduce(kind, a, dim):
    """(values, int64 indices) of the max or min along `dim` (None: over all elements)."""
    dims = tuple(range(a.ndim)) if dim is None else (dim,)
    values = np.empty(_kept_shape(a, dims), a.dtype)
    indices = np.empty(values.shape, np.int64)
    if values.size:
        _launch(kernels("arg" + kind), _plan(a, dims), (values.reshape(-1), indices.reshape(-1)))
    return values, indices


def var_mean(a, dims, correction):
    """(variance, mean) over `dims`, dividing by max(0, n - correction)."""
    var = np.empty(_kept_shape(a, dims), a.dtype)
    mean = np.empty(var.shape, a.dtype)
    if var.size:
        _launch(kernels("var"), _plan(a, dims),
                (float(correction), var.reshape(-1), mean.reshape(-1)))
    return var, mean


def median(a, dim):
    """(values, indices) of the lower median along `dim`; (value, None) over all elements."""
    mod = kernels("median")
    if dim is None:
        flat = np.array(a, order="C").reshape(-1)  # a private copy: selection reorders it
        return np.array(mod.value(flat), a.dtype), None
    dims = (dim,)
    values = np.empty(_kept_shape(a, dims), a.dtype)
    indices = np.empty(values.shape, np.int64)
    if values.size:
        plan = _plan(a, dims, allow_cols=False)
        layout, buf, (n_o, s_o, n_r, s_r) = plan
        args = (values.reshape(-1), indices.reshape(-1))
        if not threads.parallel(n_o * n_r, PARALLEL_THRESHOLD) or n_o == 1:
            mod.rows(buf, 0, n_o, s_o, n_r, s_r, *args)
        else:
            _split_rows(mod, buf, (n_o, s_o, n_r, s_r), args, threads.part_count())
    return values, indices
