"""Operands of the CUDA row prologues (softmax, layer norm) onto their kernels' one layout:
the twin of `_backends.cpu.fused_rows` over device arrays."""
from . import arrays, storage

__all__ = ["row_layout"]


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
