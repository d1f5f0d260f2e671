"""Index-based ops of nn: embedding lookup and its scatter-add backward, one_hot,
constant padding, and im2col/col2im (`unfold`/`fold`).

Each op checks its arguments with PyTorch's errors (the index checks ask the backend:
on CUDA each reads back one count or extreme, as PyTorch's checks synchronise too),
then calls its device's `sampling` backend family (`_backends/cpu/sampling.py`,
`_backends/cuda/sampling.py`) and wraps the arrays it returns.
"""
import math

from ... import _backends
from ... import _dtype as D
from ..._backends.plan import output_size as window_count
from ..._dispatch import op
from .._iter import common_device
from ._common import array_of, check_float, ntuple, tensor_of

__all__ = ["embedding", "embedding_backward", "one_hot", "constant_pad_nd", "im2col", "col2im"]


def _sampling(device):
    """The sampling family of `device`'s backend."""
    return _backends.get(device).sampling


@op()
def embedding(weight, indices, padding_idx=None, scale_grad_by_freq=False):
    """Rows of `weight` (num, dim) picked by integer `indices` of any shape (the last two
    arguments only shape the gradient).

    >>> import ember_tensor as et
    >>> from ember_tensor.nn_ops import embedding
    >>> embedding(et.tensor([[0., 1.], [2., 3.]]), et.tensor([1, 1])).tolist()
    [[2.0, 3.0], [2.0, 3.0]]
    """
    if indices._dtype not in (D.int64, D.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got {indices.type()} instead (while checking arguments "
                           "for embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    device = common_device((weight, indices))
    sampling = _sampling(device)
    if sampling.any_outside(indices._data, 0, weight.shape[0]):
        raise IndexError("index out of range in self")
    return tensor_of(sampling.embedding(weight._data, indices._data), weight._dtype, device)


@op()
def embedding_backward(grad_output, indices, num_weights, padding_idx=None, scale_grad_by_freq=False):
    """Gradient of `embedding` w.r.t. its weight: rows of `grad_output` summed per index
    (in float32 for half types)."""
    device = grad_output._device
    grad = _sampling(device).embedding_backward(array_of(grad_output), indices._data, num_weights, padding_idx,
                                                scale_grad_by_freq)
    return tensor_of(grad, grad_output._dtype, device)


@op()
def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding: shape of `tensor` plus a last dim of `num_classes`.

    >>> import ember_tensor as et
    >>> from ember_tensor.nn_ops import one_hot
    >>> one_hot(et.tensor([0, 2]), 3).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if tensor._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    sampling = _sampling(tensor._device)
    idx = tensor._data
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = sampling.index_max(idx) + 1
    # One check in the common, valid case; the second tells which bound was crossed.
    if sampling.any_outside(idx, 0, num_classes):
        if sampling.index_min(idx) < 0:
            raise RuntimeError("Class values must be non-negative.")
        raise RuntimeError("Class values must be smaller than num_classes.")
    return tensor_of(sampling.one_hot(idx, num_classes), D.int64, tensor._device)


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
    padded = _sampling(input._device).constant_pad(input._data, widths, crops, value)
    return tensor_of(padded, input._dtype, input._device)


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
    cols = _sampling(input._device).unfold(array_of(input), kernel, dilation, padding, stride)
    return tensor_of(cols, input._dtype, input._device)


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
    folded = _sampling(input._device).fold(array_of(input), size, kernel, dilation, padding, stride)
    return tensor_of(folded, input._dtype, input._device)
