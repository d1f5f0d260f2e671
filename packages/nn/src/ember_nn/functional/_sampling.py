"""Resampling: pad (constant, reflect, replicate, circular) and interpolate/upsample
(nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area; antialiased
bilinear/bicubic). affine_grid and grid_sample are in `_grid`.

Interpolation is separable: each spatial dim is resampled in turn by a matmul with an
(out, in) weight matrix (or an index lookup for nearest), so gradients come from the
matmul and indexing rules; only the weights are computed here, following PyTorch's
source-coordinate rules (align_corners, scale_factor, recompute_scale_factor).
"""
import math

import numpy as np

import ember_tensor as E
from ember_tensor import nn_ops as K

from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from ._util import composite_op, nondeterministic_backward

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]


# -- pad ----------------------------------------------------------------------------------

def _pad_indices(size, left, right, mode):
    i = np.arange(-left, size + right)
    if mode == "reflect":
        period = 2 * (size - 1) if size > 1 else 1
        i = np.abs(i) % period if size > 1 else np.zeros_like(i)
        return np.where(i >= size, period - i, i)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    return i % size  # circular


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad)//2 dims; `pad` lists (left, right) pairs from the last dim.

    >>> import ember_tensor as torch
    >>> pad(torch.tensor([[1., 2., 3.]]), (2, 1), mode="reflect").tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode == "constant":
        return K.constant_pad_nd(input, tuple(pad), 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument.")
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    count = len(pad) // 2
    if count > 3 or input.dim() not in (count + 1, count + 2):
        # PyTorch's rule: the padded dims plus one (unbatched) or two (batched).
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = _PAD_OPS[mode, count](input, tuple(int(p) for p in pad), mode)
    if mode == "reflect":
        return nondeterministic_backward(out, _REFLECTION_PAD_BACKWARD[count])
    if mode == "replicate" and not E.are_deterministic_algorithms_enabled():
        # Under the switch PyTorch's pad takes a decomposition whose backward is
        # deterministic (on CUDA); otherwise its replication kernel's backward adds with atomics.
        return nondeterministic_backward(out, f"replication_pad{count}d_backward_cuda")
    return out


# The names PyTorch's CUDA backward kernels give the alert: the 2-d one is the functional
# (not structured) kernel, as autograd calls it.
_REFLECTION_PAD_BACKWARD = {1: "reflection_pad1d_backward_out_cuda", 2: "reflection_pad2d_backward_cuda",
                            3: "reflection_pad3d_backward_out_cuda"}


def _pad_by_index(input, pad, mode):
    """Reflect, replicate or wrap the last len(pad) // 2 dims: each an index gather."""
    out = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        size = input.shape[d]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                               f"{list(input.shape)}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if left == 0 and right == 0:
            continue
        index = E.tensor(_pad_indices(size, left, right, mode), dtype=E.int64, device=input.device)
        out = out[(slice(None),) * d + (index,)]
    return out


# Each mode and rank is an op under ATen's name (reflection_pad2d, replication_pad3d, ...;
# circular padding is one, _pad_circular): PyTorch's CPU autocast list names several of
# them (float32).
_PAD_OPS = {(mode, count): composite_op(f"{aten}_pad{count}d", _pad_by_index)
            for mode, aten in (("reflect", "reflection"), ("replicate", "replication")) for count in (1, 2, 3)}
_PAD_CIRCULAR = composite_op("_pad_circular", _pad_by_index)
_PAD_OPS.update({("circular", count): _PAD_CIRCULAR for count in (1, 2, 3)})


# -- interpolate --------------------------------------------------------------------------

_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _output_sizes(input, nd, size, scale_factor, recompute_scale_factor):
    spatial = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (list, tuple)) else (size,) * nd
        if len(sizes) != nd:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(spatial)} and output size of {list(sizes)}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                             "(o1, o2, ...,oK) format.")
        return tuple(int(s) for s in sizes), [None] * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * nd
    if len(scales) != nd:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got "
                         f"input with spatial dimensions of {list(spatial)} and scale_factor of shape "
                         f"{list(scales)}.")
    sizes = tuple(int(math.floor(s * f)) for s, f in zip(spatial, scales))
    return sizes, [None] * nd if recompute_scale_factor else [float(f) for f in scales]


def _scale(in_size, out_size, scale, align_corners):
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _nearest_index(in_size, out_size, scale, exact):
    # PyTorch computes the source index in float32 (floorf(i * scale)): 10 * 0.9f rounds to
    # 9.0f, where float64 arithmetic would floor 8.99999976 to 8.
    s = np.float32(_scale(in_size, out_size, scale, False))
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _linear_matrix(in_size, out_size, scale, align_corners):
    s = _scale(in_size, out_size, scale, align_corners)
    dst = np.arange(out_size, dtype=np.float64)
    src = dst * s if align_corners else np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    w1 = src - i0
    m = np.zeros((out_size, in_size))
    np.add.at(m, (np.arange(out_size), i0), 1 - w1)
    np.add.at(m, (np.arange(out_size), i1), w1)
    return m


def _cubic_weights(t, a=-0.75):
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _cubic_matrix(in_size, out_size, scale, align_corners):
    s = _scale(in_size, out_size, scale, align_corners)
    dst = np.arange(out_size, dtype=np.float64)
    src = dst * s if align_corners else (dst + 0.5) * s - 0.5
    base = np.floor(src).astype(np.int64)
    t = src - base
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    # Taps outside the input read the edge value (index clamped), as PyTorch does.
    for offset, w in zip((-1, 0, 1, 2), _cubic_weights(t)):
        np.add.at(m, (rows, np.clip(base + offset, 0, in_size - 1)), w)
    return m


def _antialias_matrix(in_size, out_size, scale, align_corners, cubic):
    """(out, in) weights of PyTorch's antialiased bilinear/bicubic resampling: the filter
    is stretched by the downscaling factor so every input pixel contributes."""
    s = _scale(in_size, out_size, scale, align_corners)
    interp = 4 if cubic else 2
    support = interp * 0.5 * s if s >= 1.0 else interp * 0.5
    invscale = 1.0 / s if s >= 1.0 else 1.0

    def kernel(x):
        x = np.abs(x)
        if not cubic:
            return np.maximum(0.0, 1.0 - x)
        a = -0.5  # Keys' cubic, as PyTorch's antialias path uses
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0.0))

    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), in_size)
        taps = np.arange(lo, hi)
        w = kernel((taps - center + 0.5) * invscale)
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0 else w
    return m


def _along(x, axis, matrix):
    m = E.tensor(matrix, dtype=x.dtype, device=x.device)
    return x.movedim(axis, -1).matmul(m.t()).movedim(-1, axis)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of (N, C, *S) to `size` or by `scale_factor`."""
    nd = input.dim() - 2
    if nd < 1 or nd > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != nd:
            raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                      f"{_LINEAR_MODES[mode] + 2}D input")
    else:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                  f"for the modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                                  f"nearest-exact (got {mode})")
    if antialias and not (mode in ("bilinear", "bicubic") and nd == 2):
        raise ValueError("Anti-alias option is restricted to bilinear and bicubic modes and requires a 4-D tensor "
                         "as input")
    align_corners = bool(align_corners)
    sizes, scales = _output_sizes(input, nd, size, scale_factor, recompute_scale_factor)
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, sizes)
    name = _aten_upsample(mode, nd, antialias)
    out = _RESAMPLE_OPS[name](input, sizes, scales, mode, align_corners, antialias)
    if mode in _LINEAR_MODES and not antialias and (
            mode in ("linear", "bicubic") or not E.are_deterministic_algorithms_enabled()):
        # PyTorch's backward kernels of these add with atomics on CUDA; bilinear and
        # trilinear under the switch take a decomposition (deterministic backward) instead.
        out = nondeterministic_backward(out, f"{name}_backward_out_cuda")
    return out


def _aten_upsample(mode, nd, antialias):
    """ATen's name of the resampling op for `mode` over `nd` dims (upsample_bilinear2d, ...)."""
    if mode == "nearest-exact":
        return f"_upsample_nearest_exact{nd}d"
    name = f"upsample_{mode}{nd}d"
    return f"_{name}_aa" if antialias else name


def _resample(input, sizes, scales, mode, align_corners, antialias):
    """Resize each spatial dim of `input` in turn: an index gather (nearest modes) or a
    product with a resampling matrix (linear, cubic, antialiased)."""
    nd = len(sizes)
    out = input
    for d in range(nd):
        axis = 2 + d
        in_size, out_size = input.shape[axis], sizes[d]
        if mode in ("nearest", "nearest-exact"):
            index = _nearest_index(in_size, out_size, scales[d], mode == "nearest-exact")
            out = out[(slice(None),) * axis + (E.tensor(index, dtype=E.int64, device=input.device),)]
        elif antialias:
            out = _along(out, axis, _antialias_matrix(in_size, out_size, scales[d], align_corners,
                                                      mode == "bicubic"))
        elif mode == "bicubic":
            out = _along(out, axis, _cubic_matrix(in_size, out_size, scales[d], align_corners))
        else:
            out = _along(out, axis, _linear_matrix(in_size, out_size, scales[d], align_corners))
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of `interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='nearest')."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# Each mode and rank is an op under ATen's name, as PyTorch's CUDA autocast list (float32)
# names them.
_RESAMPLE_OPS = {name: composite_op(name, _resample) for name in (
    "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa")}
