"""Fused normalisation: batch norm (with the running-statistics update), layer norm and
group norm, each with a backward op of its own.

A fused kernel makes two passes for the statistics and one for the output, where the
composite of mean/var/sub/mul would make many more and record as many graph nodes.
Device-free: each op checks its arguments with PyTorch's errors, plans the shapes, then
calls its device's backend (`_backends.<device>.normalization`: Numba loops and NumPy on
the CPU, a thread block per channel or row on CUDA, float64 statistics on both) on the
operands in their compute dtypes, and wraps the arrays it returns.
"""
import math

from ... import _backends
from ..._dispatch import op
from ._common import check_float, array_of, tensor_of

__all__ = ["native_batch_norm", "batch_norm_backward", "native_layer_norm", "layer_norm_backward",
           "native_group_norm", "group_norm_backward"]


def _optional(t):
    """An optional tensor's array in its compute dtype (None stays None)."""
    return None if t is None else array_of(t)


def _wrap_all(arrays, like):
    """Tensors of `like`'s dtype and device over the backend's three result arrays."""
    dtype, device = like._dtype, like._device
    first, second, third = arrays
    return tensor_of(first, dtype, device), tensor_of(second, dtype, device), tensor_of(third, dtype, device)


@op()
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Batch norm over the channel dim 1 of (N, C, *); returns (output, mean, invstd).

    In training the batch statistics are used and `running_mean`/`running_var` (when
    given) are updated in place: ``running = (1 - momentum) * running + momentum * batch``
    with the unbiased batch variance.
    """
    check_float(input, "batch_norm")
    c = input.shape[1] if input.dim() > 1 else 0
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    n = input.shape[0]
    inner = input.numel() // (n * c) if n * c else 0
    count = n * inner
    if training and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"torch.Size({list(input.shape)})")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    # The running statistics are updated in place on their storage, in their own dtype.
    stats = [None if t is None else t._data for t in (running_mean, running_var)]
    arrays = _backends.get(input._device).normalization.batch_norm(
        array_of(input), _optional(weight), _optional(bias), *stats, training, momentum, eps)
    if training:
        for buffer in (running_mean, running_var):
            if buffer is not None:
                buffer._bump_version()  # as PyTorch's in-place update does
    return _wrap_all(arrays, input)


@op()
def batch_norm_backward(grad_output, input, weight, save_mean, save_invstd, training):
    """Gradients (input, weight, bias) of `native_batch_norm` from its saved statistics."""
    arrays = _backends.get(input._device).normalization.batch_norm_backward(
        array_of(grad_output), array_of(input), _optional(weight), array_of(save_mean),
        array_of(save_invstd), training)
    return _wrap_all(arrays, grad_output)


@op()
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Layer norm over the trailing `normalized_shape` dims; returns (output, mean, rstd)."""
    check_float(input, "layer_norm")
    shape = tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.dim() - k:]) != shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, "
            f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} "
                               f"of shape {list(t.shape)} and normalized_shape = {list(shape)}")
    rows = input.numel() // max(1, math.prod(shape)) if math.prod(shape) else 0
    stat_shape = tuple(input.shape[:input.dim() - k]) + (1,) * k
    arrays = _backends.get(input._device).normalization.layer_norm(
        array_of(input), rows, _optional(weight), _optional(bias), eps, stat_shape)
    return _wrap_all(arrays, input)


@op()
def layer_norm_backward(grad_output, input, normalized_shape, mean, rstd, weight):
    """Gradients (input, weight, bias) of `native_layer_norm`."""
    arrays = _backends.get(input._device).normalization.layer_norm_backward(
        array_of(grad_output), array_of(input), tuple(normalized_shape), array_of(mean),
        array_of(rstd), _optional(weight))
    return _wrap_all(arrays, grad_output)


@op()
def native_group_norm(input, weight, bias, num_groups, eps):
    """Group norm of (N, C, *) with C split into `num_groups`; returns (output, mean, rstd)."""
    check_float(input, "group_norm")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got "
                           f"input of shape {list(input.shape)} and num_groups={num_groups}")
    arrays = _backends.get(input._device).normalization.group_norm(
        array_of(input), _optional(weight), _optional(bias), num_groups, eps)
    return _wrap_all(arrays, input)


@op()
def group_norm_backward(grad_output, input, mean, rstd, weight, num_groups):
    """Gradients (input, weight, bias) of `native_group_norm`."""
    arrays = _backends.get(input._device).normalization.group_norm_backward(
        array_of(grad_output), array_of(input), array_of(mean), array_of(rstd),
        _optional(weight), num_groups)
    return _wrap_all(arrays, grad_output)
