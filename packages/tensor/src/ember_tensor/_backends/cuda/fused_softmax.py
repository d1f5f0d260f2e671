"""Softmax prologues on CUDA: an elementwise program's values read by eager's softmax
row kernel.

The CUDA twin of `_backends.cpu.fused_softmax`: `kernels.softmax.softmax_rows` as it is
(a block per row, float64 merges through `block_max`/`block_sum`, float32 inputs taking
float32's exp, `safe_log`), except that where eager's kernel reads ``x[base + j]`` this
one calls the program's device function on each operand's element (``f(b0[p0 + j*sr0],
...)``, row starts by `plan.rows_along`). It computes a value each time eager reads one
(three passes), the same value each time, so results are eager ember's on CUDA bit for
bit and the program's result is never in memory.

Kernels close over the program's device function, so they compile in memory once per
process per (program, dtype), as ``ember.kernel``'s do (not disk-cached).
"""
import numpy as np
from numba import cuda, float64

from ..plan import rows_along
from . import arrays
from .fused_rows import row_layout, rows_kernel
from .kernels import softmax as _eager
from .kernels.rows import INF, block_max, block_sum
from .rows import launch_rows

__all__ = ["run"]

_KERNEL = '''
def rows(n_rows, size, nb, log, single, y, {operands}):
    part = cuda.shared.array(0, float64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        oa = row // nb
        ob = row - oa * nb
{starts}
        peak = -INF
        for j in range(tid, size, step):
            v = f({elements})
            if v > peak or v != v:
                peak = v
        peak = block_max(part, peak)
        total = 0.0
        for j in range(tid, size, step):
            total += shifted_exp(f({elements}) - peak, single)
        total = block_sum(part, total)
        if log:
            log_total = safe_log(total)
            for j in range(tid, size, step):
                y[base + j] = (f({elements}) - peak) - log_total
        else:
            for j in range(tid, size, step):
                y[base + j] = shifted_exp(f({elements}) - peak, single) / total
'''

def _kernel(module_name, program, arity):
    namespace = {"cuda": cuda, "float64": float64, "INF": INF, "block_max": block_max,
                 "block_sum": block_sum, "shifted_exp": _eager.shifted_exp, "safe_log": _eager.safe_log,
                 "f": cuda.jit(device=True)(program)}
    return rows_kernel(module_name, _KERNEL, arity, "j", namespace)


def run(module_name, program, np_dtype, log, operands, axis, out):
    """``out`` ((rows, size), C-contiguous) = softmax (`log`: log_softmax) along `axis` of the
    device function `program` applied to device `operands` (non-empty, broadcast to one
    shape whose dims after `axis` have size 1)."""
    n_rows, inner_rows, layout = row_layout(operands, lambda shape, strides: rows_along(shape, axis, strides))
    size = operands[0].shape[axis]
    rows = _kernel(module_name, program, len(operands))
    flat_args = [x for operand in layout for x in operand]
    launch_rows(rows, n_rows, size, n_rows, size, inner_rows, log, np.dtype(np_dtype) == np.float32,
                arrays.flat(out), *flat_args)
    return out
