"""The executor of layer norm prologues on the CPU.

A fused layer norm's operands are read a row at a time, each row the trailing
`normalized_shape` dims merged into one run (`plan.rows_over_trailing`, through
`fused_rows.row_layout`; an operand whose trailing dims do not merge, such as a (d,)
bias broadcast over a (k, d) normalized shape, is copied into row order), by the
generated kernel (`kernels.fused_layer_norm`) around eager's row kernel, with eager's
weight and bias (ones and zeros when absent; float32 for a float32 output, as eager's).

Large inputs run ranges of rows on several threads, above eager's threshold
(`kernels.layer_norm.PARALLEL_THRESHOLD`): each row's values are the same whichever
thread computes them.
"""
import numpy as np

from ..plan import rows_over_trailing
from . import threads
from .fused_rows import row_layout
from .kernels.layer_norm import PARALLEL_THRESHOLD, output_affine

__all__ = ["run"]


def _float64_row(a, size, fill):
    # As eager's layer norm passes the affine parameters (`normalization._float64_rows`).
    return np.full(size, fill) if a is None else np.ascontiguousarray(a, np.float64).reshape(size)


def run(module, operands, k, weight, bias, eps, out):
    """``out`` ((rows, size), C-contiguous) = layer norm over the trailing `k` dims of the
    program of `module` applied to `operands` (non-empty arrays of one shape), with
    `weight` and `bias` (arrays of those dims, or None)."""
    size = out.shape[1]
    if all(a.flags.c_contiguous for a in operands):
        # The common case (a residual add of two activations): one run of rows, found
        # without merging dims, which costs as much as a small norm's add.
        n_rows = inner_rows = out.shape[0]
        layout = [(a.reshape(-1), 0, size, 1) for a in operands]
    else:
        n_rows, inner_rows, layout = row_layout(operands, lambda shape, strides: rows_over_trailing(shape, k, strides))
    affine = (*output_affine(out.dtype, _float64_row(weight, size, 1.0), _float64_row(bias, size, 0.0)), float(eps))
    flat_args = [x for operand in layout for x in operand]
    if threads.parallel(out.size, PARALLEL_THRESHOLD):
        threads.split(lambda lo, hi: module.rows(lo, hi, inner_rows, out, *affine, *flat_args), n_rows,
                      threads.part_count(), align=1)
    else:
        module.rows(0, n_rows, inner_rows, out, *affine, *flat_args)
    return out
