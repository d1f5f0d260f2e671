"""The linear layer's kernel: y = x @ W^T + b as one BLAS GEMM, with a derivative rule of
its own (PyTorch's `linear` has one too) so that the weight gradient arrives as a
contiguous (out, in) matrix, not the transpose of an (in, out) product. CUDA inputs take
the device GEMM (cuBLAS on a GPU) with the weight read transposed in place."""
import math

import numpy as np

from ..._dispatch import op
from ._common import check_float, from_array, to_array

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
    if input._device.type == "cuda":
        from ..._backends.cuda import rows as _cuda_rows
        return _cuda_rows.linear(input, weight, bias)
    x = to_array(input)
    lead = x.shape[:-1]
    y = x.reshape(-1, x.shape[-1]) @ to_array(weight).T  # BLAS reads W^T in place
    if bias is not None:
        y += to_array(bias)
    return from_array(y.reshape(lead + (weight.shape[0],)), input._dtype, input._device)
