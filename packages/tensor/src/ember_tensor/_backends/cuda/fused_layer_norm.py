"""Layer norm prologues on CUDA: an elementwise program's values read by eager's layer
norm row kernel.

The CUDA twin of `_backends.cpu.fused_layer_norm`: `kernels.normalization.norm_rows` as
layer norm launches it (a block per row, groups = inner = 1: two-pass float64 statistics
through `block_sum`, `inverse_sqrt`, the affine transform in float64), except that where
eager's kernel reads ``x[base + k]`` this one calls the program's device function on each
operand's element (``f(b0[p0 + k*sr0], ...)``, row starts by `plan.rows_over_trailing`).
It computes a value each time eager reads one (three passes), the same value each time,
so results are eager ember's on CUDA bit for bit and the program's result is never in
memory. The mean and rstd eager also stores are not: a fused group's backward recomputes
the eager composition.

Kernels close over the program's device function, so they compile in memory once per
process per (program, dtype), as ``ember.kernel``'s do (not disk-cached).
"""
import numpy as np
from numba import cuda, float64

from ..plan import rows_over_trailing
from . import arrays, storage
from .fused_rows import row_layout, rows_kernel
from .kernels.rows import block_sum, exact_product, inverse_sqrt
from .rows import launch_rows, optional_operand

__all__ = ["run"]

_KERNEL = '''
def rows(n_rows, size, nb, eps, weight, bias, has_weight, has_bias, y, {operands}):
    part = cuda.shared.array(0, float64)
    tid = cuda.threadIdx.x
    step = cuda.blockDim.x
    for row in range(cuda.blockIdx.x, n_rows, cuda.gridDim.x):
        base = row * size
        oa = row // nb
        ob = row - oa * nb
{starts}
        total = 0.0
        for k in range(tid, size, step):
            total += f({elements})
        mu = block_sum(part, total) / size
        total = 0.0
        for k in range(tid, size, step):
            d = f({elements}) - mu
            total += exact_product(d, d)
        r = inverse_sqrt(block_sum(part, total) / size + eps)
        for k in range(tid, size, step):
            v = exact_product(f({elements}) - mu, r)
            if has_weight:
                v = exact_product(v, weight[k])
            if has_bias:
                v = v + bias[k]
            y[base + k] = v
'''

def _kernel(module_name, program, arity):
    namespace = {"cuda": cuda, "float64": float64, "block_sum": block_sum, "inverse_sqrt": inverse_sqrt,
                 "exact_product": exact_product, "f": cuda.jit(device=True)(program)}
    return rows_kernel(module_name, _KERNEL, arity, "k", namespace)


def run(module_name, program, np_dtype, operands, k, weight, bias, eps, out):
    """``out`` ((rows, size), C-contiguous) = layer norm over the trailing `k` dims of the
    device function `program` applied to device `operands` (non-empty, broadcast to one
    shape), with `weight` and `bias` (device arrays of those dims, or None)."""
    n_rows, inner_rows, layout = row_layout(operands, lambda shape, strides: rows_over_trailing(shape, k, strides))
    size = out.shape[1]
    placeholder = storage.empty((1,), np.float64)
    w, has_w = optional_operand(weight, placeholder, np.float64)
    b, has_b = optional_operand(bias, placeholder, np.float64)
    rows = _kernel(module_name, program, len(operands))
    flat_args = [x for operand in layout for x in operand]
    launch_rows(rows, n_rows, size, n_rows, size, inner_rows, float(eps), w, b, has_w, has_b,
                arrays.flat(out), *flat_args)
    return out
