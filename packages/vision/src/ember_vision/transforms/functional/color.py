"""Colour and filter functional transforms: brightness, contrast, saturation, hue, gamma,
sharpness, greyscale, Gaussian blur, and the photometric operations of AutoAugment."""
from . import _pil, _tensor_color as F_t
from ._modes import check_image, is_tensor
from .conversion import pil_to_tensor, to_pil_image

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue", "adjust_gamma", "adjust_sharpness",
           "to_grayscale", "rgb_to_grayscale", "gaussian_blur", "invert", "posterize", "solarize", "autocontrast",
           "equalize"]


def adjust_brightness(img, brightness_factor):
    """Scale brightness: 0 black, 1 unchanged, 2 twice as bright."""
    check_image(img)
    return F_t.adjust_brightness(img, brightness_factor) if is_tensor(img) else \
        _pil.adjust_brightness(img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    """Scale contrast: 0 solid grey, 1 unchanged."""
    check_image(img)
    return F_t.adjust_contrast(img, contrast_factor) if is_tensor(img) else \
        _pil.adjust_contrast(img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    """Scale saturation: 0 greyscale, 1 unchanged."""
    check_image(img)
    return F_t.adjust_saturation(img, saturation_factor) if is_tensor(img) else \
        _pil.adjust_saturation(img, saturation_factor)


def adjust_hue(img, hue_factor):
    """Rotate the hue by ``hue_factor`` turns, in [-0.5, 0.5]."""
    check_image(img)
    return F_t.adjust_hue(img, hue_factor) if is_tensor(img) else _pil.adjust_hue(img, hue_factor)


def adjust_gamma(img, gamma, gain=1):
    """Gamma correction ``gain * x ** gamma`` on [0, 1] intensities."""
    check_image(img)
    return F_t.adjust_gamma(img, gamma, gain) if is_tensor(img) else _pil.adjust_gamma(img, gamma, gain)


def adjust_sharpness(img, sharpness_factor):
    """Sharpen (>1) or blur (<1)."""
    check_image(img)
    return F_t.adjust_sharpness(img, sharpness_factor) if is_tensor(img) else \
        _pil.adjust_sharpness(img, sharpness_factor)


def to_grayscale(img, num_output_channels=1):
    """A PIL image in greyscale, with 1 or 3 channels."""
    if not _pil.is_pil_image(img):
        raise TypeError("Input should be PIL Image")
    return _pil.to_grayscale(img, num_output_channels)


def rgb_to_grayscale(img, num_output_channels=1):
    """Greyscale (ITU-R 601-2 luma), with 1 or 3 channels; PIL or tensor."""
    if not is_tensor(img):
        return _pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


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
    if not is_tensor(img):
        if not _pil.is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    output = F_t.gaussian_blur(t_img, kernel_size, sigma)
    if not is_tensor(img):
        output = to_pil_image(output, mode=img.mode)
    return output


def invert(img):
    """Invert the colours."""
    check_image(img)
    return F_t.invert(img) if is_tensor(img) else _pil.invert(img)


def posterize(img, bits):
    """Keep the ``bits`` most significant bits of each channel (0-8)."""
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    check_image(img)
    return F_t.posterize(img, bits) if is_tensor(img) else _pil.posterize(img, bits)


def solarize(img, threshold):
    """Invert the pixels at or above ``threshold``."""
    check_image(img)
    return F_t.solarize(img, threshold) if is_tensor(img) else _pil.solarize(img, threshold)


def autocontrast(img):
    """Stretch each channel's range to the full range."""
    check_image(img)
    return F_t.autocontrast(img) if is_tensor(img) else _pil.autocontrast(img)


def equalize(img):
    """Equalise the histogram (uint8 tensors, or PIL images)."""
    check_image(img)
    return F_t.equalize(img) if is_tensor(img) else _pil.equalize(img)
