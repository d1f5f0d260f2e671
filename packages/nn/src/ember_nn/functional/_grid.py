"""Spatial transformers: affine_grid (sampling grids of affine maps) and grid_sample
(bilinear/trilinear, nearest or bicubic sampling at arbitrary points), written with
differentiable ops so gradients reach both the input and the grid."""
import numpy as np

import ember_tensor as E
from ember_tensor import nn_ops as K

from ._util import nondeterministic_backward, through_composite_op

__all__ = ["affine_grid", "grid_sample"]


def _base_coords(n, align_corners):
    if n <= 1:
        return np.zeros(max(n, 0))
    coords = np.linspace(-1.0, 1.0, n)
    return coords if align_corners else coords * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps `theta`."""
    align_corners = bool(align_corners)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {list(size)}. "
                             f"Got {list(theta.shape)}.")
        n, _, h, w = size
        ys, xs = np.meshgrid(_base_coords(h, align_corners), _base_coords(w, align_corners), indexing="ij")
        base = np.stack([xs, ys, np.ones_like(xs)], -1).reshape(1, h * w, 3)
        shape = (n, h, w, 2)
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[1:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {list(size)}. "
                             f"Got {list(theta.shape)}.")
        n, _, d, h, w = size
        zs, ys, xs = np.meshgrid(_base_coords(d, align_corners), _base_coords(h, align_corners),
                                 _base_coords(w, align_corners), indexing="ij")
        base = np.stack([xs, ys, zs, np.ones_like(xs)], -1).reshape(1, d * h * w, 4)
        shape = (n, d, h, w, 3)
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {list(size)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    grid = E.tensor(base, dtype=theta.dtype, device=theta.device).matmul(theta.transpose(1, 2))
    return grid.reshape(shape)


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) * ((size - 1) / 2)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """PyTorch's reflect_coordinates: fold `coord` into [low, high] by reflections."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    extra = distance.fmod(span)
    flips = (distance / span).floor()
    return E.where(flips.remainder(2) == 0, extra + low, span - extra + low)


def _clip(coord, size, nan_to):
    """`coord` clamped to [0, size - 1], NaN sent to `nan_to` (see `_apply_padding`)."""
    return E.where(coord.isnan(), float(nan_to), coord.clamp(0, size - 1))


def _apply_padding(coord, size, padding_mode, align_corners, volumetric):
    """Source coordinate after the padding mode (PyTorch's compute_coordinates).

    A NaN coordinate (a NaN in the grid, or an infinite one reflected) lands where
    PyTorch's CPU kernels send it: on 0 for images, whose vectorised kernel clips with
    max(x, 0) that drops NaN (as CUDA's fmaxf does); on size - 1 for volumes, whose scalar
    kernel clips with min(size - 1, max(x, 0)), where max keeps the NaN and min drops it.
    """
    nan_to = size - 1 if volumetric else 0
    if padding_mode == "border":
        return _clip(coord, size, nan_to)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return _clip(coord, size, nan_to)
    return coord


def _cubic_coefficients(t, a=-0.75):
    near = lambda x: ((a + 2) * x - (a + 3)) * x * x + 1  # noqa: E731 - |x| <= 1
    far = lambda x: ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # noqa: E731 - 1 < |x| < 2
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample (N, C, H, W) at the normalised (x, y) locations of `grid` (N, Ho, Wo, 2), or
    (N, C, D, H, W) at (x, y, z) of `grid` (N, Do, Ho, Wo, 3): bilinear (trilinear for
    volumes), nearest or bicubic (2-d); zeros, border or reflection padding."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    nd = input.dim() - 2
    if grid.dim() != input.dim() or grid.shape[-1] != nd or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension and the same batch "
                           f"size as input, but got grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and nd == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    align_corners = bool(align_corners)
    n, c = input.shape[:2]
    sizes = list(reversed(input.shape[2:]))  # (W, H[, D]): the order of the grid's coordinates
    out_shape = tuple(grid.shape[1:-1])
    points = 1
    for o in out_shape:
        points *= o
    coords = [_unnormalize(grid[..., i], sizes[i], align_corners) for i in range(nd)]

    def tap(positions, weight):
        """weight * input at integer `positions` (one per coordinate); zero outside."""
        if mode == "bicubic":
            # Each bicubic tap gets the padding mode on its own, as in PyTorch.
            positions = [_apply_padding(p, size, padding_mode, align_corners, False)
                         for p, size in zip(positions, sizes)]
        valid = None
        flat = None
        for p, size in reversed(list(zip(positions, sizes))):  # slowest-varying coordinate first
            inside = (p >= 0) & (p <= size - 1)
            valid = inside if valid is None else valid & inside
            clamped = E.where(inside, p, 0.0)  # NaN or outside: any index in range (weight 0)
            flat = clamped if flat is None else flat * size + clamped
        index = flat.long().reshape(n, 1, points).expand(n, c, points).contiguous()
        values = K.take_along_planes(input, index).reshape((n, c) + out_shape)
        return values * (weight * valid).unsqueeze(1)

    if mode == "bicubic":
        ix, iy = coords
        x0, y0 = ix.floor(), iy.floor()
        wx = _cubic_coefficients(ix - x0)
        wy = _cubic_coefficients(iy - y0)
        total = None
        for i in range(4):
            for j in range(4):
                term = tap([x0 + (j - 1), y0 + (i - 1)], wx[j] * wy[i])
                total = term if total is None else total + term
        return total
    coords = [_apply_padding(p, size, padding_mode, align_corners, nd == 3) for p, size in zip(coords, sizes)]
    if nd == 3 and padding_mode == "zeros" and mode == "bilinear":
        # PyTorch's scalar volume kernel casts a non-finite corner to an index outside the
        # volume, so such a point reads nothing (0); the image kernel's weights give NaN.
        coords = [E.where(p.isfinite(), p, -2.0) for p in coords]
    if mode == "nearest":
        # Weights of 1 that still depend on the grid (a zero gradient flows back): PyTorch's
        # result requires grad when the grid does, and grid.grad is zeros, not None.
        link = E.where(coords[0].isfinite(), coords[0], 0.0) * 0.0
        return tap([p.round() for p in coords], link + 1.0)
    lows = [p.floor() for p in coords]
    fracs = [p - lo for p, lo in zip(coords, lows)]
    total = None
    for corner in range(1 << nd):  # every corner of the cell around each point
        positions, weight = [], None
        for d in range(nd):
            upper = (corner >> d) & 1
            positions.append(lows[d] + upper)
            w = fracs[d] if upper else 1 - fracs[d]
            weight = w if weight is None else weight * w
        term = tap(positions, weight)
        total = term if total is None else total + term
    return total


# ATen's grid_sampler, which autocast's lists name (CPU: float32; CUDA: the widest input
# dtype): a composite op under that name.
def _marked(sample):
    """`sample` with its result marked: PyTorch's backward kernels of grid_sample (input
    and grid gradients) add with atomics on CUDA."""
    def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
        out = sample(input, grid, mode, padding_mode, align_corners)
        return nondeterministic_backward(out, f"grid_sampler_{input.dim() - 2}d_backward_cuda")
    grid_sample.__doc__ = sample.__doc__
    return grid_sample


grid_sample = through_composite_op("grid_sampler", _marked(grid_sample))
