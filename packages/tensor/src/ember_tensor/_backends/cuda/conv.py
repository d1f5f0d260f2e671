"""CUDA convolution (1/2/3-d, strided, padded, dilated, grouped): a device im2col, the
backend's batched GEMM (cuBLAS on a GPU) and a gather-style col2im (one thread per input
element: deterministic, no atomics) for the backward input and transposed convolutions.

The same functions as `_backends.cpu.conv`, over device arrays in their compute dtype.
"""
import math

from . import arrays, elementwise, layout, matmul, storage
from .windows import col2im, im2col_into, window_counts

__all__ = ["forward", "backward_input", "backward_weight", "add_channel_bias"]


def _swap_last(arr):
    """The view of `arr` with its last two dims swapped (a batched transpose)."""
    shape, strides = list(arr.shape), list(arr.strides)
    shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return arrays.restride(arr, tuple(shape), tuple(strides))


# Every convolution product is one batched GEMM over (batch, group) with the group's
# blocks as views (no per-group launches, so depthwise convolutions cost two GEMM calls,
# not 2*G). A weight broadcast over the batch is materialised by the backend's matmul
# only when groups > 1 (N*O*CK/G elements: small beside the L-times larger columns).

def forward(x, w, stride, padding, dilation, groups, bias=None):
    """Convolution of x (N, C, *S) with w (O, C/G, *K), plus `bias` (O,) if given:
    (N, O, *out)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    kernel = tuple(w.shape[2:])
    out = window_counts(x.shape[2:], kernel, stride, padding, dilation)
    length, per_group = math.prod(out), (c // groups) * math.prod(kernel)
    cols = storage.empty((n, c * math.prod(kernel), length), x.dtype)
    im2col_into(x, kernel, stride, padding, dilation, out, cols)
    # (G, O/G, CK/G) @ (N, G, CK/G, L) -> (N, G, O/G, L), which is (N, O, L).
    wg = layout.view(storage.contiguous(w), (groups, o // groups, per_group))
    y = layout.view(matmul.matmul(wg, layout.view(cols, (n, groups, per_group, length))), (n, o) + out)
    return y if bias is None else add_channel_bias(y, bias)


def backward_input(gy, w, input_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. x of spatial `input_size`: col2im(W^T @ grad)."""
    n, o = gy.shape[:2]
    c = w.shape[1] * groups
    kernel, out = tuple(w.shape[2:]), tuple(gy.shape[2:])
    length, per_group = math.prod(out), w.shape[1] * math.prod(kernel)
    # (G, CK/G, O/G) @ (N, G, O/G, L) -> (N, G, CK/G, L), which is (N, CK, L).
    wg = _swap_last(layout.view(storage.contiguous(w), (groups, o // groups, per_group)))
    gcols = matmul.matmul(wg, layout.view(storage.contiguous(gy), (n, groups, o // groups, length)))
    return col2im(layout.view(gcols, (n, c * math.prod(kernel), length)), n, c, input_size, kernel, stride,
                   padding, dilation, out)


def backward_weight(gy, x, weight_size, stride, padding, dilation, groups):
    """Gradient of `forward` w.r.t. w: grad (O, N*L) @ cols^T (N*L, CK/G) per group."""
    n, c = x.shape[:2]
    o = gy.shape[1]
    kernel, out = tuple(weight_size[2:]), tuple(gy.shape[2:])
    length, ck = math.prod(out), c * math.prod(kernel)
    # Columns laid out (CK, N, L) so that the batch and positions merge into one GEMM depth.
    buffer = storage.empty((ck, n, length), x.dtype)
    item = buffer.dtype.itemsize
    im2col_into(x, kernel, stride, padding, dilation, out,
                 arrays.restride(buffer, (n, ck, length), (length * item, n * length * item, item)))
    g3 = layout.view(storage.contiguous(gy), (n, o, length))
    rows = storage.astype(arrays.restride(g3, (o, n, length), (g3.strides[1], g3.strides[0], g3.strides[2])),
                        gy.dtype)
    # (G, O/G, N*L) @ (G, N*L, CK/G) -> (G, O/G, CK/G), which is (O, C/G, *K).
    gw = matmul.matmul(layout.view(rows, (groups, o // groups, n * length)),
                      _swap_last(layout.view(buffer, (groups, ck // groups, n * length))))
    return layout.view(gw, tuple(weight_size))


def add_channel_bias(y, bias):
    """y (N, O, *S) += bias (O,) broadcast over the batch and positions, in place."""
    if y.size:
        shape = (1, bias.shape[0]) + (1,) * (y.ndim - 2)
        elementwise.binary("add", y, arrays.restride(bias, shape, (0, bias.strides[0]) + (0,) * (y.ndim - 2)), y)
    return y
