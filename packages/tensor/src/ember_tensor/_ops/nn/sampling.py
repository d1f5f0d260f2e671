"""Index-based kernels of nn: embedding lookup and its scatter-add backward, one_hot,
constant padding, and im2col/col2im (`unfold`/`fold`).

On CUDA each runs on the device: embedding is `index_select` (its backward `index_add_`)
after a bounds check that reads back one count, one_hot a kernel (its checks read back
one or two counts, as PyTorch reads the maximum), constant padding a fill plus one
strided copy, unfold/fold the convolution's im2col/col2im kernels.
"""
import math

import numpy as np

from ... import _dtype as D
from ..._dispatch import op
from .._iter import common_device
from ._common import check_float, compute_np_dtype, from_array, ntuple, to_array
from ..._backends.cpu.windows import add_windows, crop_spatial, pad_spatial, windows
from ..._backends.plan import output_size as window_count

__all__ = ["embedding", "embedding_backward", "one_hot", "constant_pad_nd", "im2col", "col2im"]


@op()
def embedding(weight, indices, padding_idx=None, scale_grad_by_freq=False):
    """Rows of `weight` (num, dim) picked by integer `indices` of any shape (the last two
    arguments only shape the gradient)."""
    if indices._dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got {indices.type()} instead (while checking arguments "
                           "for embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if weight._device.type == "cuda":
        return _cuda_embedding(weight, indices)
    idx = to_array(indices, np.int64)
    n = weight.shape[0]
    if idx.size and (idx.min() < -n or idx.max() >= n or idx.min() < 0):
        raise IndexError("index out of range in self")
    return from_array(to_array(weight)[idx], weight._dtype, weight._device)


def _cuda_embedding(weight, indices):
    """`embedding` on the GPU: a bounds check (one count read back) and index_select."""
    from ..._backends.cuda import windows as W
    from ..index_ops import index_select
    device = common_device((weight, indices))
    with W.device_scope(device):
        if W.read_count(W.count_outside(indices._data, 0, weight.shape[0])):
            raise IndexError("index out of range in self")
    rows = index_select(weight, 0, indices.reshape(-1))
    return rows.reshape(tuple(indices.shape) + (weight.shape[1],))


@op()
def embedding_backward(grad_output, indices, num_weights, padding_idx=None, scale_grad_by_freq=False):
    """Gradient of `embedding` w.r.t. its weight: rows of `grad_output` summed per index."""
    if grad_output._device.type == "cuda":
        return _cuda_embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)
    idx = to_array(indices, np.int64).reshape(-1)
    g = to_array(grad_output).reshape(len(idx), grad_output.shape[-1])  # explicit: idx may be empty
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None]
    grad = np.zeros((num_weights, g.shape[1]), g.dtype)
    np.add.at(grad, idx, g)
    if padding_idx is not None and padding_idx >= 0:
        grad[padding_idx] = 0
    return from_array(grad, grad_output._dtype, grad_output._device)


def _cuda_embedding_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """`embedding_backward` on the GPU as index_add_ of the gradient rows (float32 for
    half types, as the CPU computes)."""
    from ..creation import zeros
    idx = indices.reshape(-1)
    dtype = grad_output._dtype
    compute = D.float32 if dtype in (D.float16, D.bfloat16) else dtype
    rows = grad_output.reshape(idx.shape[0], grad_output.shape[-1]).to(compute)
    if scale_grad_by_freq:
        counts = zeros(num_weights, dtype=compute, device=grad_output.device)
        counts.index_add_(0, idx, zeros(idx.shape[0], dtype=compute, device=grad_output.device) + 1)
        rows = rows / counts.index_select(0, idx).reshape(-1, 1)
    grad = zeros(num_weights, rows.shape[1], dtype=compute, device=grad_output.device)
    grad.index_add_(0, idx, rows)
    if padding_idx is not None and padding_idx >= 0:
        grad[padding_idx] = 0
    return grad.to(dtype)


@op()
def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: shape of `tensor` plus a last dim of `num_classes`."""
    if tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor._device.type == "cuda":
        return _cuda_one_hot(tensor, num_classes)
    idx = to_array(tensor, np.int64)
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    if idx.size and idx.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if idx.size and idx.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (idx[..., None] == np.arange(num_classes)).astype(np.int64)
    return from_array(out, D.int64, tensor._device)


def _cuda_one_hot(tensor, num_classes):
    """`one_hot` on the GPU; the checks read back one or two counts (as PyTorch's read
    the maximum when it infers the number of classes)."""
    from ..._backends.cuda import windows as W
    with W.device_scope(tensor._device):
        idx = tensor._data
        if num_classes == -1 and idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        if num_classes == -1:
            num_classes = W.read_count(W.index_extreme(idx, "amax")) + 1
        if idx.size and W.read_count(W.count_outside(idx, 0, num_classes)):
            if W.read_count(W.index_extreme(idx, "amin")) < 0:
                raise RuntimeError("Class values must be non-negative.")
            raise RuntimeError("Class values must be smaller than num_classes.")
        return W.tensor_of(W.one_hot(idx, num_classes), D.int64, tensor._device)


@op()
def constant_pad_nd(input, pad, value=0):
    """Pad the last len(pad)//2 dims by (left, right) pairs given last dim first;
    negative pads crop."""
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.dim():
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the "
                           f"input. Pad length is {len(pad)} while the input has {input.dim()} dimensions.")
    shape = tuple(input.shape)
    nd = len(shape)
    crops, widths = [slice(None)] * nd, [(0, 0)] * nd
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        left, right = int(pad[2 * i]), int(pad[2 * i + 1])
        crops[d] = slice(max(0, -left), shape[d] - max(0, -right))
        widths[d] = (max(0, left), max(0, right))
        if shape[d] + left + right < 0:
            raise RuntimeError(f"The input size {shape[d]}, plus negative padding {left} and {right} "
                               f"resulted in a negative output size, which is invalid. Check dimension {d} "
                               "of your input.")
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            return W.tensor_of(W.constant_pad(input._data, widths, crops, value), input._dtype, input._device)
    x = input._host_numpy()
    out = np.pad(x[tuple(crops)], widths, constant_values=value) if nd else x.copy()
    return from_array(out, input._dtype, input._device)


def _unfold_params(kernel_size, dilation, padding, stride):
    kernel, dilation = ntuple(kernel_size, 2), ntuple(dilation, 2, "dilation")
    padding, stride = ntuple(padding, 2, "padding"), ntuple(stride, 2, "stride")
    for name, values in (("kernel size", kernel), ("dilation", dilation), ("stride", stride)):
        if any(v <= 0 for v in values):
            raise RuntimeError(f"{name} should be greater than zero, but got {name.split()[0]}_height: "
                               f"{values[0]} {name.split()[0]}_width: {values[1]}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    return kernel, dilation, padding, stride


@op()
def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) as columns (N, C*kh*kw, L) (`F.unfold`)."""
    check_float(input, "im2col")
    kernel, dilation, padding, stride = _unfold_params(kernel_size, dilation, padding, stride)
    shape = tuple(input.shape)
    out = tuple(window_count(s, k, st, p, d) for s, k, st, p, d in
                zip(shape[2:], kernel, stride, padding, dilation))
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input with spatial size ({shape[2]}, {shape[3]}), kernel_size="
                           f"({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), padding="
                           f"({padding[0]}, {padding[1]}), calculated shape of the array of sliding blocks "
                           f"as ({out[0]}, {out[1]}), but its components must be at least one.")
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            cols = W.unfold(W.array_of(input, compute_np_dtype(input._dtype)), kernel, dilation, padding, stride)
            return W.tensor_of(cols, input._dtype, input._device)
    x = to_array(input)
    n, c = x.shape[:2]
    view = windows(pad_spatial(x, padding), kernel, stride, dilation, out)
    cols = view.reshape(n, c * math.prod(kernel), math.prod(out))
    return from_array(cols, input._dtype, input._device)


@op()
def col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns (N, C*kh*kw, L) back into (N, C, *output_size) (`F.fold`)."""
    check_float(input, "col2im")
    kernel, dilation, padding, stride = _unfold_params(kernel_size, dilation, padding, stride)
    size = ntuple(output_size, 2, "output_size")
    shape = tuple(input.shape)
    k = math.prod(kernel)
    if shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={shape[1]} and kernel_size={kernel}")
    out = tuple(window_count(s, kk, st, p, d) for s, kk, st, p, d in zip(size, kernel, stride, padding, dilation))
    if math.prod(out) != shape[2]:
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({kernel[0]}, {kernel[1]}), "
                           f"dilation=({dilation[0]}, {dilation[1]}), padding=({padding[0]}, {padding[1]}), "
                           f"stride=({stride[0]}, {stride[1]}), expected size of input's dimension 2 to match "
                           f"the calculated number of sliding blocks {out[0]} * {out[1]} = {math.prod(out)}, "
                           f"but got input.size(2)={shape[2]}.")
    if input._device.type == "cuda":
        from ..._backends.cuda import windows as W
        with W.device_scope(input._device):
            folded = W.fold(W.array_of(input, compute_np_dtype(input._dtype)), size, kernel, dilation, padding,
                            stride)
            return W.tensor_of(folded, input._dtype, input._device)
    cols = to_array(input)
    n = cols.shape[0]
    c = cols.shape[1] // k
    shaped = cols.reshape((n, c) + kernel + out)
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(size, padding))
    summed = add_windows(shaped, padded, kernel, stride, dilation, out)
    return from_array(crop_spatial(summed, padding, size), input._dtype, input._device)
