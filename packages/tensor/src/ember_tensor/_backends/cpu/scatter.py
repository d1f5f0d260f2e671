"""CPU gather and scatter along a dim (scatter_add, scatter_reduce): the odometer kernels
`gather_dim` / `scatter_dim` of `kernels/index.py`, which walk the index's shape and keep
each operand's offset up to date incrementally (one compiled kernel per dtype for every
rank and layout).

Both functions check every index before anything is written and return the first bad
index value (row-major) instead of raising, so that the op raises PyTorch's error. A
contiguous `data` of the work dtype is scattered into directly; anything else through a
working copy that is copied back.
"""
import numpy as np

from ..lazy import lazy
from ..plan import WORDS, word_layout
from .indexing import movement_view
from .lines import flat_buffer

__all__ = ["gather", "scatter"]

K = lazy("cpu.kernels.index")  # Numba loads on first use


def _as_1d_if_0d(arr):
    return arr.reshape(arr.shape or (1,))


def gather(data, dim, index):
    """(out, bad): out[i][j] = data[index[i][j]][j] (dim 0) ... shaped like `index` (a 0-d
    array acts as 1-d); bad is the first index out of range, or None (then out is None)."""
    src = _as_1d_if_0d(data)
    idx = _as_1d_if_0d(index).astype(np.int64, copy=False)
    out = np.empty(idx.size, dtype=src.dtype)
    if idx.size:
        buf, strides = flat_buffer(src)
        dim_size = src.shape[dim]
        ibuf, istrides = flat_buffer(idx)
        if dim_size == 0:
            return None, int(idx.reshape(-1)[0])
        # 16-byte items: the index walks a trailing dim of the item's words, stride 0.
        words = WORDS[src.itemsize]
        shape, strides = word_layout(idx.shape, strides, words)
        dim_stride = strides[dim]
        strides[dim] = 0
        istrides = list(istrides) + [0] * (len(shape) - idx.ndim)
        bad_at, value = K.gather_dim(movement_view(buf), 0, np.array(strides, np.int64), dim_stride, dim_size, ibuf,
                                     0, np.array(istrides, np.int64), np.array(shape, dtype=np.int64),
                                     movement_view(out))
        if bad_at >= 0:
            return None, int(value)
    return out.reshape(index.shape), None


def scatter(target, dim, index, src, mode, include_self, identity, work_dtype):
    """Scatter `src` (an array, or a number) into `target` at `index` along `dim`, in place.

    mode: "copy", "sum"/"add", "prod"/"multiply", "amax", "amin" or "mean" (sums divided
    by counts, floor division for integers); elements that receive values start from
    `identity` instead of their value unless `include_self`. Computes in NumPy dtype
    `work_dtype`. Returns the first index out of range (nothing written), or None.
    """
    in_place = target.dtype == work_dtype and target.ndim > 0 and target.flags.c_contiguous
    dst = target if in_place else np.array(target, dtype=work_dtype, order="C").reshape(target.shape or (1,))
    idx = _as_1d_if_0d(index).astype(np.int64, copy=False)
    if isinstance(src, np.ndarray):
        sbuf, sstrides = flat_buffer(_as_1d_if_0d(src).astype(work_dtype, copy=False))
    else:
        sbuf, sstrides = np.array([src], dtype=work_dtype), np.zeros(idx.ndim, np.int64)
    flat = dst.reshape(-1)
    dst_strides = flat_buffer(dst)[1]
    dim_stride, dim_size = int(dst_strides[dim]), dst.shape[dim]
    dst_strides[dim] = 0
    ibuf, istrides = flat_buffer(idx)
    shape = np.array(idx.shape, dtype=np.int64)
    kernel_mode = K.SCATTER_MODES[mode]
    # Every index is checked before anything is written (first bad one in row-major order).
    bad = (idx < 0) | (idx >= dim_size)
    if bad.any():
        return int(idx[bad][0])
    counts = np.ones(flat.size, np.int64) if mode == "mean" else np.empty(0, np.int64)
    if not include_self and idx.size:
        # Elements that receive values start from the reduction's identity instead of self.
        touched = np.zeros(flat.size, np.int64)
        K.scatter_dim(np.zeros(flat.size), dst_strides, dim_stride, ibuf, 0, istrides, np.zeros(1), 0,
                      np.zeros(idx.ndim, np.int64), shape, 0, touched)
        hit = touched > 0
        flat[hit] = identity
        if mode == "mean":
            counts[hit] = 0
    if idx.size and kernel_mode and flat.dtype.kind == "c":
        _reduce_complex(flat, dst_strides, dim_stride, ibuf, istrides, shape, src, kernel_mode, counts)
    elif idx.size and kernel_mode:
        K.scatter_dim(flat, dst_strides, dim_stride, ibuf, 0, istrides, sbuf, 0, sstrides, shape, kernel_mode, counts)
    elif idx.size:
        # Copies move words: a 16-byte item's two words walk a trailing dim (index stride 0).
        words = WORDS[flat.itemsize]
        wshape, wdst = word_layout(shape.tolist(), dst_strides.tolist(), words)
        extra = [0] * (len(wshape) - idx.ndim)
        K.scatter_dim(movement_view(flat), np.array(wdst, np.int64), dim_stride * words, ibuf, 0,
                      np.array(list(istrides) + extra, np.int64), movement_view(sbuf), 0,
                      np.array(word_layout(shape.tolist(), sstrides.tolist(), words)[1], np.int64),
                      np.array(wshape, np.int64), 0, counts)
    if mode == "mean":
        safe = np.maximum(counts, 1)
        if flat.dtype.kind in "fc":
            flat /= safe
        else:
            flat //= safe
    if not in_place:
        np.copyto(target, dst.reshape(target.shape), casting="unsafe")
    return None


def _reduce_complex(flat, dst_strides, dim_stride, ibuf, istrides, shape, src, kernel_mode, counts):
    """The sums and products of complex scatters, in index order through NumPy's unbuffered
    ufunc.at: the scatter kernel's amax/amin branch compares values, which complex numbers
    do not (PyTorch has no complex amax/amin either). Where each index element lands comes
    from the gather kernel reading an arange of dst's positions."""
    positions = np.empty(int(np.prod(shape)), np.int64)
    # (indices were checked by the caller: the bound here is only the buffer's)
    K.gather_dim(movement_view(np.arange(flat.size, dtype=np.int64)), 0, dst_strides, dim_stride, flat.size, ibuf,
                 0, istrides, shape, movement_view(positions))
    if isinstance(src, np.ndarray):
        values = _as_1d_if_0d(src)[tuple(slice(0, n) for n in shape.tolist())].reshape(-1)
    else:
        values = np.full(positions.size, src, flat.dtype)
    values = values.astype(flat.dtype, copy=False)
    (np.add if kernel_mode == K.SCATTER_MODES["sum"] else np.multiply).at(flat, positions, values)
    if counts.size:
        np.add.at(counts, positions, 1)
