"""Convolution (N-d, strided, padded, dilated, grouped, transposed): the ops.

Each op checks its arguments with PyTorch's errors and plans the output size, then calls
its device's `conv` backend family (im2col + GEMM on both devices: `_backends/cpu/conv.py`,
`_backends/cuda/conv.py`). The two backward ops are the adjoints of the forward product:
`convolution_backward_input` (col2im) and `convolution_backward_weight`; a transposed
convolution *is* the backward input, and its gradients are a forward convolution and a
backward weight. All three are linear in each argument, so their derivatives are each
other (double backward comes free in the autograd rules).
"""
from ... import _backends
from ..._dispatch import op
from .._iter import common_device
from ._common import array_of, check_float, ntuple, tensor_of

__all__ = ["convolution", "convolution_backward_input", "convolution_backward_weight"]


def _params(nd, stride, padding, dilation):
    stride, padding = ntuple(stride, nd, "stride"), ntuple(padding, nd, "padding")
    dilation = ntuple(dilation, nd, "dilation")
    # Checked before any kernel runs: the Numba loops index without bounds checks.
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    return stride, padding, dilation


def _check_shapes(input, weight, bias, transposed, groups):
    nd = weight.dim() - 2
    if input.dim() != weight.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}D (unbatched) or {weight.dim() + 1}D (batched) input to "
            f"conv{nd}d, but got input of size: {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c = input.shape[1]
    if not transposed:
        if weight.shape[0] % groups:
            raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension 0, "
                               "but got weight of size %s instead" % (groups, groups, list(weight.shape)))
        if weight.shape[1] * groups != c:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got {c} "
                "channels instead")
    elif weight.shape[0] != c:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} "
            f"to have {weight.shape[0]} channels, but got {c} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and tuple(bias.shape) != (out_channels,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional "
                           f"with {out_channels} elements, but got bias of size {list(bias.shape)} instead")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) should be the same")
    check_float(input, "convolution")


@op()
def convolution(input, weight, bias=None, stride=1, padding=0, dilation=1, transposed=False,
                output_padding=0, groups=1):
    """N-d convolution (or transposed convolution) of batched `input` (N, C, *S) with
    `weight` (O, C/groups, *K), or (C, O/groups, *K) when `transposed`.

    >>> import ember_tensor as et
    >>> et.convolution(et.ones(1, 1, 3), et.ones(1, 1, 2)).tolist()
    [[[2.0, 2.0]]]
    """
    _check_shapes(input, weight, bias, transposed, groups)
    nd = weight.dim() - 2
    stride, padding, dilation = _params(nd, stride, padding, dilation)
    spatial, kernel = tuple(input.shape[2:]), tuple(weight.shape[2:])
    size = None
    if transposed:
        out_pad = ntuple(output_padding, nd, "output_padding")
        size = tuple((s - 1) * st - 2 * p + d * (k - 1) + op_ + 1 for s, st, p, d, k, op_ in
                     zip(spatial, stride, padding, dilation, kernel, out_pad))
        if any(s <= 0 for s in size):
            raise RuntimeError(f"Given input size per channel: {list(spatial)}. "
                               f"Calculated output size per channel: {list(size)}. Output size is too small")
    else:
        for s, k, p, d in zip(spatial, kernel, padding, dilation):
            if s + 2 * p < d * (k - 1) + 1:
                raise RuntimeError(
                    f"Calculated padded input size per channel: ({' x '.join(str(s + 2 * p) for s, p in zip(spatial, padding))}). "
                    f"Kernel size: ({' x '.join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))}). "
                    "Kernel size can't be greater than actual input size")
    device = common_device((input, weight, bias))
    conv = _backends.get(device).conv
    x, w = array_of(input), array_of(weight)
    b = None if bias is None else array_of(bias)
    if transposed:
        y = conv.backward_input(x, w, size, stride, padding, dilation, groups)
        if b is not None:
            conv.add_channel_bias(y, b)  # y is ours: add in place
    else:
        # The backend adds the bias as it computes (on the CPU inside the GEMM).
        y = conv.forward(x, w, stride, padding, dilation, groups, b)
    return tensor_of(y, input._dtype, device)


@op()
def convolution_backward_input(grad_output, weight, input_size, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of a convolution w.r.t. its input of spatial size `input_size` (col2im)."""
    nd = weight.dim() - 2
    stride, padding, dilation = _params(nd, stride, padding, dilation)
    size = tuple(input_size)[-nd:]
    device = common_device((grad_output, weight))
    gx = _backends.get(device).conv.backward_input(array_of(grad_output), array_of(weight), size, stride,
                                                   padding, dilation, groups)
    return tensor_of(gx, grad_output._dtype, device)


@op()
def convolution_backward_weight(grad_output, input, weight_size, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of a convolution w.r.t. its weight of shape `weight_size`."""
    nd = len(weight_size) - 2
    stride, padding, dilation = _params(nd, stride, padding, dilation)
    device = common_device((grad_output, input))
    gw = _backends.get(device).conv.backward_weight(array_of(grad_output), array_of(input), tuple(weight_size),
                                                    stride, padding, dilation, groups)
    return tensor_of(gw, grad_output._dtype, device)
