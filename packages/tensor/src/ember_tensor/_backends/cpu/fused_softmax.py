"""The executor of softmax prologues on the CPU.

A fused softmax's operands are read row by row along the softmax's dim, the last one that
is not of size 1 (`plan.rows_along`, through `fused_rows.row_layout`), by the generated
kernel (`kernels.fused_softmax`).

Large inputs run ranges of rows on several threads, above eager's threshold
(`kernels.softmax.PARALLEL_THRESHOLD`): each row's values are the same whichever thread
computes them.
"""
from ..plan import rows_along
from . import threads
from .fused_rows import row_layout
from .kernels.softmax import PARALLEL_THRESHOLD

__all__ = ["run"]


def run(module, operands, axis, out):
    """``out`` ((rows, size), C-contiguous) = softmax along `axis` of the program of
    `module` applied to `operands` (non-empty arrays of one shape; every dim after
    `axis` of size 1)."""
    if all(a.flags.c_contiguous for a in operands):
        # The common case (a scale and a mask of the scores' shape): one run of rows, found
        # without merging dims, which costs as much as a small softmax (as `fused_layer_norm`).
        n_rows = inner_rows = out.shape[0]
        layout = [(a.reshape(-1), 0, out.shape[1], 1) for a in operands]
    else:
        n_rows, inner_rows, layout = row_layout(operands, lambda shape, strides: rows_along(shape, axis, strides))
    flat_args = [x for operand in layout for x in operand]
    if threads.parallel(out.size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: module.rows(lo, hi, inner_rows, out, *flat_args), n_rows,
                      threads.part_count(), align=1)
    else:
        module.rows(0, n_rows, inner_rows, out, *flat_args)
    return out
