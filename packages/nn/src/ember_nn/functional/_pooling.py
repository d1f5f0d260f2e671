"""Pooling: max (with indices), average, adaptive, power-average, and max_unpool,
for 1-3 spatial dims, batched or not."""
import numpy as np

import ember_tensor as E
from ember_tensor import nn_ops as K
from ember_tensor.nn_ops import adaptive_bounds

from ._util import batched, composite_op, nondeterministic_backward, through_composite_op

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


def _tuple(value, nd):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return tuple(value) if len(value) == nd else tuple(value) * nd if len(value) == 1 else tuple(value)
    return (value,) * nd


def _unbatch(results, unbatched):
    if isinstance(results, tuple):
        return tuple(r.squeeze(0) for r in results) if unbatched else results
    return results.squeeze(0) if unbatched else results


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    x, unbatched = batched(input, nd, f"max_pool{nd}d")
    stride = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, nd)
    values, indices = K.max_pool_with_indices(x, _tuple(kernel_size, nd), stride, _tuple(padding, nd),
                                              _tuple(dilation, nd), ceil_mode)
    if nd == 3 and not E.are_deterministic_algorithms_enabled():
        # PyTorch's max_pool3d takes a decomposition with a deterministic backward when
        # the switch is on at the forward (on CUDA), its atomic-add kernel otherwise.
        values = nondeterministic_backward(values, "max_pool3d_with_indices_backward_cuda")
    return _unbatch((values, indices) if return_indices else values, unbatched)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of (N, C, L); with `return_indices` also the argmax positions."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of (N, C, H, W).

    >>> import ember_tensor as torch
    >>> max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2).tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over windows of (N, C, D, H, W)."""
    if return_indices:  # ATen's max_pool3d_with_indices, which autocast's lists do not name
        return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)
    return _MAX_POOL3D(input, kernel_size, stride, padding, dilation, ceil_mode)


# PyTorch's CPU autocast list names the 3-d pools (not the 1-d and 2-d ones): these run as
# composite ops under ATen's names, so that the list applies to them.
_MAX_POOL3D = composite_op(
    "max_pool3d", lambda input, kernel_size, stride, padding, dilation, ceil_mode:
    _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, False))


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """`max_pool1d` returning (values, indices)."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """`max_pool2d` returning (values, indices)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """`max_pool3d` returning (values, indices)."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    x, unbatched = batched(input, nd, f"avg_pool{nd}d")
    stride = None if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, nd)
    out = K.avg_pool(x, _tuple(kernel_size, nd), stride, _tuple(padding, nd), ceil_mode, count_include_pad,
                     divisor_override)
    if nd == 3:  # PyTorch's 3-d backward on CUDA adds with atomics (the 1-d/2-d ones gather)
        out = nondeterministic_backward(out, "avg_pool3d_backward_cuda")
    return _unbatch(out, unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows of (N, C, L)."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of (N, C, H, W) (or sum / `divisor_override`)."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows of (N, C, D, H, W)."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _output_size(nd, output_size, spatial):
    sizes = _tuple(output_size, nd)
    if len(sizes) != nd:
        raise ValueError(f"adaptive_avg_pool{nd}d: output_size must be {nd}")
    return tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))


def averaging_matrix(size, out, like):
    """(out, size) matrix whose row i averages PyTorch's adaptive window i."""
    rows = E.zeros(out, size, dtype=like.dtype, device=like.device)
    for i, (start, end) in enumerate(adaptive_bounds(size, out)):
        rows[i, start:end] = 1.0 / (end - start)
    return rows


def _adaptive_avg_pool(nd, input, output_size):
    x, unbatched = batched(input, nd, f"adaptive_avg_pool{nd}d")
    if any(s == 0 for s in x.shape[2:]):
        raise RuntimeError(f"adaptive_avg_pool{nd}d(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)} with dimension "
                           f"{input.dim() - 1} being empty")
    out = _output_size(nd, output_size, x.shape[2:])
    if all(o == 1 for o in out):
        # Global average pooling (the head of ResNet and most CNNs): one mean, where the
        # matmuls below would build an averaging matrix per dim and call.
        return _unbatch(x.mean(dim=tuple(range(2, 2 + nd)), keepdim=True), unbatched)
    # A box average is separable: average along each spatial dim in turn, one matmul each.
    for d, (size, o) in enumerate(zip(x.shape[2:], out)):
        if size == o:
            continue
        axis = 2 + d
        moved = x.movedim(axis, -1)
        x = moved.matmul(averaging_matrix(size, o, x).t()).movedim(-1, axis)
    # PyTorch's backward kernel (not the global mean's) adds with atomics on CUDA; its 1-d
    # pool is the 2-d one over a unit dim.
    x = nondeterministic_backward(x, f"adaptive_avg_pool{max(nd, 2)}d_backward_cuda")
    return _unbatch(x, unbatched)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) to length `output_size`."""
    return _adaptive_avg_pool(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) to `output_size` (None keeps a dim)."""
    return _adaptive_avg_pool(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of (N, C, D, H, W) to `output_size`."""
    return _adaptive_avg_pool(3, input, output_size)


def _adaptive_max_pool(nd, input, output_size, return_indices):
    x, unbatched = batched(input, nd, f"adaptive_max_pool{nd}d")
    out = _output_size(nd, output_size, x.shape[2:])
    values, indices = K.adaptive_max_pool(x, out)
    if nd < 3:  # PyTorch's 2-d backward (the 1-d pool's too) adds with atomics on CUDA
        values = nondeterministic_backward(values, "adaptive_max_pool2d_backward_cuda")
    return _unbatch((values, indices) if return_indices else values, unbatched)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of (N, C, L) to length `output_size`."""
    return _adaptive_max_pool(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) to `output_size`."""
    return _adaptive_max_pool(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max pooling of (N, C, D, H, W) to `output_size`."""
    return _adaptive_max_pool(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool1d` returning (values, indices)."""
    return _adaptive_max_pool(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool2d` returning (values, indices)."""
    return _adaptive_max_pool(2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """`adaptive_max_pool3d` returning (values, indices)."""
    return adaptive_max_pool3d(input, output_size, True)


avg_pool3d = through_composite_op("avg_pool3d", avg_pool3d)
adaptive_avg_pool3d = through_composite_op("adaptive_avg_pool3d", adaptive_avg_pool3d)
adaptive_max_pool3d = through_composite_op("adaptive_max_pool3d", adaptive_max_pool3d)


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    kernel = _tuple(kernel_size, nd)
    area = 1
    for k in kernel:
        area *= k
    # Through the public pools, as PyTorch's Python lp_pool (avg_pool3d is an op autocast sees).
    pooled = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1](input.pow(norm_type), kernel, stride, 0, ceil_mode, True)
    # sign(x) * relu(|x|) keeps the gradient defined where the pooled power is 0.
    return (pooled.sign() * pooled.abs().relu() * area).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: (sum of x^p over a window)^(1/p)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-d power-average pooling."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-d power-average pooling."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    x, unbatched = batched(input, nd, f"max_unpool{nd}d")
    idx = indices.unsqueeze(0) if unbatched else indices
    kernel = _tuple(kernel_size, nd)
    stride = kernel if stride is None else _tuple(stride, nd)
    padding = _tuple(padding, nd)
    default = tuple((s - 1) * st - 2 * p + k for s, st, p, k in zip(x.shape[2:], stride, padding, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(output_size)[-nd:]
        for d, (s, dflt, st) in enumerate(zip(size, default, stride)):
            if not dflt - st < s < dflt + st:
                raise ValueError(f"invalid output_size \"{list(output_size)}\" (dim {d} must be between "
                                 f"{dflt - st} and {dflt + st})")
    return _unbatch(K.max_unpool(x, idx, size), unbatched)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool1d: values put back at `indices`, zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool2d."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of max_pool3d."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


def _fractional_starts(sample, in_size, out_size, pool):
    """PyTorch's generate_intervals: window starts (..., out) for samples u in [0, 1)."""
    u = sample[..., None]
    i = np.arange(out_size, dtype=sample.dtype)
    if out_size > 1:
        alpha = sample.dtype.type(in_size - pool) / sample.dtype.type(out_size - 1)
        starts = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    else:
        starts = np.zeros(u.shape[:-1] + (1,), np.int64)
    starts[..., -1] = in_size - pool
    return starts


def _fractional_max_pool(nd, input, kernel_size, output_size, output_ratio, return_indices, _random_samples):
    name = f"fractional_max_pool{nd}d"
    x, unbatched = batched(input, nd, name)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    kernel = _tuple(kernel_size, nd)
    spatial = tuple(x.shape[2:])
    if output_size is None:
        ratios = _tuple(output_ratio, nd)
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratios))
    out = _tuple(output_size, nd)
    for s, o, k in zip(spatial, out, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{name}(): pool height ({k}) too large relative to input height ({s}) "
                               f"for output height ({o})")
    n, c = x.shape[:2]
    samples = _random_samples if _random_samples is not None else E.rand(n, c, nd, dtype=x.dtype)
    u = np.asarray(samples.detach().cpu().numpy() if hasattr(samples, "numpy") else samples)
    u = u.reshape(n, c, nd).astype(np.float32 if x.dtype.itemsize <= 4 else np.float64)
    # Sample k drives the k-th dim counted from the last (W first), as in PyTorch.
    starts = [_fractional_starts(u[..., nd - 1 - d], spatial[d], out[d], kernel[d]) for d in range(nd)]
    # Every window's element positions, flattened in the (n, c) plane; the max picks one.
    flat = np.zeros((n, c) + out + kernel, np.int64)
    for d in range(nd):
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d] = out[d]
        pos = starts[d].reshape(shape) + np.arange(kernel[d]).reshape([1] * (2 + nd + d) + [kernel[d]]
                                                                          + [1] * (nd - d - 1))
        flat = flat * spatial[d] + pos
    candidates = flat.reshape((n, c, -1))
    plane = x.detach().reshape(n, c, -1).cpu().numpy() if n * c else np.zeros((n, c, 0))
    values = np.take_along_axis(plane, candidates, 2).reshape((n, c) + out + (-1,))
    which = values.argmax(-1)[..., None]
    chosen = np.take_along_axis(flat.reshape((n, c) + out + (-1,)), which, -1)[..., 0]
    indices = E.tensor(chosen, dtype=E.int64, device=x.device)
    result = nondeterministic_backward(K.take_along_planes(x, indices), f"fractional_max_pool{nd}d_backward_cuda")
    return _unbatch((result, indices) if return_indices else result, unbatched)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Max pooling over pseudo-random, overlapping windows (Graham, 2014) of (N, C, H, W)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Fractional max pooling of (N, C, D, H, W)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """`fractional_max_pool2d` returning (values, indices)."""
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """`fractional_max_pool3d` returning (values, indices)."""
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True, _random_samples)


# On PyTorch's CPU autocast list (float32), as the 3-d pools above.
fractional_max_pool2d = through_composite_op("fractional_max_pool2d", fractional_max_pool2d)
fractional_max_pool3d = through_composite_op("fractional_max_pool3d", fractional_max_pool3d)
