"""CUDA gather and scatter (scatter_add, scatter_reduce): the device side of `index_ops`.

Offsets come from one kernel over the index (where each element reads or lands), then:
gather reads through them; scatter writes (plain writes to a repeated target keep one
of the values, as on PyTorch's GPU). Where CUDA has atomics (32/64-bit ints and floats)
sum/mean add with them (float sums may round differently from the CPU's, within
tolerance) and integer amax/amin take atomic max/min (exact). Everything else (prod,
multiply, float amax/amin, whose NaN rule CUDA's atomics do not follow, and the small
dtypes), and float sums under deterministic algorithms, walk each line of the index
along `dim` in order on one thread (`scatter_lines`), which gives the CPU's results
exactly; products with a tensor source raise PyTorch's deterministic-algorithms alert.
float16/bfloat16 are scattered in float32 copies. The same functions as `_backends.cpu.scatter`: indices are checked
first (one value is read back) and the first bad one returned, nothing written.
"""
import numpy as np

from ..._runtime.determinism import alert_not_deterministic, are_deterministic_algorithms_enabled
from . import arrays, elementwise, launch, layout, storage
from ..plan import WORDS
from .index_arrays import dim_offsets, first_out_of_range, padded_layout, put_items, take_items, to_index_array
from .kernels import index as K

__all__ = ["gather", "scatter"]


def gather(data, dim, index):
    """(out, bad): out[i][j] = data[index[i][j]][j] (dim 0) ... shaped like `index` (a 0-d
    array acts as 1-d); bad is the first index out of range, or None (then out is None)."""
    src = layout.as_1d_if_0d(data)
    idx_shape = tuple(index.shape) or (1,)
    idx = to_index_array(index)
    bad = first_out_of_range(idx, 0, src.shape[dim])
    if bad is not None:
        return None, bad
    buf, strides = layout.flat_buffer(src)
    dim_stride = strides[dim]
    strides[dim] = 0
    out = storage.empty((idx.size,), src.dtype)
    padded = padded_layout(idx_shape, strides)
    words = WORDS[src.dtype.itemsize]
    if padded is not None and words == 1:
        launch.grid_stride(K.gather_dim, idx.size, layout.movement(buf), *padded, dim_stride, idx,
                           layout.movement(out))
    else:  # many dims, or 16-byte items: offsets counted in movement words
        offsets = dim_offsets(idx_shape, [s * words for s in strides], dim_stride * words, idx)
        take_items(buf, offsets, out)
    return layout.view(out, index.shape), None


_LINE_MODES = {"copy": K.COPY, "add": K.ADD, "sum": K.ADD, "mean": K.ADD, "multiply": K.MULTIPLY,
               "prod": K.MULTIPLY, "amax": K.AMAX, "amin": K.AMIN}


def scatter(target, dim, index, src, mode, include_self, identity, work_dtype):
    """Scatter `src` (a device array, or a number) into `target` at `index` along `dim`, in
    place, computing in NumPy dtype `work_dtype` (see `_backends.cpu.scatter.scatter`).
    Returns the first index out of range (nothing written), or None."""
    data = layout.as_1d_if_0d(target)
    idx_shape = tuple(index.shape) or (1,)
    idx = to_index_array(index)
    bad = first_out_of_range(idx, 0, data.shape[dim])
    if bad is not None:
        return bad
    work_dtype = np.dtype(work_dtype)
    in_place = work_dtype == data.dtype and arrays.is_c(data)
    work = data if in_place else storage.astype(data, work_dtype)
    flat = arrays.flat(work)
    n = idx.size
    strides = layout.contiguous_strides(work.shape)
    dim_stride = strides[dim]
    strides[dim] = 0
    offs = dim_offsets(idx_shape, strides, dim_stride, idx)
    if arrays.is_array(src):
        sdata = layout.as_1d_if_0d(src)
        vals = arrays.flat(storage.astype(arrays.restride(sdata, idx_shape, sdata.strides), work_dtype))
    else:
        vals = storage.empty((n,), work_dtype)
        storage.fill_(vals, src)
    counts = None
    if mode == "mean":
        counts = storage.empty((flat.size,), np.int64)
        storage.fill_(counts, 1)
    if not include_self:
        _reset_targets(flat, offs, counts, identity)
    if arrays.is_array(src) and mode in _NONDETERMINISTIC:
        alert_not_deterministic(_NONDETERMINISTIC[mode])
    # Deterministic algorithms: float sums walk the lines in order (PyTorch's sorted path).
    ordered = are_deterministic_algorithms_enabled() and flat.dtype.kind == "f"
    empty_counts = storage.empty((0,), np.int64)
    atomic = flat.dtype.kind in "fi" and flat.dtype.itemsize >= 4 and not ordered
    if mode == "copy":
        words = WORDS[flat.dtype.itemsize]
        if words > 1:  # offsets counted in movement words
            offs = dim_offsets(idx_shape, [s * words for s in strides], dim_stride * words, idx)
        put_items(flat, offs, vals)
    elif flat.dtype.kind == "c":
        # Complex sums and products (PyTorch has no complex amax/amin; CUDA no complex
        # atomics): the in-order line walk without the comparisons complex numbers lack.
        launch.grid_stride(K.scatter_lines_complex, n // idx_shape[dim], flat, offs, vals, idx_shape[dim],
                           int(np.prod(idx_shape[dim + 1:])), _LINE_MODES[mode],
                           empty_counts if counts is None else counts)
    elif atomic and mode in ("add", "sum", "mean"):
        launch.grid_stride(K.put_flat_add, n, flat, offs, vals)
        if counts is not None:
            launch.grid_stride(K.count_flat, n, offs, counts)
    elif atomic and flat.dtype.kind == "i" and mode in ("amax", "amin"):
        launch.grid_stride(K.put_flat_max if mode == "amax" else K.put_flat_min, n, flat, offs, vals)
    else:
        line_len = idx_shape[dim]
        inner = int(np.prod(idx_shape[dim + 1:]))
        launch.grid_stride(K.scatter_lines, n // line_len, flat, offs, vals, line_len, inner, _LINE_MODES[mode],
                empty_counts if counts is None else counts)
    if mode == "mean":
        _divide_by_counts(flat, counts)
    if not in_place:
        storage.copy_(target, layout.view(work, target.shape))
    return None


# The scatter products PyTorch's CUDA kernels refuse under deterministic algorithms (its
# sums and means take a sorted path; amax/amin are exact), by the kernel name it reports.
_NONDETERMINISTIC = {"prod": "scatter_reduce_cuda_prod_", "multiply": "scatter_reduce_cuda_kernel"}


def _reset_targets(flat, offs, counts, identity):
    """Elements that receive values start from the reduction's identity (and count 0)."""
    marks = storage.zeros((flat.size,), np.uint8)
    launch.grid_stride(K.mark_flat, offs.size, offs, marks)
    hit = arrays.reinterpret(marks, np.bool_)
    elementwise.ternary("where", hit, flat.dtype.type(identity), flat, flat)
    if counts is not None:
        elementwise.ternary("where", hit, np.int64(0), counts, counts)


def _divide_by_counts(flat, counts):
    """scatter_reduce's mean: sums divided by counts (floor division for integers)."""
    safe = storage.empty(counts.shape, counts.dtype)
    elementwise.binary("maximum", counts, np.int64(1), safe)
    divisor = storage.astype(safe, flat.dtype)
    elementwise.binary("div" if flat.dtype.kind in "fc" else "floor_divide", flat, divisor, flat)
