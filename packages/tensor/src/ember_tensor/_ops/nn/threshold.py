"""relu's backward as one op, PyTorch's `threshold_backward`: the gradient where the input
(relu's result) is above the threshold, zero elsewhere, so a NaN passes its gradient on.

At threshold 0 (relu) it is one binary kernel reading the gradient and the result, where
`where(result <= 0, 0, grad)` made a comparison pass, a boolean temporary and a strided
ternary pass.
"""
from ..._dispatch import op
from ..elementwise import where
from ..elementwise.arithmetic import binary

__all__ = ["threshold_backward"]


@op()
def threshold_backward(grad_output, input, threshold):
    """`grad_output` where `input` > `threshold`, else 0 (shapes broadcast).

    >>> import ember_tensor as torch
    >>> from ember_tensor import nn_ops
    >>> nn_ops.threshold_backward(torch.ones(3), torch.tensor([-1., 0., 2.]), 0).tolist()
    [0.0, 0.0, 1.0]
    """
    if threshold == 0 and grad_output._dtype is input._dtype:
        return binary("relu_backward", grad_output, input)
    return where(input <= threshold, 0.0, grad_output)
