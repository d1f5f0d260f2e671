"""The linear layer: y = x @ W^T + b as one GEMM, with a derivative rule of its own
(PyTorch's `linear` has one too) so that the weight gradient arrives as a contiguous
(out, in) matrix, not the transpose of an (in, out) product.

Device-free: the op checks its operands with PyTorch's errors, then calls its device's
`matmul.linear` (BLAS through NumPy, cuBLAS on a GPU), which reads the weight
transposed in place. It is a matrix product, so it lives in the matmul family.
"""
import math

from ... import _backends
from ..._dispatch import op
from ._common import check_float, array_of, tensor_of

__all__ = ["linear"]


@op()
def linear(input, weight, bias=None):
    """x @ weight.T + bias for x (*, in), weight (out, in), bias (out,).

    >>> import ember_tensor as et
    >>> from ember_tensor._ops.nn import linear
    >>> linear(et.ones(1, 2), et.ones(3, 2), et.zeros(3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    check_float(input, "addmm")
    if input.dim() == 0 or weight.dim() != 2 or input.shape[-1] != weight.shape[1]:
        rows = math.prod(input.shape[:-1]) if input.dim() else 1
        cols = input.shape[-1] if input.dim() else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                           f"{weight.shape[-1]}x{weight.shape[0]})")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {input.dtype} and {weight.dtype}")
    y = _backends.get(input._device).matmul.linear(
        array_of(input), array_of(weight), None if bias is None else array_of(bias))
    return tensor_of(y, input._dtype, input._device)
