"""Convolution (N-d, strided, padded, dilated, grouped, transposed) by im2col + BLAS.

Forward (1-d and 2-d): a Numba im2col lays the padded input out as (C*K, N*L) columns,
and one BLAS GEMM per group multiplies them by the (O/G, C/G*K) weight matrix; 3-d
convolutions use a strided window view of the input and a batched `np.matmul`.
The two backward kernels are the adjoints of that product: `convolution_backward_input`
(col2im) and `convolution_backward_weight`; a transposed convolution *is* the backward
input kernel, and its gradients are a forward convolution and a backward weight.
All three are linear in each argument, so their derivatives are each other (double
backward comes free in the autograd rules).

CUDA tensors run the same algorithm on the device (`_backends.cuda.windows`): an N-d im2col
kernel (padding by bounds checks), the backend's batched GEMM (cuBLAS on a GPU) and a
gather-style col2im kernel (one thread per input element: deterministic, no atomics).
"""
import math

import numpy as np

from ..._dispatch import op
from .._iter import common_device
from ._common import check_float, compute_np_dtype, from_array, ntuple, to_array
from ._windows import add_windows, crop_spatial, output_size, pad_spatial, windows

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


def _im2col(x, kernel, stride, padding, dilation, groups):
    """(N, G, C/G*K, L) columns of input `x` and the output spatial shape (N-d, NumPy)."""
    n, c = x.shape[:2]
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x.shape[2:], kernel, stride, padding, dilation))
    view = windows(pad_spatial(x, padding), kernel, stride, dilation, out)
    cols = view.reshape(n, groups, (c // groups) * math.prod(kernel), math.prod(out))
    return cols, out


def _as_2d(x, kernel, stride, padding, dilation):
    """A 1-d problem as a 2-d one with height 1 (so one compiled kernel serves both)."""
    if len(kernel) == 2:
        return x, kernel, stride, padding, dilation
    return (x[:, :, None, :], (1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
            (1,) + tuple(dilation))


def _columns_2d(x, kernel, stride, padding, dilation):
    """(C*K, N*L) columns of a 1-d or 2-d input (Numba im2col) and the output shape."""
    from ..._backends.cpu.kernels import nn as cpu_nn
    x2, kernel, stride, padding, dilation = _as_2d(x, kernel, stride, padding, dilation)
    out = tuple(output_size(s, k, st, p, d) for s, k, st, p, d in
                zip(x2.shape[2:], kernel, stride, padding, dilation))
    # Scratch memory: every caller consumes the columns before the next im2col.
    return cpu_nn.im2col_2d(pad_spatial(x2, padding), kernel, stride, dilation, out, scratch=True), out


def _per_sample(cols, n):
    """(C*K, N*L) columns viewed as (N, C*K, L), no copy."""
    return cols.reshape(cols.shape[0], n, cols.shape[1] // n if n else 0).transpose(1, 0, 2)


def _grouped_matmul(a, b, groups, transpose_a=False):
    """Block-diagonal product: group g of the rows of `a` (transposed on request) times
    group g of the rows of `b`, the results stacked by rows."""
    parts = [(p.T if transpose_a else p) @ q for p, q in zip(np.split(a, groups), np.split(b, groups))]
    return parts[0] if groups == 1 else np.concatenate(parts, axis=0)


def conv_forward_array(x, w, stride, padding, dilation, groups):
    """Convolution of NumPy arrays: x (N, C, *S), w (O, C/G, *K) -> (N, O, *out)."""
    n, o = x.shape[0], w.shape[0]
    kernel = w.shape[2:]
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        y = np.matmul(w.reshape(groups, o // groups, cols.shape[2]), cols)
        return y.reshape((n, o) + out)
    # One large GEMM per group, (O/G, C/G*K) @ (C/G*K, N*L), then one transposing copy to
    # (N, O, L). Batched per-sample GEMMs would skip the copy, but with a threaded BLAS on
    # a busy machine N small calls cost up to 10x more (measured), so the big GEMM it is.
    cols, out = _columns_2d(x, kernel, stride, padding, dilation)
    y = _grouped_matmul(w.reshape(o, cols.shape[0] // groups), cols, groups)
    out = out[-len(kernel):]
    return np.ascontiguousarray(y.reshape(o, n, math.prod(out)).transpose(1, 0, 2)).reshape((n, o) + out)


def _grad_rows(gy):
    """grad (N, O, *out) as (O, N*L), the layout of the weight-gradient GEMM."""
    n, o = gy.shape[:2]
    length = math.prod(gy.shape[2:])
    return np.ascontiguousarray(gy.reshape(n, o, length).transpose(1, 0, 2)).reshape(o, n * length)


def conv_backward_input_array(gy, w, input_size, stride, padding, dilation, groups):
    """Gradient of `conv_forward_array` w.r.t. x: col2im of W^T @ grad."""
    n, o = gy.shape[:2]
    c = w.shape[1] * groups
    kernel, out = w.shape[2:], gy.shape[2:]
    if len(kernel) > 2:
        wm = w.reshape(groups, o // groups, (c // groups) * math.prod(kernel))
        g = gy.reshape(n, groups, o // groups, math.prod(out))  # explicit sizes: n may be 0
        gcols = np.matmul(wm.transpose(0, 2, 1), g).reshape((n, c) + tuple(kernel) + tuple(out))
        padded = (n, c) + tuple(s + 2 * p for s, p in zip(input_size, padding))
        gx = add_windows(gcols, padded, kernel, stride, dilation, out)
        return crop_spatial(gx, padding, input_size)
    from ..._backends.cpu.kernels import nn as cpu_nn
    gcols = _per_sample(_grouped_matmul(w.reshape(o, math.prod(w.shape[1:])), _grad_rows(gy), groups,
                                        transpose_a=True), n)
    if len(kernel) == 1:
        kernel, stride, padding, dilation = ((1,) + tuple(kernel), (1,) + tuple(stride), (0,) + tuple(padding),
                                             (1,) + tuple(dilation))
        input_size, out = (1,) + tuple(input_size), (1,) + tuple(out)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(input_size, padding))
    gx = crop_spatial(cpu_nn.col2im_2d(gcols, padded, kernel, stride, dilation, out), padding, input_size)
    return gx.reshape((n, c) + tuple(input_size)[-len(w.shape[2:]):])


def conv_backward_weight_array(gy, x, weight_size, stride, padding, dilation, groups):
    """Gradient of `conv_forward_array` w.r.t. w: grad @ cols^T (summed over the batch)."""
    n, o = gy.shape[:2]
    kernel = tuple(weight_size[2:])
    if len(kernel) > 2:
        cols, out = _im2col(x, kernel, stride, padding, dilation, groups)
        g = gy.reshape(n, groups, o // groups, math.prod(out))
        gw = np.matmul(g, cols.transpose(0, 1, 3, 2)).sum(axis=0)
        return gw.reshape(weight_size)
    cols, _ = _columns_2d(x, kernel, stride, padding, dilation)
    rows = _grad_rows(gy)
    # cols @ rows^T, then transposed: OpenBLAS is ~20x slower on the same product taken
    # as rows @ cols^T (a short, very deep GEMM) on this machine.
    gw = np.concatenate([(q @ p.T).T for p, q in zip(np.split(rows, groups), np.split(cols, groups))])
    return gw.reshape(weight_size)


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
    if input._device.type == "cuda":
        return _cuda_convolution(input, weight, bias, size, stride, padding, dilation, groups)
    x, w = to_array(input), to_array(weight, None)
    if transposed:
        y = conv_backward_input_array(x, w, size, stride, padding, dilation, groups)
    else:
        y = conv_forward_array(x, w, stride, padding, dilation, groups)
    if bias is not None:
        y += to_array(bias).reshape((1, -1) + (1,) * nd)  # y is ours: add in place
    return from_array(y, input._dtype, input._device)


def _cuda_convolution(input, weight, bias, transposed_size, stride, padding, dilation, groups):
    """`convolution` on the GPU: im2col + GEMM (+ col2im when transposed) + bias."""
    from ..._backends.cuda import windows as W
    device = common_device((input, weight, bias))
    with W.device_scope(device):
        compute = compute_np_dtype(input._dtype)
        x, w = W.array_of(input, compute), W.array_of(weight, compute)
        if transposed_size is None:
            y = W.conv_forward(x, w, stride, padding, dilation, groups)
        else:
            y = W.conv_backward_input(x, w, transposed_size, stride, padding, dilation, groups)
        if bias is not None:
            W.add_channel_bias(y, W.array_of(bias, compute))
        return W.tensor_of(y, input._dtype, device)


@op()
def convolution_backward_input(grad_output, weight, input_size, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of a convolution w.r.t. its input of spatial size `input_size` (col2im)."""
    nd = weight.dim() - 2
    stride, padding, dilation = _params(nd, stride, padding, dilation)
    size = tuple(input_size)[-nd:]
    if grad_output._device.type == "cuda":
        from ..._backends.cuda import windows as W
        device = common_device((grad_output, weight))
        with W.device_scope(device):
            compute = compute_np_dtype(grad_output._dtype)
            gx = W.conv_backward_input(W.array_of(grad_output, compute), W.array_of(weight, compute), size,
                                       stride, padding, dilation, groups)
            return W.tensor_of(gx, grad_output._dtype, device)
    gx = conv_backward_input_array(to_array(grad_output), to_array(weight), size, stride, padding,
                                   dilation, groups)
    return from_array(gx, grad_output._dtype, grad_output._device)


@op()
def convolution_backward_weight(grad_output, input, weight_size, stride=1, padding=0, dilation=1, groups=1):
    """Gradient of a convolution w.r.t. its weight of shape `weight_size`."""
    nd = len(weight_size) - 2
    stride, padding, dilation = _params(nd, stride, padding, dilation)
    if grad_output._device.type == "cuda":
        from ..._backends.cuda import windows as W
        device = common_device((grad_output, input))
        with W.device_scope(device):
            compute = compute_np_dtype(grad_output._dtype)
            gw = W.conv_backward_weight(W.array_of(grad_output, compute), W.array_of(input, compute),
                                        tuple(weight_size), stride, padding, dilation, groups)
            return W.tensor_of(gw, grad_output._dtype, device)
    gw = conv_backward_weight_array(to_array(grad_output), to_array(input), tuple(weight_size), stride,
                                    padding, dilation, groups)
    return from_array(gw, grad_output._dtype, grad_output._device)
