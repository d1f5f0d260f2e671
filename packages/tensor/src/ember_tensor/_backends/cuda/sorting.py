"""CUDA sorting and selection along a dim: sort, argsort, top-k, k-th value, nanmedian, mode.

The same functions as `_backends.cpu.sorting`, with the same results (the stable sort's
order, NaN largest), over device arrays. Every function runs the same steps:
  1. the lines along `dim` as a contiguous (rows, n) buffer (`lines`: no copy when `dim`
     is last and the input contiguous), the values read as unsigned integers of their
     size so that one kernel moves any dtype (bfloat16 included);
  2. keys in float32 (float16, bfloat16), float64 or int64 (integers, bool) and their
     uint64 order codes, each with its column index, rows padded to a power of two;
  3. a bitonic sort of the (code, index) pairs: in shared memory for rows up to
     `CHUNK`, with global stages in between for longer ones (`_bitonic`);
  4. a read-out kernel picks the columns each op returns.
`lines`/`from_lines` and `sorted_codes` also serve scans, counting and the median
reduction (`reduction.median`).
"""
import numpy as np

from . import arrays, launch, storage
from .kernels import sorting as K

# The family's functions; `lines`, `from_lines`, `sorted_codes` and `median_lines` also
# serve the scans, counting and reduction modules of this backend.
__all__ = ["sort", "argsort", "topk", "select", "mode"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_LOW = (np.dtype(np.float16), arrays.BF16)


def as_bits(a):
    return arrays.reinterpret(a, _UINT[a.dtype.itemsize])


def lines(a, dim, np_dtype=None):
    """(buf, n_rows, n): the lines of device array `a` along `dim` as a contiguous 1-d
    buffer of n_rows * n elements in `np_dtype` (default: a's), copied only if needed."""
    if a.ndim == 0:
        a, dim = a.reshape((1,)), 0
    order = [d for d in range(a.ndim) if d != dim] + [dim]
    view = arrays.restride(a, tuple(a.shape[d] for d in order), tuple(a.strides[d] for d in order))
    dtype = np.dtype(np_dtype or a.dtype)
    n = a.shape[dim]
    n_rows = 1
    for d in order[:-1]:
        n_rows *= a.shape[d]
    if n_rows * n == 0:
        return storage.empty((0,), dtype), n_rows, n
    if view.dtype != dtype or not arrays.is_c(view):
        view = storage.astype(view, dtype)
    return arrays.flat(view), n_rows, n


def from_lines(buf, shape, dim, m):
    """Inverse of `lines`: (rows, m) buffer back to `shape` with m at `dim`, contiguous."""
    if not shape:
        return buf.reshape(())
    shape = list(shape)
    shape[dim] = m
    order = [d for d in range(len(shape)) if d != dim] + [dim]
    moved = tuple(shape[d] for d in order)
    if dim == len(shape) - 1 or buf.size == 0:
        return buf.reshape(tuple(shape)) if buf.size else storage.empty(tuple(shape), buf.dtype)
    out = storage.empty(tuple(shape), buf.dtype)
    view = arrays.restride(out, moved, tuple(out.strides[d] for d in order))
    storage.copy_(view, buf.reshape(moved))
    return out


def _launch_blocks(kernel, tasks, chunk, *args):
    """One block per task (blocks stride over tasks) for the shared-memory kernels."""
    if launch.SIMULATOR:
        launch.sim_launch_synced(kernel, 1, K.THREADS, *args)
        return
    _launch_blocks_of(kernel, tasks, max(32, min(K.THREADS, chunk // 2)), *args)


def _launch_blocks_of(kernel, tasks, block, *args):
    """`kernel` on up to `tasks` blocks of `block` threads, on the current stream (a GPU)."""
    launch.launch_grid(kernel, min(tasks, launch.max_blocks()), block, *args)


def _bitonic(codes, idx, n_rows, width):
    """Sort each padded row of (code, index) pairs in place."""
    if width == 1:
        return
    chunk = min(width, K.CHUNK)
    tasks = n_rows * (width // chunk)
    _launch_blocks(K.shared_sort, tasks, chunk, codes, idx, n_rows, width, chunk)
    k = 2 * chunk
    while k <= width:
        j = k // 2
        while j >= chunk:  # pairs a chunk apart or more: one global stage each
            launch.grid_stride(K.global_step, n_rows * width // 2, codes, idx, n_rows, width, k, j)
            j //= 2
        _launch_blocks(K.shared_merge, tasks, chunk, codes, idx, n_rows, width, chunk, k)
        k *= 2


def sort_key_dtype(dtype):
    if dtype.kind == "f" or dtype in _LOW:
        return np.dtype(np.float64 if dtype == np.float64 else np.float32)
    return np.dtype(np.int64)


def sorted_codes(a, dim, descending):
    """(codes, idx, n_rows, n, width): the sorted (code, index) pairs of each line of
    device array `a` along `dim`; rows padded to `width` (a power of two)."""
    key_dtype = sort_key_dtype(a.dtype)
    keys, n_rows, n = lines(a, dim, key_dtype)
    width = 1
    while width < n:
        width *= 2
    codes = storage.empty((n_rows * width,), np.uint64)
    idx = storage.empty((n_rows * width,), np.int64)
    if n_rows * n == 0:
        return codes, idx, n_rows, n, width
    launch_codes(keys, n_rows, n, width, descending, codes, idx)
    _bitonic(codes, idx, n_rows, width)
    return codes, idx, n_rows, n, width


def launch_codes(keys, n_rows, n, width, descending, codes, idx):
    """codes/idx (rows padded to `width`) of the (n_rows, n) float32/float64/int64 keys."""
    total = n_rows * width
    flag = bool(descending)
    if keys.dtype == np.float32:
        launch.grid_stride(K.float32_codes, total, keys, as_bits(keys), n_rows, n, width, flag, codes, idx)
    elif keys.dtype == np.float64:
        launch.grid_stride(K.float64_codes, total, keys, as_bits(keys), n_rows, n, width, flag, codes, idx)
    else:
        launch.grid_stride(K.int_codes, total, as_bits(keys), n_rows, n, width, flag, codes, idx)


def _columns(a, dim, descending, start, m):
    """(values, indices) of columns [start, start + m) of the sorted lines of `a`."""
    shape = tuple(a.shape)
    _, idx, n_rows, n, width = sorted_codes(a, dim, descending)
    src, _, _ = lines(as_bits(a), dim)
    values = storage.empty((n_rows * m,), src.dtype)
    indices = storage.empty((n_rows * m,), np.int64)
    if n_rows * m:
        launch.grid_stride(K.take_sorted, n_rows * m, src, n, idx, width, start, m, values, indices)
    return arrays.reinterpret(from_lines(values, shape, dim, m), a.dtype), from_lines(indices, shape, dim, m)


def sort(a, dim, descending):
    """(values, int64 indices) of `a` sorted stably along `dim`."""
    n = a.shape[dim] if a.ndim else 1
    return _columns(a, dim, descending, 0, n)


def argsort(a, dim, descending):
    """The int64 indices that sort `a` stably along `dim`."""
    _, idx, n_rows, n, width = sorted_codes(a, dim, descending)
    if n_rows * n == 0:
        return storage.empty(tuple(a.shape), np.int64)
    if width != n:  # drop the padding columns
        idx = arrays.restride(idx, (n_rows, n), (width * 8, 8))
    rows = idx if width == n else storage.astype(idx, np.int64)
    return from_lines(arrays.flat(rows), tuple(a.shape), dim, n)


def topk(a, k, dim, largest):
    """(values, indices): the first k of the stable sort along `dim` (descending when
    `largest`), PyTorch's top-k order with ties by index."""
    n = a.shape[dim] if a.ndim else 1
    if 0 < k <= K.SELECT_K and n > K.CHUNK and a.size:  # few of many: select
        return _selected(a, dim, k, largest)
    return _columns(a, dim, largest, 0, k)


def _selected(a, dim, k, largest):
    """topk by `topk_select`: one block per row keeps only k candidates per thread."""
    keys, n_rows, n = lines(a, dim, sort_key_dtype(a.dtype))
    codes = storage.empty((n_rows * n,), np.uint64)
    scratch = storage.empty((n_rows * n,), np.int64)
    launch_codes(keys, n_rows, n, n, largest, codes, scratch)
    chosen = storage.empty((n_rows * k,), np.int64)
    if launch.SIMULATOR:
        launch.sim_launch_synced(K.topk_select, 1, K.SELECT_THREADS, codes, n, k, chosen)
    else:
        _launch_blocks_of(K.topk_select, n_rows, K.SELECT_THREADS, codes, n, k, chosen)
    src, _, _ = lines(as_bits(a), dim)
    values = storage.empty((n_rows * k,), src.dtype)
    indices = storage.empty((n_rows * k,), np.int64)
    launch.grid_stride(K.take_sorted, n_rows * k, src, n, chosen, k, 0, k, values, indices)
    shape = tuple(a.shape)
    return arrays.reinterpret(from_lines(values, shape, dim, k), a.dtype), from_lines(indices, shape, dim, k)


def _position_rows(a, dim, mode, k):
    """Device arrays (values, indices), one per line along `dim` (lines as `lines` lays
    them out), at the column `take_position` picks in mode `mode`."""
    codes, idx, n_rows, n, width = sorted_codes(a, dim, False)
    src, _, _ = lines(as_bits(a), dim)
    values = storage.empty((n_rows,), src.dtype)
    indices = storage.empty((n_rows,), np.int64)
    if n_rows and n:
        floating = a.dtype.kind == "f" or a.dtype in _LOW
        launch.grid_stride(K.take_position, n_rows, src, n, codes, idx, width, mode, k, floating,
                      values, indices)
    return arrays.reinterpret(values, a.dtype), indices


def select(a, dim, how, k=0):
    """(values, indices) with size 1 at `dim`: the (k+1)-th smallest ("kth") or the lower
    median ignoring NaN ("nanmedian") of each line."""
    mode = {"kth": K.FIXED, "nanmedian": K.NANMEDIAN}[how]
    values, indices = _position_rows(a, dim, mode, k)
    shape = tuple(a.shape)
    return from_lines(values, shape, dim, 1), from_lines(indices, shape, dim, 1)


def mode(a, dim):
    """(values, indices) with size 1 at `dim`: each line's smallest most frequent value
    and the index of its last occurrence."""
    shape = tuple(a.shape)
    codes, idx, n_rows, n, width = sorted_codes(a, dim, False)
    src, _, _ = lines(as_bits(a), dim)
    values = storage.empty((n_rows,), src.dtype)
    indices = storage.empty((n_rows,), np.int64)
    if n_rows and n:
        floating = a.dtype.kind == "f" or a.dtype in _LOW
        launch.grid_stride(K.mode_rows, n_rows, src, n, codes, idx, width, floating, values, indices)
    return arrays.reinterpret(from_lines(values, shape, dim, 1), a.dtype), from_lines(indices, shape, dim, 1)


def median_lines(a, dim):
    """(values, indices) device arrays of the lower median (NaN propagates) along `dim`,
    shaped like `a` without `dim`; over all elements when `dim` is None (indices None)."""
    if dim is None:
        flat = arrays.flat(a if arrays.is_c(a) else storage.astype(a, a.dtype))
        values, _ = _position_rows(flat, 0, K.MEDIAN, 0)
        return values.reshape(()), None
    values, indices = _position_rows(a, dim, K.MEDIAN, 0)
    kept = tuple(n for d, n in enumerate(a.shape) if d != dim)
    return values.reshape(kept), indices.reshape(kept)
