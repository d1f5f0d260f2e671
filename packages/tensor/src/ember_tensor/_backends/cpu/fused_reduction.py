"""The executor of fused reductions on the CPU: operands onto the kernels' one layout.

A fused reduction's operands (arrays of one shape, broadcast ones with stride 0) are
reduced over `dims`. The kept dims and the reduced dims are each merged where every
operand agrees (`plan.merge_dims_jointly`); when each merges to
at most one dim, every operand is a 1-d buffer with an offset, a row stride and a reduced
stride, and the kernel (`kernels.fused_reduction`) reads it in place. Otherwise, and for
negative strides, the operands are first copied into (kept, reduced) order, as the
built-in reductions do for the layouts their kernels lack.

Large inputs split as the built-in reductions' rows layout does (`reduction._launch`):
ranges of rows over threads, or a few long rows cut into pieces merged in order — the
same piece sizes, so a full float32 sum adds in eager's order.
"""
import numpy as np

from ..plan import merge_dims_jointly
from . import threads
from .reduction import PARALLEL_THRESHOLD, _MIN_CHUNK, _flat_buffer, _init

__all__ = ["run"]


# (shape, dims, each operand's strides and item size) -> (n_o, n_r, [(row stride, reduced
# stride) per operand], or None where the operands are copied): merging dims costs more
# than a small reduction's kernel, and a compiled call meets the same layouts again and again.
_layouts = {}
_LAYOUTS_SIZE = 256
_inits = {}   # (kind, dtype) -> `reduction._init`'s value


def _strides_of(shape, dims, operands):
    """`_layout`'s numbers for operands of `shape` (their element strides found anew)."""
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    n_o = 1
    for d in kept_dims:
        n_o *= shape[d]
    n_r = 1
    for d in dims:
        n_r *= shape[d]
    if not all(s >= 0 for a in operands for s in a.strides):
        return n_o, n_r, None
    strides = [_flat_buffer(a)[1] for a in operands]
    kept = merge_dims_jointly([shape[d] for d in kept_dims], [[st[d] for d in kept_dims] for st in strides])
    red = merge_dims_jointly([shape[d] for d in dims], [[st[d] for d in dims] for st in strides])
    if len(kept) > 1 or len(red) > 1:
        return n_o, n_r, None
    so = kept[0][1] if kept else [0] * len(operands)
    sr = red[0][1] if red else [0] * len(operands)
    return n_o, n_r, list(zip(so, sr))


def _layout(operands, dims):
    """(n_o, n_r, [(buffer, offset, row stride, reduced stride) per operand])."""
    shape = operands[0].shape
    key = (shape, dims, tuple((a.strides, a.itemsize) for a in operands))
    found = _layouts.get(key)
    if found is None:
        found = _strides_of(shape, dims, operands)
        if len(_layouts) >= _LAYOUTS_SIZE:
            _layouts.clear()
        _layouts[key] = found
    n_o, n_r, strides = found
    if strides is not None:
        return n_o, n_r, [(_flat_buffer(a)[0], 0, so, sr) for a, (so, sr) in zip(operands, strides)]
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    order = kept_dims + list(dims)
    packed = [np.ascontiguousarray(a.transpose(order)).reshape(-1) for a in operands]
    return n_o, n_r, [(buf, 0, n_r, 1) for buf in packed]


def run(module, kind, operands, dims, out):
    """``out`` (the kept dims, flat and contiguous) = reduction `kind` over `dims` of the
    program of `module` applied to `operands` (non-empty arrays of one shape)."""
    n_o, n_r, layout = _layout(operands, dims)
    init_key = (kind, out.dtype)
    init = _inits.get(init_key)
    if init is None:
        init = _inits[init_key] = _init(kind, out.dtype if kind in ("amax", "amin") else np.dtype(np.float64))
    flat_args = [x for operand in layout for x in operand]
    if not threads.parallel(n_o * n_r, PARALLEL_THRESHOLD):
        module.rows(0, n_o, n_r, init, out, *flat_args)
        return out
    count = threads.part_count()
    nchunks = 1 if n_o >= 2 * count else max(1, min(-(-4 * count // n_o), n_r // _MIN_CHUNK))
    if nchunks == 1:
        threads.split(lambda lo, hi: module.rows(lo, hi, n_r, init, out, *flat_args), n_o, count, align=1)
        return out
    size = -(-n_r // nchunks)
    for o in range(n_o):
        partial = np.full(nchunks, init)
        threads.split(lambda lo, hi: module.part(o, n_r, size, lo, hi, init, partial, *flat_args),
                      nchunks, count, align=1)
        module.finish(partial, n_r, init, out, o)
    return out
