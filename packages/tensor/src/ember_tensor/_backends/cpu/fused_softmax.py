"""The executor of softmax prologues on the CPU: operands onto the kernel's one layout.

A fused softmax's operands (arrays of one shape, broadcast ones with stride 0) are read
row by row along the softmax's dim, the last one that is not of size 1. Their kept dims
are merged where every operand agrees into at most two runs of rows
(`plan.rows_along`), and the kernel (`kernels.fused_softmax`) reads each operand in
place through its 1-d buffer; other layouts, and negative strides, are first copied
into row order (C-contiguous), as eager's softmax copies its input.

Large inputs run ranges of rows on several threads, above eager's threshold
(`kernels.softmax.PARALLEL_THRESHOLD`): each row's values are the same whichever thread
computes them.
"""
import numpy as np

from ..plan import rows_along
from . import threads
from .kernels.softmax import PARALLEL_THRESHOLD
from .reduction import _flat_buffer

__all__ = ["run"]


def _layout(operands, axis):
    """(n_rows, inner_rows, [(1-d buffer, outer, inner, along) per operand])."""
    shape = operands[0].shape
    flat = [_flat_buffer(a) for a in operands]
    found = rows_along(shape, axis, [st for _, st in flat])
    if found is None:
        flat = [(np.ascontiguousarray(a).reshape(-1), None) for a in operands]
        found = rows_along(shape, axis, [[int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
                                         for _ in operands])
    n_rows, _, inner_rows, strides = found
    return n_rows, inner_rows, [(buf, *st) for (buf, _), st in zip(flat, strides)]


def run(module, operands, axis, out):
    """``out`` ((rows, size), C-contiguous) = softmax along `axis` of the program of
    `module` applied to `operands` (non-empty arrays of one shape; every dim after
    `axis` of size 1)."""
    n_rows, inner_rows, layout = _layout(operands, axis)
    flat_args = [x for operand in layout for x in operand]
    if threads.parallel(out.size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: module.rows(lo, hi, inner_rows, out, *flat_args), n_rows,
                      threads.part_count(), align=1)
    else:
        module.rows(0, n_rows, inner_rows, out, *flat_args)
    return out
