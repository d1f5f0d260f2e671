"""CPU elementwise loops: unary, binary and ternary ops over NumPy arrays (Numba kernels).

The runners work like PyTorch's TensorIterator: operands arrive already
broadcast to the output's shape (stride 0 on broadcast dims) and cast to the compute
dtype; same-shape contiguous operands run a flat 1-d loop, a broadcast scalar runs a
scalar-operand loop, and anything else has its dimensions merged where memory allows
and runs one 4-d strided loop. So an op compiles at most a few specializations per
dtype, never one per rank or layout.
"""
import numpy as np

from ..plan import merged_layout
from .kernels.loops import loops

__all__ = ["unary", "binary", "ternary", "unary_fresh", "binary_fresh", "binary_scalar_fresh"]

# Below this many elements a serial loop wins: starting threads costs ~2 us.
PARALLEL_THRESHOLD = 1 << 15


def _is_scalar_operand(x):
    return x.__class__ is not np.ndarray or x.ndim == 0 or not any(x.strides)


def _as_scalar(x):
    # np.generic values keep their dtype, so the kernel sees the compute dtype.
    if x.__class__ is np.ndarray:
        return x.reshape(-1)[0] if x.size else x.dtype.type(0)
    return x


def _merged_views(arrays, out):
    """4-d views of `arrays` (scalars become stride-0 arrays) and `out`, dims merged."""
    strides = [list(a.strides) if a.__class__ is np.ndarray and a.ndim else [0] * out.ndim for a in arrays]
    strides.append(list(out.strides))
    shape, strides, extra = merged_layout(out.shape, strides)
    views = [np.lib.stride_tricks.as_strided(
        a if a.__class__ is np.ndarray else np.asarray(a), shape, st)
        for a, st in zip(list(arrays) + [out], strides)]
    return views, extra


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
            (mod.cv_par if par else mod.cv)(a.reshape(-1), _as_scalar(b), flat)
            return out
        if b_c and _is_scalar_operand(a):
            (mod.vc_par if par else mod.vc)(_as_scalar(a), b.reshape(-1), flat)
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
        (mod.cv_par if par else mod.cv)(a.reshape(-1), scalar, out.reshape(-1))
    else:
        (mod.vc_par if par else mod.vc)(scalar, a.reshape(-1), out.reshape(-1))
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


