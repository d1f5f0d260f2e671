"""torchvision's ``transforms.functional``: each function takes a PIL image or an ember
tensor image (..., C, H, W) and does what torchvision does to that kind of image (Pillow
for PIL images, tensor arithmetic for tensors)."""
import math
import numbers
import sys
import warnings
from enum import Enum

import numpy as np
from PIL import Image

import ember_tensor as torch

from . import _functional_pil as F_pil
from . import _functional_tensor as F_t

__all__ = ["InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
           "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize", "resize", "pad", "crop",
           "center_crop", "resized_crop", "hflip", "vflip", "five_crop", "ten_crop", "adjust_brightness",
           "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate", "affine", "perspective",
           "to_grayscale", "rgb_to_grayscale", "erase", "gaussian_blur", "invert", "posterize", "solarize",
           "adjust_sharpness", "autocontrast", "equalize"]


class InterpolationMode(Enum):
    """Interpolation methods, by torchvision's names (the value is the tensor path's mode)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    # PIL only
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


PIL_MODES = {InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.NEAREST_EXACT: Image.NEAREST,
             InterpolationMode.BILINEAR: Image.BILINEAR, InterpolationMode.BICUBIC: Image.BICUBIC,
             InterpolationMode.BOX: Image.BOX, InterpolationMode.HAMMING: Image.HAMMING,
             InterpolationMode.LANCZOS: Image.LANCZOS}
_PIL_TO_MODE = {Image.NEAREST: InterpolationMode.NEAREST, Image.BILINEAR: InterpolationMode.BILINEAR,
                Image.BICUBIC: InterpolationMode.BICUBIC, Image.BOX: InterpolationMode.BOX,
                Image.HAMMING: InterpolationMode.HAMMING, Image.LANCZOS: InterpolationMode.LANCZOS}


def _interpolation(interpolation):
    # torchvision still accepts PIL's integer constants.
    if isinstance(interpolation, int):
        return _PIL_TO_MODE[interpolation]
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant")
    return interpolation


def _is_tensor(img):
    return isinstance(img, torch.Tensor)


def _check_image(img):
    if not _is_tensor(img) and not F_pil.is_pil_image(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image or tensor.

    >>> import ember_tensor as torch
    >>> get_dimensions(torch.zeros(3, 4, 5))
    [3, 4, 5]
    """
    return F_t.get_dimensions(img) if _is_tensor(img) else F_pil.get_dimensions(img)


def get_image_size(img):
    """``[width, height]``."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    """The number of channels."""
    return get_dimensions(img)[0]


_MODE_TO_NPTYPE = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}


def to_tensor(pic):
    """A PIL image or ndarray (H, W, C) as a float tensor (C, H, W) in [0, 1] (uint8 is divided
    by 255; other dtypes keep their values).

    >>> import numpy as np
    >>> to_tensor(np.full((2, 2, 3), 255, np.uint8)).shape
    torch.Size([3, 2, 2])
    """
    if not (F_pil.is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        img = torch.from_numpy(np.ascontiguousarray(pic.transpose((2, 0, 1))))
        return img.to(torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img
    array = np.array(pic, _MODE_TO_NPTYPE.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        array = 255 * array
    array = array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    img = torch.from_numpy(np.ascontiguousarray(array.transpose((2, 0, 1))))
    return img.to(torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img


def pil_to_tensor(pic):
    """A PIL image as a tensor (C, H, W) of its own dtype (uint8 for RGB/L), not rescaled."""
    if not F_pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = np.array(pic, copy=True)
    array = array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))
    return torch.from_numpy(np.ascontiguousarray(array.transpose((2, 0, 1))))


def _image_from_array(array, mode):
    # Pillow 11.3 deprecated fromarray's mode argument; frombuffer still reads the raw bytes
    # in the requested mode, which is what torchvision relies on.
    inferred = Image.fromarray(array)
    if inferred.mode == mode:
        return inferred
    array = np.ascontiguousarray(array)
    return Image.frombuffer(mode, (array.shape[1], array.shape[0]), array.tobytes(), "raw", mode, 0, 1)


def to_pil_image(pic, mode=None):
    """A tensor (C, H, W) or ndarray (H, W, C) as a PIL image; float tensors are scaled by 255."""
    if _is_tensor(pic):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.detach().cpu().numpy()
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        npimg = npimg[:, :, 0]
        expected_mode = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16", np.dtype(np.int32): "I",
                         np.dtype(np.float32): "F"}.get(npimg.dtype)
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {npimg.dtype}. Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        if mode is not None and mode != "LA":
            raise ValueError("Only modes ['LA'] are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        if mode is not None and mode not in ("RGBA", "CMYK", "RGBX"):
            raise ValueError("Only modes ['RGBA', 'CMYK', 'RGBX'] are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        if mode is not None and mode not in ("RGB", "YCbCr", "HSV"):
            raise ValueError("Only modes ['RGB', 'YCbCr', 'HSV'] are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    return _image_from_array(npimg, mode)


def convert_image_dtype(image, dtype=torch.float):
    """Convert a tensor image to ``dtype``, rescaling its values (uint8 255 <-> float 1.0)."""
    if not _is_tensor(image):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def normalize(tensor, mean, std, inplace=False):
    """``(tensor - mean) / std`` per channel, on a float tensor (..., C, H, W).

    >>> import ember_tensor as torch
    >>> normalize(torch.ones(3, 1, 1), [0.5] * 3, [0.5] * 3).flatten().tolist()
    [1.0, 1.0, 1.0]
    """
    if not _is_tensor(tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return (tensor - mean) / std


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
    interpolation = _interpolation(interpolation)
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
    if not _is_tensor(img):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.")
        return F_pil.resize(img, size=output_size, interpolation=PIL_MODES[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad on every side: ``padding`` int, ``(left/right, top/bottom)`` or ``(l, t, r, b)``;
    ``padding_mode`` constant (with ``fill``), edge, reflect or symmetric."""
    _check_image(img)
    if _is_tensor(img):
        return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img, top, left, height, width):
    """The box with top-left corner (top, left) and size (height, width)."""
    _check_image(img)
    if _is_tensor(img):
        return F_t.crop(img, top, left, height, width)
    return F_pil.crop(img, top, left, height, width)


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
    _check_image(img)
    return F_t.hflip(img) if _is_tensor(img) else F_pil.hflip(img)


def vflip(img):
    """Mirror top-bottom."""
    _check_image(img)
    return F_t.vflip(img) if _is_tensor(img) else F_pil.vflip(img)


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


def adjust_brightness(img, brightness_factor):
    """Scale brightness: 0 black, 1 unchanged, 2 twice as bright."""
    _check_image(img)
    return F_t.adjust_brightness(img, brightness_factor) if _is_tensor(img) else \
        F_pil.adjust_brightness(img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Scale contrast: 0 solid grey, 1 unchanged."""
    _check_image(img)
    return F_t.adjust_contrast(img, contrast_factor) if _is_tensor(img) else \
        F_pil.adjust_contrast(img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Scale saturation: 0 greyscale, 1 unchanged."""
    _check_image(img)
    return F_t.adjust_saturation(img, saturation_factor) if _is_tensor(img) else \
        F_pil.adjust_saturation(img, saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue by ``hue_factor`` turns, in [-0.5, 0.5]."""
    _check_image(img)
    return F_t.adjust_hue(img, hue_factor) if _is_tensor(img) else F_pil.adjust_hue(img, hue_factor)


def adjust_gamma(img, gamma, gain=1):
    """Gamma correction ``gain * x ** gamma`` on [0, 1] intensities."""
    _check_image(img)
    return F_t.adjust_gamma(img, gamma, gain) if _is_tensor(img) else F_pil.adjust_gamma(img, gamma, gain)


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
    interpolation = _interpolation(interpolation)
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not _is_tensor(img):
        return F_pil.rotate(img, angle=angle, interpolation=PIL_MODES[interpolation], expand=expand, center=center,
                            fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix=matrix, interpolation=interpolation.value, expand=expand, fill=fill)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    """Rotate by ``angle``, translate by ``translate`` pixels, scale, shear (degrees), about ``center``."""
    interpolation = _interpolation(interpolation)
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
    if not _is_tensor(img):
        # PIL's centre has no half-pixel offset: that keeps a 90-degree rotation aligned with rot90.
        center = [width * 0.5, height * 0.5] if center is None else center
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return F_pil.affine(img, matrix=matrix, interpolation=PIL_MODES[interpolation], fill=fill)
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
    interpolation = _interpolation(interpolation)
    if not _is_tensor(img):
        return F_pil.perspective(img, coeffs, interpolation=PIL_MODES[interpolation], fill=fill)
    return F_t.perspective(img, coeffs, interpolation=interpolation.value, fill=fill)


def to_grayscale(img, num_output_channels=1):
    """A PIL image in greyscale, with 1 or 3 channels."""
    if not F_pil.is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return F_pil.to_grayscale(img, num_output_channels)


def rgb_to_grayscale(img, num_output_channels=1):
    """Greyscale (ITU-R 601-2 luma), with 1 or 3 channels; PIL or tensor."""
    if not _is_tensor(img):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def erase(img, i, j, h, w, v, inplace=False):
    """Overwrite the box at (i, j) of (h, w) of a tensor image with ``v``."""
    if not _is_tensor(img):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def gaussian_blur(img, kernel_size, sigma=None):
    """Gaussian blur with an odd ``kernel_size`` (int or (kx, ky)) and ``sigma`` (default
    ``0.3 * ((k - 1) * 0.5 - 1) + 0.8``); PIL images are blurred as tensors, as torchvision does."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    t_img = img
    if not _is_tensor(img):
        if not F_pil.is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    output = F_t.gaussian_blur(t_img, kernel_size, sigma)
    if not _is_tensor(img):
        output = to_pil_image(output, mode=img.mode)
    return output


def invert(img):
    """Invert the colours."""
    _check_image(img)
    return F_t.invert(img) if _is_tensor(img) else F_pil.invert(img)


def posterize(img, bits):
    """Keep the ``bits`` most significant bits of each channel (0-8)."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    _check_image(img)
    return F_t.posterize(img, bits) if _is_tensor(img) else F_pil.posterize(img, bits)


def solarize(img, threshold):
    """Invert the pixels at or above ``threshold``."""
    _check_image(img)
    return F_t.solarize(img, threshold) if _is_tensor(img) else F_pil.solarize(img, threshold)


def adjust_sharpness(img, sharpness_factor):
    """Sharpen (>1) or blur (<1)."""
    _check_image(img)
    return F_t.adjust_sharpness(img, sharpness_factor) if _is_tensor(img) else \
        F_pil.adjust_sharpness(img, sharpness_factor)


def autocontrast(img):
    """Stretch each channel's range to the full range."""
    _check_image(img)
    return F_t.autocontrast(img) if _is_tensor(img) else F_pil.autocontrast(img)


def equalize(img):
    """Equalise the histogram (uint8 tensors, or PIL images)."""
    _check_image(img)
    return F_t.equalize(img) if _is_tensor(img) else F_pil.equalize(img)
