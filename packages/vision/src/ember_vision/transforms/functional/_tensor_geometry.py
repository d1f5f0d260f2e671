"""Geometric kernels on tensor images (..., C, H, W), with ember ops: ``F.interpolate`` for
resizing, ``F.grid_sample`` on a generated grid for affine, rotation and perspective maps."""
import math

import ember_nn.functional as F
import ember_tensor as torch

from ._tensor_common import cast_squeeze_in as _cast_squeeze_in, cast_squeeze_out as _cast_squeeze_out, get_dimensions

__all__ = ["hflip", "vflip", "crop", "pad", "resize", "affine", "compute_affine_output_size", "rotate", "perspective",
           "elastic_transform"]


def hflip(img):
    """Mirror left-right (the last dimension)."""
    return img.flip(-1)


def vflip(img):
    """Mirror top-bottom."""
    return img.flip(-2)


def crop(img, top, left, height, width):
    """The box at (top, left) of (height, width); the part outside the image is zero."""
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding = [max(-left + min(0, right), 0), max(-top + min(0, bottom), 0), max(right - max(w, left), 0),
                   max(bottom - max(h, top), 0)]
        inside = img[..., max(top, 0):bottom, max(left, 0):right]
        return pad(inside, padding, fill=0)
    return img[..., top:bottom, left:right]


def _pad_symmetric(img, padding):
    # Mirror including the edge pixel: index arithmetic, as ember's pad has no "symmetric" mode.
    left, right, top, bottom = padding
    h, w = img.shape[-2], img.shape[-1]

    def indices(n, before, after):
        idx = list(range(-before, 0)) + list(range(n)) + list(range(n, n + after))
        period = 2 * n
        out = []
        for i in idx:
            i %= period
            out.append(i if i < n else period - 1 - i)
        return torch.tensor(out, dtype=torch.int64, device=img.device)

    img = torch.index_select(img, -1, indices(w, left, right))
    return torch.index_select(img, -2, indices(h, top, bottom))


def _parse_pad_padding(padding):
    if isinstance(padding, int):
        pad_left = pad_right = pad_top = pad_bottom = padding
    elif len(padding) == 1:
        pad_left = pad_right = pad_top = pad_bottom = padding[0]
    elif len(padding) == 2:
        pad_left = pad_right = padding[0]
        pad_top = pad_bottom = padding[1]
    else:
        pad_left, pad_top, pad_right, pad_bottom = padding
    return [pad_left, pad_right, pad_top, pad_bottom]


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad the last two dimensions; ``padding_mode`` constant, edge, reflect or symmetric."""
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_pad_padding(padding)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        if min(p) < 0:
            raise ValueError("Padding can not be negative for symmetric padding_mode")
        return _pad_symmetric(img, p)
    need_squeeze = img.ndim < 4
    if need_squeeze:
        img = img.unsqueeze(dim=0)
    out_dtype = img.dtype
    need_cast = padding_mode != "constant" and img.dtype not in (torch.float32, torch.float64)
    if need_cast:
        img = img.to(torch.float32)
    if padding_mode == "constant":
        img = F.pad(img, p, mode="constant", value=float(fill or 0))
    else:
        img = F.pad(img, p, mode=padding_mode)
    if need_squeeze:
        img = img.squeeze(dim=0)
    return img.to(out_dtype) if need_cast else img


def resize(img, size, interpolation="bilinear", antialias=True):
    """Resize the last two dimensions to ``size = [h, w]`` by ``F.interpolate``; integer images
    are resampled in float32 and rounded back."""
    if isinstance(size, tuple):
        size = list(size)
    if antialias and interpolation not in ("bilinear", "bicubic"):
        antialias = False  # antialiasing is defined for the two smooth filters only
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [torch.float32, torch.float64])
    align_corners = False if interpolation in ("bilinear", "bicubic") else None
    img = F.interpolate(img, size=size, mode=interpolation, align_corners=align_corners, antialias=antialias)
    if interpolation == "bicubic" and out_dtype == torch.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def _gen_affine_grid(theta, w, h, ow, oh):
    # Pixel centres of the output in coordinates centred on the image, mapped by theta and
    # rescaled to grid_sample's [-1, 1] (align_corners=False).
    d = 0.5
    factory = {"dtype": theta.dtype, "device": theta.device}
    x_grid = torch.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, **factory)
    y_grid = torch.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, **factory)
    base_grid = torch.stack([x_grid.view(1, ow).expand(oh, ow), y_grid.view(oh, 1).expand(oh, ow),
                             torch.ones(oh, ow, **factory)], dim=-1)
    rescaled_theta = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], **factory)
    output_grid = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


def _apply_grid_transform(img, grid, mode, fill):
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        # A channel of ones marks where the sample came from inside the image.
        mask = torch.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype, device=img.device)
        img = torch.cat((img, mask), dim=1)
    img = F.grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :].expand(img.shape[0], img.shape[1] - 1, img.shape[2], img.shape[3])
        img = img[:, :-1, :, :]
        fill_list = list(fill) if isinstance(fill, (tuple, list)) else [float(fill)]
        fill_img = torch.tensor(fill_list, dtype=img.dtype, device=img.device).view(1, len(fill_list), 1, 1)
        fill_img = fill_img.expand(img.shape)
        if mode == "nearest":
            img = torch.where(mask < 0.5, fill_img, img)
        else:
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def affine(img, matrix, interpolation="nearest", fill=None):
    """Sample the image at the inverse affine ``matrix`` (6 numbers, centred coordinates)."""
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=img.shape[-1], h=img.shape[-2], ow=img.shape[-1], oh=img.shape[-2])
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def compute_affine_output_size(matrix, w, h):
    """The (width, height) that holds the whole image after the inverse affine ``matrix``
    (for ``rotate(expand=True)``), rounded as PIL does."""
    corners = [(-0.5 * w, -0.5 * h), (-0.5 * w, 0.5 * h), (0.5 * w, 0.5 * h), (0.5 * w, -0.5 * h)]
    xs = [matrix[0] * x + matrix[1] * y + matrix[2] for x, y in corners]
    ys = [matrix[3] * x + matrix[4] * y + matrix[5] for x, y in corners]
    tol = 1e-4  # truncate so that 1e-15 above an integer does not ceil to the next one

    def extent(values, half):
        low, high = min(values) + half, max(values) + half
        return math.ceil(math.trunc(high / tol) * tol) - math.floor(math.trunc(low / tol) * tol)
    return int(extent(xs, 0.5 * w)), int(extent(ys, 0.5 * h))


def rotate(img, matrix, interpolation="nearest", expand=False, fill=None):
    """Rotate by the inverse affine ``matrix``; ``expand`` grows the output to hold the whole image."""
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = compute_affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else torch.float32
    theta = torch.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _perspective_grid(coeffs, ow, oh, dtype, device):
    # PIL's rule (Geometry.c): x_in = (c0 x + c1 y + c2) / (c6 x + c7 y + 1), and so for y,
    # at output pixel centres, then rescaled to grid_sample's [-1, 1].
    factory = {"dtype": dtype, "device": device}
    theta1 = torch.tensor([[[coeffs[0], coeffs[1], coeffs[2]], [coeffs[3], coeffs[4], coeffs[5]]]], **factory)
    theta2 = torch.tensor([[[coeffs[6], coeffs[7], 1.0], [coeffs[6], coeffs[7], 1.0]]], **factory)
    d = 0.5
    x_grid = torch.linspace(d, ow * 1.0 + d - 1.0, steps=ow, **factory)
    y_grid = torch.linspace(d, oh * 1.0 + d - 1.0, steps=oh, **factory)
    base_grid = torch.stack([x_grid.view(1, ow).expand(oh, ow), y_grid.view(oh, 1).expand(oh, ow),
                             torch.ones(oh, ow, **factory)], dim=-1).view(1, oh * ow, 3)
    rescaled_theta1 = theta1.transpose(1, 2) / torch.tensor([0.5 * ow, 0.5 * oh], **factory)
    output_grid = base_grid.bmm(rescaled_theta1) / base_grid.bmm(theta2.transpose(1, 2)) - 1.0
    return output_grid.view(1, oh, ow, 2)


def perspective(img, perspective_coeffs, interpolation="bilinear", fill=None):
    """Sample the image through the perspective map of 8 coefficients (output -> input)."""
    dtype = img.dtype if img.is_floating_point() else torch.float32
    grid = _perspective_grid(perspective_coeffs, ow=img.shape[-1], oh=img.shape[-2], dtype=dtype, device=img.device)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def elastic_transform(img, displacement, interpolation="bilinear", fill=None):
    """Sample the image at the identity grid plus ``displacement`` (1, H, W, 2), in
    grid_sample's normalised coordinates."""
    h, w = img.shape[-2], img.shape[-1]
    ys = torch.linspace((-h + 1) / h, (h - 1) / h, steps=h, device=img.device)
    xs = torch.linspace((-w + 1) / w, (w - 1) / w, steps=w, device=img.device)
    identity = torch.stack([xs.view(1, w).expand(h, w), ys.view(h, 1).expand(h, w)], dim=-1).unsqueeze(0)
    return _apply_grid_transform(img, identity + displacement.to(img.device), interpolation, fill)
