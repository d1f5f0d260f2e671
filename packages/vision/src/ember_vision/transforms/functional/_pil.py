"""PIL images: each function is the Pillow call that torchvision makes, so results are
Pillow's, pixel for pixel."""
import numbers

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

__all__ = ["is_pil_image", "get_dimensions", "hflip", "vflip", "crop", "resize", "pad", "rotate", "affine", "perspective",
           "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma",
           "adjust_sharpness", "to_grayscale", "invert", "posterize", "solarize", "autocontrast", "equalize"]


def is_pil_image(img):
    """Whether ``img`` is a PIL image."""
    return isinstance(img, Image.Image)


def get_dimensions(img):
    """``[channels, height, width]`` of a PIL image."""
    channels = len(img.getbands()) if hasattr(img, "getbands") else img.channels
    width, height = img.size
    return [channels, height, width]


def hflip(img):
    """Mirror left-right."""
    return img.transpose(Image.FLIP_LEFT_RIGHT)


def vflip(img):
    """Mirror top-bottom."""
    return img.transpose(Image.FLIP_TOP_BOTTOM)


def crop(img, top, left, height, width):
    """The box at (top, left) of (height, width); outside the image is black."""
    return img.crop((left, top, left + width, top + height))


def resize(img, size, interpolation):
    """Resize to ``size = [h, w]`` with a PIL resampling filter."""
    return img.resize(tuple(size[::-1]), interpolation)


def _parse_fill(fill, img, name="fillcolor"):
    num_channels = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            raise ValueError(f"The number of elements in 'fill' does not match the number of channels of the "
                             f"image ({len(fill)} != {num_channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad by ``padding`` (one int, (lr, tb) or (l, t, r, b)) with ``fill`` or edge/reflect/symmetric."""
    if isinstance(padding, numbers.Number):
        padding = (padding,) * 4
    padding = list(padding)
    if len(padding) == 1:
        padding = padding * 4
    if len(padding) == 2:
        padding = padding * 2
    left, top, right, bottom = padding
    if padding_mode == "constant":
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=(left, top, right, bottom), **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=(left, top, right, bottom), **opts)
    mode = {"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
    array = np.asarray(img)
    # Negative padding crops.
    if min(padding) < 0:
        array = array[max(-top, 0):array.shape[0] - max(-bottom, 0), max(-left, 0):array.shape[1] - max(-right, 0)]
        left, top, right, bottom = (max(p, 0) for p in (left, top, right, bottom))
    widths = ((top, bottom), (left, right)) + (((0, 0),) if array.ndim == 3 else ())
    out = Image.fromarray(np.pad(array, widths, mode))
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


def rotate(img, angle, interpolation=Image.NEAREST, expand=False, center=None, fill=None):
    """Rotate counter-clockwise by ``angle`` degrees about ``center``."""
    return img.rotate(angle, interpolation, expand, center, **_parse_fill(fill, img))


def affine(img, matrix, interpolation=Image.NEAREST, fill=None):
    """Apply the inverse affine ``matrix`` (6 numbers, output -> input) with PIL."""
    output_size = img.size
    return img.transform(output_size, Image.AFFINE, matrix, interpolation, **_parse_fill(fill, img))


def perspective(img, perspective_coeffs, interpolation=Image.BICUBIC, fill=None):
    """Apply the perspective map of 8 coefficients (output -> input) with PIL."""
    return img.transform(img.size, Image.PERSPECTIVE, perspective_coeffs, interpolation, **_parse_fill(fill, img))


def adjust_brightness(img, brightness_factor):
    """Blend with black: 0 black, 1 the image, 2 twice as bright."""
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Blend with the mean grey level."""
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image."""
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img, hue_factor):
    """Shift the hue by ``hue_factor`` of a full turn, in [-0.5, 0.5], through HSV."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    # uint8 arithmetic wraps around, which is the rotation of the hue circle we want.
    with np.errstate(over="ignore"):
        np_h += np.uint8(hue_factor * 255)
    h = Image.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(input_mode)


def adjust_gamma(img, gamma, gain=1.0):
    """``gain * 255 * (x / 255) ** gamma`` by a lookup table."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    input_mode = img.mode
    img = img.convert("RGB")
    gamma_map = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
    return img.point(gamma_map).convert(input_mode)


def adjust_sharpness(img, sharpness_factor):
    """Blend with a smoothed image: 0 blurred, 1 the image, 2 sharpened."""
    return ImageEnhance.Sharpness(img).enhance(sharpness_factor)


def to_grayscale(img, num_output_channels):
    """Luma (ITU-R 601-2) as mode L, or replicated to 3 channels."""
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        img = img.convert("L")
        np_img = np.array(img, dtype=np.uint8)
        return Image.fromarray(np.dstack([np_img, np_img, np_img]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img):
    """255 - x."""
    return ImageOps.invert(img)


def posterize(img, bits):
    """Keep the ``bits`` high bits of each channel."""
    return ImageOps.posterize(img, bits)


def solarize(img, threshold):
    """Invert the pixels at or above ``threshold``."""
    return ImageOps.solarize(img, threshold)


def autocontrast(img):
    """Stretch each channel to the full range."""
    return ImageOps.autocontrast(img)


def equalize(img):
    """Equalise the histogram."""
    return ImageOps.equalize(img)


