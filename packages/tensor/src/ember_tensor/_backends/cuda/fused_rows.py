"""Operands of the CUDA row prologues (softmax, layer norm) onto their kernels' one layout:
the twin of `_backends.cpu.fused_rows` over device arrays, and their kernels' one compile."""
from numba import cuda

from .. import codegen
from . import arrays, storage

__all__ = ["row_layout", "rows_kernel"]

_compiled = {}   # module name -> the rows kernel


def rows_kernel(module_name, template, arity, index, namespace):
    """The ``rows`` kernel of `template` over `arity` operands, compiled in memory once per
    module name: `template` reads operand k's element as ``b{k}[p{k} + <index> * sr{k}]``
    (``{operands}``, ``{starts}`` and ``{elements}`` filled here), `namespace` its globals.
    Kernels close over the program's device function, so they are not disk-cached."""
    found = _compiled.get(module_name)
    if found is None:
        ks = range(arity)
        source = template.format(operands=", ".join(f"b{k}, soa{k}, sob{k}, sr{k}" for k in ks),
                                 starts="\n".join(f"        p{k} = oa * soa{k} + ob * sob{k}" for k in ks),
                                 elements=", ".join(f"b{k}[p{k} + {index} * sr{k}]" for k in ks))
        found = _compiled[module_name] = cuda.jit(
            codegen.compile_function(source, "rows", namespace, f"<ember fused rows {module_name}>"))
    return found


def row_layout(operands, find):
    """(n_rows, inner_rows, [(1-d array, outer, inner, along) per operand]) of device
    `operands`, the rows given by ``find(shape, element strides per operand)``
    (`plan.rows_along`'s result, or None: the operands are then copied into row order,
    C-contiguous)."""
    shape = operands[0].shape
    strides = [[s // a.dtype.itemsize for s in a.strides] for a in operands]
    found = find(shape, strides)
    if found is None:
        operands = [storage.astype(a, a.dtype) for a in operands]
        strides = [[s // a.dtype.itemsize for s in a.strides] for a in operands]
        found = find(shape, strides)
    n_rows, size, inner_rows, geometry = found
    layout = []
    for a, (soa, sob, sr) in zip(operands, geometry):
        span = 1 + (n_rows // inner_rows - 1) * soa + (inner_rows - 1) * sob + (size - 1) * sr
        layout.append((arrays.restride(a, (span,), (a.dtype.itemsize,)), soa, sob, sr))
    return n_rows, inner_rows, layout
