"""The CPU backend: storage is NumPy, elementwise loops are Numba kernels.

The elementwise runners work like PyTorch's TensorIterator: operands arrive already
broadcast to the output's shape (stride 0 on broadcast dims) and cast to the compute
dtype; same-shape contiguous operands run a flat 1-d loop, a broadcast scalar runs a
scalar-operand loop, and anything else has its dimensions merged where memory allows
and runs one 4-d strided loop. So an op compiles at most a few specializations per
dtype, never one per rank or layout.
"""
import numpy as np

from .kernels.loops import loops

__all__ = ["empty", "unary", "binary", "ternary", "as_strided", "PARALLEL_THRESHOLD"]

# Below this many elements a serial loop wins: starting threads costs ~2 us.
PARALLEL_THRESHOLD = 1 << 15
_MAX_DIMS = 4


def empty(shape, np_dtype):
    """Uninitialised contiguous storage for `shape`."""
    return np.empty(shape, np_dtype)


def as_strided(buf, shape, strides, offset):
    """A view of 1-d contiguous buffer `buf` with element `strides` and `offset`."""
    itemsize = buf.itemsize
    return np.ndarray(shape, buf.dtype, buffer=buf, offset=offset * itemsize,
                      strides=tuple(s * itemsize for s in strides))


def _is_scalar_operand(x):
    return x.__class__ is not np.ndarray or x.ndim == 0 or not any(x.strides)


def _as_scalar(x):
    # np.generic values keep their dtype, so the kernel sees the compute dtype.
    if x.__class__ is np.ndarray:
        return x.reshape(-1)[0] if x.size else x.dtype.type(0)
    return x


def _merged_views(arrays, out):
    """Merge dims that are contiguous for every operand; pad to 4 dims (stride 0 allowed)."""
    shape = list(out.shape)
    strides = [list(a.strides) if a.__class__ is np.ndarray and a.ndim else [0] * len(shape)
               for a in arrays]
    strides.append(list(out.strides))
    # Drop size-1 dims, then merge each dim into the one after it where all operands agree.
    keep = [i for i, n in enumerate(shape) if n != 1]
    shape = [shape[i] for i in keep]
    strides = [[st[i] for i in keep] for st in strides]
    i = len(shape) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * shape[i + 1] for st in strides):
            shape[i] *= shape[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
            del shape[i + 1]
        i -= 1
    pad = _MAX_DIMS - len(shape)
    if pad > 0:
        shape = [1] * pad + shape
        strides = [[0] * pad + st for st in strides]
    views = [np.lib.stride_tricks.as_strided(
        a if a.__class__ is np.ndarray else np.asarray(a), shape, st)
        for a, st in zip(list(arrays) + [out], strides)]
    return views, len(shape) - _MAX_DIMS


def _run_strided(fn, views, extra_dims):
    if extra_dims <= 0:
        fn(*views)
        return
    # Rare: more than 4 unmergeable dims. Loop over the leading ones in Python.
    for idx in np.ndindex(*views[-1].shape[:extra_dims]):
        fn(*(v[idx] for v in views))


def unary(name, a, out):
    """out[...] = name(a[...]); `a` already broadcast to out's shape and compute dtype."""
    mod = loops("unary", name)
    par = out.size >= PARALLEL_THRESHOLD
    if a.flags.c_contiguous and out.flags.c_contiguous and a.shape == out.shape:
        (mod.c_par if par else mod.c).__call__(a.reshape(-1), out.reshape(-1))
        return out
    views, extra = _merged_views((a,), out)
    _run_strided(mod.s_par if par else mod.s, views, extra)
    return out


def binary(name, a, b, out):
    """out[...] = name(a[...], b[...]); a, b are arrays broadcastable to out, or scalars."""
    mod = loops("binary", name)
    par = out.size >= PARALLEL_THRESHOLD
    if out.flags.c_contiguous:
        flat = out.reshape(-1)
        a_c = a.__class__ is np.ndarray and a.shape == out.shape and a.flags.c_contiguous
        b_c = b.__class__ is np.ndarray and b.shape == out.shape and b.flags.c_contiguous
        if a_c and b_c:
            (mod.cc_par if par else mod.cc)(a.reshape(-1), b.reshape(-1), flat)
            return out
        if a_c and _is_scalar_operand(b):
            (mod.cs_par if par else mod.cs)(a.reshape(-1), _as_scalar(b), flat)
            return out
        if b_c and _is_scalar_operand(a):
            (mod.sc_par if par else mod.sc)(_as_scalar(a), b.reshape(-1), flat)
            return out
    views, extra = _merged_views((a, b), out)
    _run_strided(mod.ss_par if par else mod.ss, views, extra)
    return out


def binary_fresh(name, a, b):
    """Fast path: a new array = name(a, b) for same-shape C-contiguous arrays, else None."""
    if a.shape != b.shape or not (a.flags.c_contiguous and b.flags.c_contiguous):
        return None
    out = np.empty(a.shape, a.dtype)
    mod = loops("binary", name)
    (mod.cc_par if a.size >= PARALLEL_THRESHOLD else mod.cc)(a.reshape(-1), b.reshape(-1), out.reshape(-1))
    return out


def binary_scalar_fresh(name, a, scalar, tensor_first):
    """Fast path: name(a, scalar) (or name(scalar, a)) into a new array, or None."""
    if not a.flags.c_contiguous:
        return None
    out = np.empty(a.shape, a.dtype)
    mod = loops("binary", name)
    par = a.size >= PARALLEL_THRESHOLD
    if tensor_first:
        (mod.cs_par if par else mod.cs)(a.reshape(-1), scalar, out.reshape(-1))
    else:
        (mod.sc_par if par else mod.sc)(scalar, a.reshape(-1), out.reshape(-1))
    return out


def unary_fresh(name, a):
    """Fast path: a new array = name(a) for a C-contiguous array, else None."""
    if not a.flags.c_contiguous:
        return None
    out = np.empty(a.shape, a.dtype)
    mod = loops("unary", name)
    (mod.c_par if a.size >= PARALLEL_THRESHOLD else mod.c)(a.reshape(-1), out.reshape(-1))
    return out


def ternary(name, a, b, c, out):
    """out[...] = name(a[...], b[...], c[...]) for operands broadcastable to out."""
    mod = loops("ternary", name)
    par = out.size >= PARALLEL_THRESHOLD
    ops = (a, b, c)
    if out.flags.c_contiguous and all(
            x.__class__ is np.ndarray and x.shape == out.shape and x.flags.c_contiguous for x in ops):
        (mod.ccc_par if par else mod.ccc)(*(x.reshape(-1) for x in ops), out.reshape(-1))
        return out
    views, extra = _merged_views(ops, out)
    _run_strided(mod.sss_par if par else mod.sss, views, extra)
    return out


def offset_of(data, buf):
    """Element offset of view `data` inside storage buffer `buf`."""
    return (data.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // buf.itemsize


def is_contiguous(data):
    """Whether the view is C-contiguous (PyTorch ignores strides of size-1 dims, NumPy too)."""
    return data.flags.c_contiguous


def data_ptr(data):
    """Address of the first element."""
    return data.__array_interface__["data"][0]


def to_numpy(data):
    """The host NumPy array for `data` (the same array on the CPU)."""
    return data


def from_numpy(arr, device=None):
    """Backend storage holding a copy of host array `arr` (contiguous)."""
    return np.array(arr, order="C", copy=True)


def copy_(dst, src):
    """Copy `src` (array broadcastable to dst, any dtype, or a host scalar) into `dst`."""
    np.copyto(dst, src, casting="unsafe")
    return dst


def fill_(dst, value):
    """Set every element of `dst` to `value`."""
    dst.fill(value)
    return dst


def astype(data, np_dtype):
    """A copy of `data` converted to `np_dtype`."""
    return data.astype(np_dtype)


def broadcast_to(data, shape):
    """A writeable-typed stride-0 view of `data` expanded to `shape` (no copy)."""
    ndim = len(shape)
    strides = [0] * (ndim - data.ndim) + [
        s if n == m else 0 for s, n, m in zip(data.strides, data.shape, shape[ndim - data.ndim:])]
    return np.lib.stride_tricks.as_strided(data, shape, strides)


def matmul(a, b):
    """Matrix product through NumPy (BLAS for float32/float64)."""
    return np.matmul(a, b)
from .reduction import *  # noqa: E402,F401,F403 - reductions: reduce, arg_reduce, var_mean, median
