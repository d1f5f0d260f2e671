"""Geometric functional transforms: resize, crop, pad, flip, rotate, affine, perspective."""
import math
import numbers
import warnings

import numpy as np

from . import _pil, _tensor_geometry as F_t
from ._modes import PIL_MODES, InterpolationMode, as_interpolation_mode, check_image, is_tensor
from .conversion import get_dimensions, pil_to_tensor, to_pil_image

__all__ = ["resize", "pad", "crop", "center_crop", "resized_crop", "hflip", "vflip", "five_crop", "ten_crop", "rotate",
           "affine", "perspective", "elastic_transform"]


def _compute_resized_output_size(image_size, size, max_size=None, allow_size_none=False):
    h, w = image_size
    short, long = (w, h) if w <= h else (h, w)
    if size is None:
        if not allow_size_none:
            raise ValueError("This should never happen!!")
        if not isinstance(max_size, int):
            raise ValueError(f"max_size must be an integer when size is None, but got {max_size} instead.")
        new_short, new_long = int(max_size * short / long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    elif len(size) == 1:
        requested_new_short = size if isinstance(size, int) else size[0]
        new_short, new_long = requested_new_short, int(requested_new_short * long / short)
        if max_size is not None:
            if max_size <= requested_new_short:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                                 f"smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size``: ``[h, w]``, or one number for the shorter edge (keeping the aspect ratio).

    Args:
        img: PIL image or tensor (..., H, W).
        size: sequence ``(h, w)``, or int / one-element sequence for the shorter edge.
        interpolation: an ``InterpolationMode`` (or PIL constant).
        max_size: upper bound of the longer edge when ``size`` is one number.
        antialias: antialias when downsampling tensors (PIL always does).
    """
    interpolation = as_interpolation_mode(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in (1, 2):
            raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element "
                             "tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
    _, image_height, image_width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size, allow_size_none=True)
    if [image_height, image_width] == output_size:
        return img
    if not is_tensor(img):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.")
        return _pil.resize(img, size=output_size, interpolation=PIL_MODES[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad on every side: ``padding`` int, ``(left/right, top/bottom)`` or ``(l, t, r, b)``;
    ``padding_mode`` constant (with ``fill``), edge, reflect or symmetric."""
    check_image(img)
    if is_tensor(img):
        return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return _pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img, top, left, height, width):
    """The box with top-left corner (top, left) and size (height, width)."""
    check_image(img)
    if is_tensor(img):
        return F_t.crop(img, top, left, height, width)
    return _pil.crop(img, top, left, height, width)


def center_crop(img, output_size):
    """The central ``output_size`` (int or (h, w)) crop, padding with zeros if the image is smaller."""
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [(crop_width - image_width) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height) // 2 if crop_height > image_height else 0,
                        (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
                        (crop_height - image_height + 1) // 2 if crop_height > image_height else 0]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    """``crop`` then ``resize`` to ``size``."""
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img):
    """Mirror left-right."""
    check_image(img)
    return F_t.hflip(img) if is_tensor(img) else _pil.hflip(img)


def vflip(img):
    """Mirror top-bottom."""
    check_image(img)
    return F_t.vflip(img) if is_tensor(img) else _pil.vflip(img)


def five_crop(img, size):
    """The four corner crops and the central crop: ``(tl, tr, bl, br, center)``."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    return tl, tr, bl, br, center_crop(img, [crop_height, crop_width])


def ten_crop(img, size, vertical_flip=False):
    """``five_crop`` of the image and of its flip (horizontal, or vertical if asked)."""
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first_five + five_crop(img, size)


def _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=True):
    # The affine map is T * C * R * S * Sh * C^-1 (translate, centre, rotate-scale-shear);
    # the inverse, output -> input, is what image samplers need.
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        matrix = [x / scale for x in [d, -b, 0.0, -c, a, 0.0]]
        matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
        matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
        matrix[2] += cx
        matrix[5] += cy
    else:
        matrix = [a * scale, b * scale, 0.0, c * scale, d * scale, 0.0]
        matrix[2] += matrix[0] * (-cx) + matrix[1] * (-cy)
        matrix[5] += matrix[3] * (-cx) + matrix[4] * (-cy)
        matrix[2] += cx + tx
        matrix[5] += cy + ty
    return matrix


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (default: the image centre)."""
    interpolation = as_interpolation_mode(interpolation)
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not is_tensor(img):
        return _pil.rotate(img, angle=angle, interpolation=PIL_MODES[interpolation], expand=expand, center=center,
                            fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix=matrix, interpolation=interpolation.value, expand=expand, fill=fill)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """Rotate by ``angle``, translate by ``translate`` pixels, scale, shear (degrees), about ``center``."""
    interpolation = as_interpolation_mode(interpolation)
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, height, width = get_dimensions(img)
    if not is_tensor(img):
        # PIL's centre has no half-pixel offset: that keeps a 90-degree rotation aligned with rot90.
        center = [width * 0.5, height * 0.5] if center is None else center
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return _pil.affine(img, matrix=matrix, interpolation=PIL_MODES[interpolation], fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, angle, [1.0 * t for t in translate], scale, shear)
    return F_t.affine(img, matrix=matrix, interpolation=interpolation.value, fill=fill)


def _get_perspective_coeffs(startpoints, endpoints):
    # The 8 coefficients mapping each end point to its start point: an 8x8 linear system,
    # solved in float64 and rounded to float32 as torchvision does.
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} startpoints and "
                         f"{len(endpoints)} endpoints.")
    a_matrix = np.zeros((8, 8), dtype=np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a_matrix[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a_matrix[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b_matrix = np.array(startpoints, dtype=np.float64).reshape(8)
    return np.linalg.lstsq(a_matrix, b_matrix, rcond=None)[0].astype(np.float32).tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Map the four ``startpoints`` (top-left, top-right, bottom-right, bottom-left corners
    ``[x, y]``) of the image to ``endpoints``."""
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    interpolation = as_interpolation_mode(interpolation)
    if not is_tensor(img):
        return _pil.perspective(img, coeffs, interpolation=PIL_MODES[interpolation], fill=fill)
    return F_t.perspective(img, coeffs, interpolation=interpolation.value, fill=fill)


def elastic_transform(img, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Move each pixel by ``displacement`` (1, H, W, 2), given in grid_sample's normalised
    coordinates (see ``ElasticTransform``); PIL images are warped as tensors, as torchvision does."""
    interpolation = as_interpolation_mode(interpolation)
    t_img = img if is_tensor(img) else pil_to_tensor(img)
    shape = (1,) + tuple(t_img.shape[-2:]) + (2,)
    if tuple(displacement.shape) != shape:
        raise ValueError(f"Argument displacement shape should be {shape}, but given {tuple(displacement.shape)}")
    output = F_t.elastic_transform(t_img, displacement, interpolation=interpolation.value, fill=fill)
    return output if is_tensor(img) else to_pil_image(output, mode=img.mode)
