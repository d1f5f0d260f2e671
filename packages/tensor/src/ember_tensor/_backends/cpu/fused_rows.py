"""Operands of the CPU row prologues (softmax, layer norm) onto their kernels' one layout.

A row prologue's operands (arrays of one shape, broadcast ones with stride 0) are read a
row at a time, each row a run of elements `along` apart, rows found by a plan function
(`plan.rows_along`, `plan.rows_over_trailing`) that merges the kept dims where every
operand agrees into at most two runs of rows. The kernels read each operand in place
through its 1-d buffer; other layouts, and negative strides, are first copied into row
order (C-contiguous), as eager's row ops copy their input.
"""
import numpy as np

from .reduction import _flat_buffer

__all__ = ["row_layout"]


def row_layout(operands, find):
    """(n_rows, inner_rows, [(1-d buffer, outer, inner, along) per operand]) of `operands`,
    the rows given by ``find(shape, element strides per operand)`` (`plan.rows_along`'s
    result, or None for a layout it does not take)."""
    shape = operands[0].shape
    flat = [_flat_buffer(a) for a in operands]
    found = find(shape, [st for _, st in flat])
    if found is None:
        flat = [(np.ascontiguousarray(a).reshape(-1), None) for a in operands]
        contiguous = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
        found = find(shape, [contiguous for _ in operands])
    n_rows, _, inner_rows, strides = found
    return n_rows, inner_rows, [(buf, *st) for (buf, _), st in zip(flat, strides)]
