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


def _layout(operands, dims):
    """(n_o, n_r, [(buffer, offset, row stride, reduced stride) per operand])."""
    shape = operands[0].shape
    kept_dims = [d for d in range(len(shape)) if d not in dims]
    n_o = int(np.prod([shape[d] for d in kept_dims], dtype=np.int64))
    n_r = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    if all(s >= 0 for a in operands for s in a.strides):
        flat = [_flat_buffer(a) for a in operands]
        kept = merge_dims_jointly([shape[d] for d in kept_dims], [[st[d] for d in kept_dims] for _, st in flat])
        red = merge_dims_jointly([shape[d] for d in dims], [[st[d] for d in dims] for _, st in flat])
        if len(kept) <= 1 and len(red) <= 1:
            so = kept[0][1] if kept else [0] * len(operands)
            sr = red[0][1] if red else [0] * len(operands)
            return n_o, n_r, [(buf, 0, so[k], sr[k]) for k, (buf, _) in enumerate(flat)]
    order = kept_dims + list(dims)
    packed = [np.ascontiguousarray(a.transpose(order)).reshape(-1) for a in operands]
    return n_o, n_r, [(buf, 0, n_r, 1) for buf in packed]


def run(module, kind, operands, dims, out):
    """``out`` (the kept dims, flat and contiguous) = reduction `kind` over `dims` of the
    program of `module` applied to `operands` (non-empty arrays of one shape)."""
    n_o, n_r, layout = _layout(operands, dims)
    init = _init(kind, out.dtype if kind in ("amax", "amin") else np.dtype(np.float64))
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
